//! An output port onto one direction of an ATM link: a FIFO of cells clocked out one per
//! slot. Cells are not held in memory: in a FIFO whose cells leave one per slot, the slot
//! a cell gets is known as it is accepted, so the port keeps only the first free slot, the
//! number of cells waiting at any time follows from it, and each cell costs the simulator
//! one arrival at the far end per hop.

use super::cell_link::{CellErrors, Reception, SlotClock};
use super::switch::{Buffer, Drop};
use crate::engine::Nanos;

#[derive(Debug, Default, Clone, Copy)]
pub struct PortStats {
    /// Cells sent onto the line.
    pub cells: u64,
    pub drops_full: u64,
    pub drops_epd: u64,
    pub drops_ppd: u64,
    /// Cells the receiver discarded (HEC or the cell loss ratio).
    pub lost: u64,
    /// Cells delivered with an errored payload.
    pub errored: u64,
    pub max_queue_cells: u64,
}

/// Where an offered cell went.
pub enum Fate {
    /// It reaches the far end at this time; `errored` if its payload was hit.
    Arrives { at: Nanos, errored: bool },
    /// The buffer refused it, or the receiver discarded it.
    Gone,
}

pub struct Port {
    clock: SlotClock,
    delay_ns: Nanos,
    /// The first slot not yet given to a cell.
    next_free: u64,
    errors: CellErrors,
    /// A switch's cell buffer and discard policy; None at a host or IP router, whose
    /// segmentation queue holds what TCP sends.
    buffer: Option<Buffer>,
    pub stats: PortStats,
    /// Cells waiting, sampled every trace interval.
    pub samples: Vec<u64>,
}

impl Port {
    pub fn new(
        clock: SlotClock,
        delay_ns: Nanos,
        errors: CellErrors,
        buffer: Option<Buffer>,
    ) -> Self {
        Self {
            clock,
            delay_ns,
            next_free: 0,
            errors,
            buffer,
            stats: PortStats::default(),
            samples: Vec::new(),
        }
    }

    /// Cells waiting for their slot at `now`; the one on the line (whose slot began at
    /// or before `now`) is not counted.
    pub fn queued(&self, now: Nanos) -> u64 {
        self.next_free
            .saturating_sub(self.clock.first_at_or_after(now + 1))
    }

    pub fn clock(&self) -> &SlotClock {
        &self.clock
    }

    pub fn slot_octets(&self) -> u64 {
        self.clock.slot_octets()
    }

    /// A cell of `vc` (`eom`: its frame's last) reaches the port at `now`: buffered (or
    /// refused), given the next free slot, and judged by the receiver.
    pub fn offer(&mut self, now: Nanos, vc: usize, eom: bool) -> Fate {
        let queued = self.queued(now);
        if let Some(buffer) = &mut self.buffer {
            if let Err(why) = buffer.admit(vc, eom, queued) {
                match why {
                    Drop::Full => self.stats.drops_full += 1,
                    Drop::Early => self.stats.drops_epd += 1,
                    Drop::Partial => self.stats.drops_ppd += 1,
                }
                return Fate::Gone;
            }
        }
        self.place(now)
    }

    /// An ABR RM cell reaches the port at `now`. It belongs to no frame, so the frame
    /// discard policies pass it by; a full buffer drops it.
    pub fn offer_rm(&mut self, now: Nanos) -> Fate {
        let queued = self.queued(now);
        if self.buffer.as_ref().is_some_and(|b| b.is_full(queued)) {
            self.stats.drops_full += 1;
            return Fate::Gone;
        }
        self.place(now)
    }

    /// An admitted cell takes the next free slot; the receiver judges it.
    fn place(&mut self, now: Nanos) -> Fate {
        let slot = self.next_free.max(self.clock.first_at_or_after(now));
        self.next_free = slot + 1;
        self.stats.max_queue_cells = self.stats.max_queue_cells.max(self.queued(now));
        self.stats.cells += 1;
        match self.errors.receive() {
            Reception::Lost => {
                self.stats.lost += 1;
                Fate::Gone
            }
            reception => {
                let errored = reception == Reception::PayloadErrored;
                self.stats.errored += u64::from(errored);
                Fate::Arrives {
                    at: self.clock.start(slot + 1) + self.delay_ns,
                    errored,
                }
            }
        }
    }

