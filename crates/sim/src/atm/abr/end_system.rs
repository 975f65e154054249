//! One host's ABR end system on one connection: the source of its outgoing VC, fed with the
//! AAL5 frames the host's SAR cuts from TCP segments and sending their cells at ACR, and
//! the destination of the incoming VC, whose turned-around RM cells go back on the
//! outgoing VC in the slots source rule 3b gives them (TM 4.0 §5.10.5 rule 4).

use std::collections::VecDeque;

use super::{AbrDestination, AbrSource, RmCell, SourceParams, Tx};
use crate::engine::Nanos;

/// A cell the end system sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Out {
    /// The next cell of a queued frame; `eom` on its last.
    Data { frame: u32, eom: bool },
    /// A forward RM cell of the outgoing VC; `in_rate` false for one sent at TCR (CLP = 1).
    Frm { rm: RmCell, in_rate: bool },
    /// A backward RM cell of the incoming VC, carried on the outgoing one.
    Brm(RmCell),
}

struct Queued {
    frame: u32,
    cells_left: u64,
}

pub struct EndSystem {
    source: AbrSource,
    /// Destination of the incoming VC.
    destination: AbrDestination,
    frames: VecDeque<Queued>,
    cells: u64,
}

impl EndSystem {
    pub fn new(params: SourceParams) -> Self {
        EndSystem {
            source: AbrSource::new(params),
            destination: AbrDestination::new(),
            frames: VecDeque::new(),
            cells: 0,
        }
    }

    pub fn acr(&self) -> f64 {
        self.source.acr()
    }

    /// Data cells waiting for their slot.
    pub fn queued_cells(&self) -> u64 {
        self.cells
    }

    /// The SAR hands over a frame of `cells` cells: they wait in the source's queue.
    pub fn enqueue(&mut self, frame: u32, cells: u64) {
        debug_assert!(cells > 0);
        self.frames.push_back(Queued {
            frame,
            cells_left: cells,
        });
        self.cells += cells;
    }

    /// A data cell of the incoming VC arrived with this EFCI bit.
    pub fn on_data(&mut self, efci: bool) {
        self.destination.on_data(efci);
    }

    /// A forward RM cell of the incoming VC arrived: turn it around.
    pub fn on_frm(&mut self, rm: RmCell) {
        self.destination.on_frm(rm);
    }

    /// A backward RM cell of the outgoing VC arrived: adjust ACR.
    pub fn on_brm(&mut self, rm: &RmCell) {
        self.source.on_brm(rm);
    }

    /// When the next cell may leave, if there is one to send.
    pub fn next_send(&self, now: Nanos) -> Option<Nanos> {
        (self.cells > 0 || self.destination.brm_waiting())
            .then(|| self.source.next_opportunity(now))
    }

    /// The cell to send at `now`, at or after [`Self::next_send`].
    pub fn send(&mut self, now: Nanos) -> Option<Out> {
        let tx = self
            .source
            .transmit(now, self.cells > 0, self.destination.brm_waiting())?;
        Some(match tx {
            Tx::Frm(rm) => Out::Frm { rm, in_rate: true },
            Tx::OutOfRateFrm(rm) => Out::Frm { rm, in_rate: false },
            Tx::Brm => Out::Brm(
                self.destination
                    .take_brm()
                    .expect("the source chose a BRM because one was waiting"),
            ),
            Tx::Data => {
                let head = self
                    .frames
                    .front_mut()
                    .expect("the source chose data because cells were waiting");
                head.cells_left -= 1;
                self.cells -= 1;
                let out = Out::Data {
                    frame: head.frame,
                    eom: head.cells_left == 0,
                };
                if head.cells_left == 0 {
                    self.frames.pop_front();
                }
                out
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::Dir;

    const PCR: f64 = 100_000.0;

    fn drain(es: &mut EndSystem, mut now: Nanos) -> Vec<(Nanos, Out)> {
        let mut out = Vec::new();
        while let Some(t) = es.next_send(now) {
            now = t;
            out.push((now, es.send(now).unwrap()));
        }
        out
    }

    #[test]
    fn frames_leave_cell_by_cell_at_acr_behind_a_forward_rm() {
        // TM 4.0 §5.10.4 rules 1–3: the first cell is an FRM, then the frames' cells in
        // order at 1/ACR, the last cell of each marked end of frame (AAL5, I.363.5).
        let mut es = EndSystem::new(SourceParams::tm4_defaults(PCR));
        assert_eq!(es.next_send(0), None);
        es.enqueue(7, 2);
        es.enqueue(8, 1);
        let cells = drain(&mut es, 0);
        let times: Vec<Nanos> = cells.iter().map(|c| c.0).collect();
        assert_eq!(times, vec![0, 10_000, 20_000, 30_000]);
        assert!(matches!(cells[0].1, Out::Frm { in_rate: true, .. }));
        let data: Vec<Out> = cells[1..].iter().map(|c| c.1).collect();
        assert_eq!(
            data,
            vec![
                Out::Data {
                    frame: 7,
                    eom: false
                },
                Out::Data {
                    frame: 7,
                    eom: true
                },
                Out::Data {
                    frame: 8,
                    eom: true
                },
            ]
        );
        assert_eq!(es.queued_cells(), 0);
    }

    #[test]
    fn a_turned_around_rm_goes_back_on_the_outgoing_vc() {
        // TM 4.0 §5.10.5 rules 2 and 4: the destination's BRM (CI from the last data cell's
        // EFCI) is sent in-rate by the same end system's source, even with no data queued,
        // after the FRM that source rule 2 puts first.
        let mut es = EndSystem::new(SourceParams::tm4_defaults(PCR));
        es.on_data(true);
        es.on_frm(RmCell::forward(5_000.0, PCR, 0.0));
        let cells = drain(&mut es, 0);
        assert_eq!(cells.len(), 2);
        assert!(matches!(cells[0].1, Out::Frm { .. }));
        match cells[1].1 {
            Out::Brm(rm) => {
                assert_eq!(rm.dir, Dir::Backward);
                assert!(rm.ci);
                assert_eq!(rm.ccr, 5_000.0);
            }
            other => panic!("expected a BRM, got {other:?}"),
        }
    }

    #[test]
    fn backward_rms_adjust_the_pace_of_the_queue() {
        // TM 4.0 §5.10.4 rules 8–9: a BRM with ER = PCR/4 slows the queued cells to 40 µs.
        let mut es = EndSystem::new(SourceParams::tm4_defaults(PCR));
        es.enqueue(0, 3);
        let first = es.send(0).unwrap();
        assert!(matches!(first, Out::Frm { .. }));
        let mut rm = RmCell::forward(PCR, PCR, 0.0).turned_around();
        rm.er = PCR / 4.0;
        es.on_brm(&rm);
        assert_eq!(es.acr(), 25_000.0);
        let cells = drain(&mut es, 0);
        let times: Vec<Nanos> = cells.iter().map(|c| c.0).collect();
        assert_eq!(times, vec![40_000, 80_000, 120_000]);
    }
}
