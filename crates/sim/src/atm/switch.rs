//! An ATM switch's output-port cell buffer and the frame-aware discard policies of UBR
//! (models.md §2): plain drop-tail, Partial Packet Discard, and Early Packet Discard with
//! PPD as its fallback. The decision is taken as a cell arrives for the port, from the
//! number of cells waiting and the arriving VC's per-port state.

use crate::plan::{DiscardPlan, SwitchPlan};

/// Why a cell was not buffered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    /// The buffer was full.
    Full,
    /// EPD refused the frame at its first cell, and drops the rest of it.
    Early,
    /// PPD drops the rest of a frame that has already lost a cell.
    Partial,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Discarding {
    #[default]
    No,
    /// PPD: the rest of the frame but its end-of-frame cell.
    Rest,
    /// EPD: the whole frame, end-of-frame cell included.
    Frame,
}

#[derive(Debug, Default, Clone, Copy)]
struct VcState {
    /// A frame of this VC is under way (its last cell through the port was not the EOM).
    mid_frame: bool,
    discarding: Discarding,
}

pub struct Buffer {
    capacity: u64,
    discard: DiscardPlan,
    epd_threshold: u64,
    /// Per VC (indexed by the simulator's VC number).
    vcs: Vec<VcState>,
}

impl Buffer {
    pub fn new(plan: &SwitchPlan, vcs: usize) -> Self {
        Self {
            capacity: plan.buffer_cells,
            discard: plan.discard,
            epd_threshold: plan.epd_threshold_cells,
            vcs: vec![VcState::default(); vcs],
        }
    }

    /// Whether `queued` waiting cells fill the buffer.
    pub fn is_full(&self, queued: u64) -> bool {
        queued >= self.capacity
    }

    /// Decides on a cell of `vc` (`eom`: it ends its frame) arriving while `queued` cells
    /// wait in the buffer. Ok: buffer it.
    pub fn admit(&mut self, vc: usize, eom: bool, queued: u64) -> Result<(), Drop> {
        let full = self.is_full(queued);
        let state = &mut self.vcs[vc];
        let first = !state.mid_frame;
        state.mid_frame = !eom;
        match state.discarding {
            Discarding::Frame => {
                if eom {
                    state.discarding = Discarding::No;
                }
                return Err(Drop::Early);
            }
            Discarding::Rest if !eom => return Err(Drop::Partial),
            // PPD keeps the end-of-frame cell, if it fits, so reassembly resynchronises.
            Discarding::Rest => state.discarding = Discarding::No,
            Discarding::No => {}
        }
        // Romanow & Floyd 1995: EPD decides on a frame's first cell, against the threshold.
        if first && self.discard == DiscardPlan::Epd && queued >= self.epd_threshold {
            if !eom {
                state.discarding = Discarding::Frame;
            }
            return Err(Drop::Early);
        }
        if !full {
            return Ok(());
        }
        // A full buffer: drop-tail loses this cell only; PPD (and EPD, which falls back to
        // it) then drops the frame's later cells too.
        if !eom && self.discard != DiscardPlan::DropTail {
            state.discarding = Discarding::Rest;
        }
        Err(Drop::Full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FeedbackPlan;

    fn buffer(discard: DiscardPlan) -> Buffer {
        let plan = SwitchPlan {
            buffer_cells: 10,
            discard,
            epd_threshold_cells: 6,
            feedback: FeedbackPlan::None,
        };
        Buffer::new(&plan, 2)
    }

    /// Offers a frame of `cells` cells of VC 0 with `queued` cells waiting throughout;
    /// returns each cell's fate.
    fn frame(b: &mut Buffer, cells: usize, queued: impl Fn(usize) -> u64) -> Vec<Result<(), Drop>> {
        (0..cells)
            .map(|i| b.admit(0, i + 1 == cells, queued(i)))
            .collect()
    }

    #[test]
    fn drop_tail_drops_only_the_cells_that_find_the_buffer_full() {
        // Romanow & Floyd 1995: plain UBR is frame-blind; the frame's other cells still
        // cross the link as "dead" cells.
        let mut b = buffer(DiscardPlan::DropTail);
        let fates = frame(&mut b, 4, |i| if i == 1 { 10 } else { 3 });
        assert_eq!(fates, vec![Ok(()), Err(Drop::Full), Ok(()), Ok(())]);
    }

    #[test]
    fn ppd_drops_the_rest_of_a_damaged_frame_but_keeps_its_end() {
        // Armitage & Adams 1993 / Romanow & Floyd 1995: after a drop, every later cell of
        // the frame is discarded except the EOM, which ends the frame at the receiver.
        let mut b = buffer(DiscardPlan::Ppd);
        let fates = frame(&mut b, 5, |i| if i == 1 { 10 } else { 3 });
        let partial = Err(Drop::Partial);
        assert_eq!(
            fates,
            vec![Ok(()), Err(Drop::Full), partial, partial, Ok(())]
        );
        // The next frame is accepted again.
        assert_eq!(frame(&mut b, 2, |_| 3), vec![Ok(()), Ok(())]);
    }

    #[test]
    fn ppd_drops_the_end_of_frame_cell_when_it_does_not_fit() {
        // models.md §2: the EOM is then lost too, and reassembly merges two frames.
        let mut b = buffer(DiscardPlan::Ppd);
        let fates = frame(&mut b, 3, |i| if i == 0 { 3 } else { 10 });
        assert_eq!(fates, vec![Ok(()), Err(Drop::Full), Err(Drop::Full)]);
    }

    #[test]
    fn epd_refuses_a_whole_frame_at_its_first_cell_above_the_threshold() {
        // Romanow & Floyd 1995: the frame is dropped whole, EOM included, even though the
        // queue falls below the threshold meanwhile.
        let mut b = buffer(DiscardPlan::Epd);
        let early = Err(Drop::Early);
        assert_eq!(
            frame(&mut b, 3, |i| if i == 0 { 6 } else { 0 }),
            vec![early, early, early]
        );
        // A frame that began below the threshold is kept while it rises past it.
        assert_eq!(
            frame(&mut b, 3, |i| 5 + i as u64),
            vec![Ok(()), Ok(()), Ok(())]
        );
    }

    #[test]
    fn epd_falls_back_to_ppd_on_a_full_buffer() {
        let mut b = buffer(DiscardPlan::Epd);
        let fates = frame(&mut b, 4, |i| [5, 10, 10, 9][i]);
        assert_eq!(
            fates,
            vec![Ok(()), Err(Drop::Full), Err(Drop::Partial), Ok(())]
        );
    }

    #[test]
    fn vcs_are_judged_separately() {
        let mut b = buffer(DiscardPlan::Epd);
        // VC 0 starts a frame below the threshold, VC 1 above it.
        assert_eq!(b.admit(0, false, 5), Ok(()));
        assert_eq!(b.admit(1, false, 6), Err(Drop::Early));
        assert_eq!(b.admit(0, true, 7), Ok(()));
        assert_eq!(b.admit(1, true, 0), Err(Drop::Early));
    }
}
