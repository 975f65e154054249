//! Segmentation at the sending end of an ATM path: each IP datagram, with its
//! encapsulation, becomes one AAL5 CPCS-PDU cut into cells (I.363.5), the last one marked
//! end-of-frame. The frame itself waits in a store while its cells are in the network;
//! cells name it by index, so a cell is a few plain bytes and nothing is allocated per cell.

use super::aal5;
use crate::net::Packet;

/// A cell of an AAL5 frame. The header fields the simulator needs: the VC, and the PTI's
/// AUU bit (end of frame); plus where the cell is and whether its payload was hit.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// The VC: a flow's route, numbered flow · 2 + route.
    pub vc: u32,
    /// The channel of the VC's route the cell is on.
    pub hop: u32,
    /// The frame in the store whose piece this is.
    pub frame: u32,
    /// PTI AUU = 1: the frame's last cell.
    pub eom: bool,
    /// A bit error hit the payload; the frame will fail its CRC-32.
    pub errored: bool,
}

struct Frame {
    packet: Option<Packet>,
    cells: u64,
    /// Cells of the frame still in the network (neither dropped nor reassembled).
    outstanding: u64,
}

/// Frames whose cells are in the network.
#[derive(Default)]
pub struct Frames {
    slots: Vec<Frame>,
    free: Vec<u32>,
    /// Frames whose last cell left the network without the frame being reassembled.
    pub lost: u64,
    pub delivered: u64,
}

impl Frames {
    /// Stores the datagram of an SDU of `sdu_bytes`; returns its index and cell count.
    pub fn insert(&mut self, packet: Packet, sdu_bytes: u64) -> (u32, u64) {
        let cells = aal5::cells(sdu_bytes);
        let frame = Frame {
            packet: Some(packet),
            cells,
            outstanding: cells,
        };
        let index = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = frame;
                i
            }
            None => {
                self.slots.push(frame);
                (self.slots.len() - 1) as u32
            }
        };
        (index, cells)
    }

    pub fn cells(&self, frame: u32) -> u64 {
        self.slots[frame as usize].cells
    }

    /// One of the frame's cells left the network (dropped, or taken by reassembly);
    /// `deliver`: reassembly passed the frame, so its datagram comes out.
    pub fn release(&mut self, frame: u32, deliver: bool) -> Option<Packet> {
        let slot = &mut self.slots[frame as usize];
        let packet = if deliver { slot.packet.take() } else { None };
        slot.outstanding -= 1;
        if slot.outstanding == 0 {
            if slot.packet.take().is_some() {
                self.lost += 1;
            }
            self.free.push(frame);
        }
        self.delivered += u64::from(packet.is_some());
        packet
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Segment;

    fn packet() -> Packet {
        Packet {
            flow: 0,
            route: 0,
            hop: 0,
            segment: Segment::data(0, 1460, 0, 0),
            piggyback: None,
            udp: None,
        }
    }

    #[test]
    fn a_frame_stays_stored_until_its_last_cell_leaves_the_network() {
        let mut frames = Frames::default();
        // 1500 bytes of IP + 8 of LLC/SNAP: 32 cells.
        let (f, cells) = frames.insert(packet(), 1508);
        assert_eq!(cells, 32);
        for _ in 0..31 {
            assert!(frames.release(f, false).is_none());
        }
        assert!(frames.release(f, true).is_some());
        assert_eq!((frames.delivered, frames.lost), (1, 0));
        // The slot is reused.
        assert_eq!(frames.insert(packet(), 1508).0, f);
    }

    #[test]
    fn a_frame_whose_cells_all_left_undelivered_is_lost() {
        let mut frames = Frames::default();
        let (f, _) = frames.insert(packet(), 40);
        assert!(frames.release(f, false).is_none());
        assert_eq!((frames.delivered, frames.lost), (0, 1));
    }
}