    /// Time the line spent sending cells up to `stop` (cells still waiting then excluded).
    pub fn busy_ns(&self, stop: Nanos) -> u64 {
        self.clock
            .start(self.stats.cells - self.queued(stop))
            .min(stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::plan::{DiscardPlan, ErrorPlan, FeedbackPlan, SwitchPlan};

    fn port(buffer: Option<Buffer>) -> Port {
        // 1 cell per µs: 424 bits at 424 Mb/s.
        let clock = SlotClock::new(424_000_000, 53);
        let errors = CellErrors::new(ErrorPlan::None, RngStream::new(1, "t"));
        Port::new(clock, 5_000, errors, buffer)
    }

    fn arrival(fate: Fate) -> Nanos {
        match fate {
            Fate::Arrives { at, .. } => at,
            Fate::Gone => panic!("cell refused"),
        }
    }

    #[test]
    fn back_to_back_cells_take_consecutive_slots() {
        let mut p = port(None);
        assert_eq!(arrival(p.offer(0, 0, false)), 1_000 + 5_000);
        assert_eq!(arrival(p.offer(0, 0, false)), 2_000 + 5_000);
        // The first is on the line from 0 to 1 µs, the second waits for it.
        assert_eq!(p.queued(0), 1);
        assert_eq!(p.queued(999), 1);
        assert_eq!(p.queued(1_000), 0);
    }

    #[test]
    fn a_cell_on_an_idle_line_waits_for_the_next_slot_boundary() {
        let mut p = port(None);
        assert_eq!(arrival(p.offer(1_500, 0, true)), 3_000 + 5_000);
        assert_eq!(p.busy_ns(10_000), 1_000);
    }

    #[test]
    fn a_switch_port_drops_what_its_buffer_cannot_hold() {
        let plan = SwitchPlan {
            buffer_cells: 2,
            discard: DiscardPlan::DropTail,
            epd_threshold_cells: 2,
            feedback: FeedbackPlan::None,
        };
        let mut p = port(Some(Buffer::new(&plan, 1)));
        for _ in 0..3 {
            p.offer(0, 0, false);
        }
        assert!(matches!(p.offer(0, 0, false), Fate::Gone));
        assert_eq!(p.stats.drops_full, 1);
        // One on the line and two waiting.
        assert_eq!(p.stats.max_queue_cells, 2);
    }

    #[test]
    fn rm_cells_pass_frame_discards_but_not_a_full_buffer() {
        // TM 4.0 RM cells (PTI 110) are no part of an AAL5 frame: a VC whose frame EPD is
        // discarding still gets its RM cells through, and only a full buffer drops them.
        let plan = SwitchPlan {
            buffer_cells: 3,
            discard: DiscardPlan::Epd,
            epd_threshold_cells: 1,
            feedback: FeedbackPlan::None,
        };
        let mut p = port(Some(Buffer::new(&plan, 1)));
        p.offer(0, 0, true);
        p.offer(0, 0, true); // waits: the next frame's first cell meets the threshold
        assert!(matches!(p.offer(0, 0, false), Fate::Gone));
        assert_eq!(p.stats.drops_epd, 1);
        assert!(matches!(p.offer_rm(0), Fate::Arrives { .. }));
        assert!(
            matches!(p.offer(0, 0, false), Fate::Gone),
            "EPD still discards the frame"
        );
        assert!(matches!(p.offer_rm(0), Fate::Arrives { .. }));
        assert!(
            matches!(p.offer_rm(0), Fate::Gone),
            "three cells wait: the buffer is full"
        );
        assert_eq!(p.stats.drops_full, 1);
    }
}
