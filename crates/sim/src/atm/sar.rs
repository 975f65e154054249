//! Segmentation at the sending end of an ATM path: each IP datagram, with its
//! encapsulation, becomes one AAL5 CPCS-PDU cut into cells (I.363.5), the last one marked
//! end-of-frame. The frame itself waits in a store while its cells are in the network;
//! cells name it by index, so a cell is a few plain bytes and nothing is allocated per cell.

use super::aal5;
use super::abr::RmCell;
use crate::net::Packet;

/// A cell: the header fields the simulator needs (the VC, the PTI's EFCI bit), what it
/// carries, where it is and whether its payload was hit.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// The VC: a flow's route, numbered flow · 2 + route.
    pub vc: u32,
    /// The channel of the VC's route the cell is on.
    pub hop: u32,
    pub payload: Payload,
    /// PTI EFCI = 1: a switch on the way was congested (ABR binary feedback).
    pub efci: bool,
    /// A bit error hit the payload; the frame will fail its CRC-32.
    pub errored: bool,
}

impl Cell {
    /// A cell leaving where its VC enters ATM (hop `hop`), unmarked and intact.
    pub fn new(vc: u32, hop: u32, payload: Payload) -> Self {
        Cell {
            vc,
            hop,
            payload,
            efci: false,
            errored: false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Payload {
    /// A piece of the frame in the store at index `frame`; `eom` (PTI AUU = 1) on its last.
    Frame { frame: u32, eom: bool },
    /// An ABR resource-management cell (PTI = 110), which belongs to no frame.
    Rm(RmCell),
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
