//! AAL5 (ITU-T I.363.5): the CPCS-PDU around each frame, and its reassembly at the far end
//! of a VC. The SDU (the encapsulated IP datagram) is followed by 0–47 bytes of padding and
//! an 8-byte trailer (CPCS-UU, CPI, Length, CRC-32), so the PDU is a whole number of 48-byte
//! cell payloads; the last cell carries AUU = 1 in its PTI (I.361), the end of the frame.

/// Bytes in a cell: a 5-byte header and a 48-byte payload (I.361).
pub const CELL_BYTES: u64 = 53;
pub const CELL_PAYLOAD_BYTES: u64 = 48;
/// CPCS-UU (1) + CPI (1) + Length (2) + CRC-32 (4).
pub const TRAILER_BYTES: u64 = 8;

/// Cells of the CPCS-PDU that carries an SDU of `sdu_bytes`: ceil((SDU + 8) / 48).
pub fn cells(sdu_bytes: u64) -> u64 {
    (sdu_bytes + TRAILER_BYTES).div_ceil(CELL_PAYLOAD_BYTES)
}

/// Padding that brings SDU + trailer to a multiple of 48 bytes.
pub fn padding(sdu_bytes: u64) -> u64 {
    (CELL_PAYLOAD_BYTES - (sdu_bytes + TRAILER_BYTES) % CELL_PAYLOAD_BYTES) % CELL_PAYLOAD_BYTES
}

/// Per-VC reassembly: payloads are gathered until a cell with AUU = 1 arrives, and the PDU
/// is passed up only if its Length and CRC-32 check out. In the simulator a PDU checks out
/// when all its cells belong to one frame, none is missing and none was hit by an error.
/// A lost end-of-frame cell therefore merges the frame with the next one on the VC, and
/// the CRC fails for both (I.363.5; the reason PPD keeps the EOM cell).
#[derive(Debug, Default, Clone, Copy)]
pub struct Reassembly {
    /// The frame of the first cell gathered, while a PDU is open.
    first: Option<u32>,
    cells: u64,
    intact: bool,
}

impl Reassembly {
    /// Takes a cell of `frame` (`errored`: its payload was hit). At the end-of-frame cell
    /// returns whether the PDU passes, given that `frame` had `expected` cells.
    pub fn push(&mut self, frame: u32, errored: bool, eom: bool, expected: u64) -> Option<bool> {
        match self.first {
            None => {
                self.first = Some(frame);
                self.cells = 0;
                self.intact = true;
            }
            Some(f) if f != frame => self.intact = false,
            Some(_) => {}
        }
        self.cells += 1;
        self.intact &= !errored;
        if !eom {
            return None;
        }
        let passes = self.intact && self.cells == expected;
        self.first = None;
        Some(passes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pdu_pads_sdu_and_trailer_to_whole_cells() {
        // I.363.5: PAD = (48 − (L + 8) mod 48) mod 48. A 1500-byte datagram with LLC/SNAP
        // (1508 bytes) pads 20 bytes: 1508 + 20 + 8 = 1536 = 32 × 48.
        assert_eq!(padding(1508), 20);
        assert_eq!(cells(1508), 32);
        assert_eq!(
            (1508 + padding(1508) + TRAILER_BYTES) % CELL_PAYLOAD_BYTES,
            0
        );
        // Exactly 40 bytes of SDU fill one cell with its trailer.
        assert_eq!(padding(40), 0);
        assert_eq!(cells(40), 1);
        assert_eq!(cells(41), 2);
    }

    #[test]
    fn seed_001_segment_takes_43_cells_and_2279_wire_bytes() {
        // Seed 001 §3.2: a 2000-byte segment + 40 bytes of TCP/IP + 8 of LLC/SNAP
        // (RFC 2684 §5.1) + the AAL5 trailer takes 43 cells, 43 × 53 = 2279 bytes.
        let n = cells(2000 + 40 + 8);
        assert_eq!(n, 43);
        assert_eq!(n * CELL_BYTES, 2279);
    }

    #[test]
    fn reference_cell_count_table() {
        // models.md §1.3: IP datagram → cells for VC-mux (0), LLC/SNAP (8), LANE (16).
        for (ip, vcmux, llc, lane) in [
            (40, 1, 2, 2),
            (552, 12, 12, 12),
            (576, 13, 13, 13),
            (1480, 31, 32, 32),
            (1500, 32, 32, 32),
        ] {
            assert_eq!(
                [cells(ip), cells(ip + 8), cells(ip + 16)],
                [vcmux, llc, lane]
            );
        }
        assert_eq!(cells(9180 + 8), 192);
    }

    #[test]
    fn a_whole_frame_passes() {
        let mut r = Reassembly::default();
        assert_eq!(r.push(7, false, false, 3), None);
        assert_eq!(r.push(7, false, false, 3), None);
        assert_eq!(r.push(7, false, true, 3), Some(true));
    }

    #[test]
    fn one_lost_cell_loses_the_frame() {
        // I.363.5: the Length field no longer matches (and the CRC fails).
        let mut r = Reassembly::default();
        r.push(7, false, false, 3);
        assert_eq!(r.push(7, false, true, 3), Some(false));
        // The next frame is unaffected.
        r.push(8, false, false, 2);
        assert_eq!(r.push(8, false, true, 2), Some(true));
    }

    #[test]
    fn one_errored_cell_fails_the_crc() {
        let mut r = Reassembly::default();
        r.push(7, true, false, 2);
        assert_eq!(r.push(7, false, true, 2), Some(false));
    }

    #[test]
    fn a_lost_end_of_frame_cell_merges_two_frames_into_one_crc_failure() {
        // I.363.5 / models.md §1.2: frame 7 loses its AUU = 1 cell, so its cells and frame
        // 8's make one PDU, which fails; frame 8 is lost although all its cells arrived.
        let mut r = Reassembly::default();
        r.push(7, false, false, 2);
        assert_eq!(r.push(8, false, false, 2), None);
        assert_eq!(r.push(8, false, true, 2), Some(false));
        r.push(9, false, false, 2);
        assert_eq!(r.push(9, false, true, 2), Some(true));
    }
}
