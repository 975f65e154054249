//! ABR across a network of ATM links: the end system where each ABR VC enters ATM, the
//! feedback state of each switch output port, and the ACR samples. The cell network
//! (crate::atm) calls in at four points: a frame segmented for an ABR VC
//! ([`AbrNet::enqueue`]) and the source's wake-ups ([`AbrNet::wake`]); a cell offered to a
//! switch port ([`AbrNet::offer`]); a backward RM cell crossing a switch
//! ([`AbrNet::backward`]); a cell reaching the end of its VC's ATM run
//! ([`AbrNet::arrive`]).
//!
//! VC numbers are the cell network's: flow · 2 + route, so a connection's two directions
//! are `vc` and `vc ^ 1`. The end system at a VC's entry also terminates the other
//! direction, whose forward RM cells it turns around onto its own VC.

use super::{BinarySwitch, EndSystem, EricaPort, Out, RmCell};
use crate::engine::{Nanos, NS_PER_S};
use crate::plan::AbrPlan;
use crate::result::AbrAcrSeries;

/// A switch output port's ABR feedback.
pub enum Feedback {
    /// EFCI or relative-rate marking.
    Binary(BinarySwitch),
    Erica(Box<EricaPort>),
}

pub struct AbrNet {
    /// Per VC: its end system, None for a UBR VC.
    ends: Vec<Option<EndSystem>>,
    /// Per VC: the earliest wake-up of its source already scheduled.
    wakes: Vec<Option<Nanos>>,
    /// Per channel: the feedback state of the switch port sending on it.
    ports: Vec<Option<Feedback>>,
    rm_cells: u64,
    acr: AbrAcrSeries,
}

impl AbrNet {
    /// `lines[vc]`: the cell rate of the channel where an ABR VC enters ATM, None for a UBR
    /// VC; `ports[ch]`: each switch port's feedback.
    pub fn new(plan: &AbrPlan, lines: &[Option<f64>], ports: Vec<Option<Feedback>>) -> Self {
        AbrNet {
            ends: lines
                .iter()
                .map(|line| line.map(|cells_s| EndSystem::new(plan.source(cells_s))))
                .collect(),
            wakes: vec![None; lines.len()],
            ports,
            rm_cells: 0,
            acr: AbrAcrSeries::default(),
        }
    }

    pub fn is_abr(&self, vc: u32) -> bool {
        self.ends[vc as usize].is_some()
    }

    /// RM cells the end systems sent.
    pub fn rm_cells(&self) -> u64 {
        self.rm_cells
    }

    /// Returns `at` if the source of `vc` must be woken then: no wake-up as early is
    /// scheduled yet.
    fn needs(&mut self, vc: u32, at: Option<Nanos>) -> Option<Nanos> {
        let at = at?;
        let wake = &mut self.wakes[vc as usize];
        if wake.is_some_and(|w| w <= at) {
            return None;
        }
        *wake = Some(at);
        Some(at)
    }

    fn end(&mut self, vc: u32) -> &mut EndSystem {
        self.ends[vc as usize]
            .as_mut()
            .expect("only an ABR VC has an end system")
    }

    /// The SAR hands the frame `frame` of `cells` cells to ABR VC `vc`'s source; returns
    /// when to wake the source, if no wake-up is due by then.
    pub fn enqueue(&mut self, now: Nanos, vc: u32, frame: u32, cells: u64) -> Option<Nanos> {
        let end = self.end(vc);
        end.enqueue(frame, cells);
        let next = end.next_send(now);
        self.needs(vc, next)
    }

    /// The source of `vc` wakes at `now`: the cell it sends, if one is due, and when to
    /// wake it next (None: a wake-up is scheduled already, or nothing waits).
    pub fn wake(&mut self, now: Nanos, vc: u32) -> (Option<Out>, Option<Nanos>) {
        if self.wakes[vc as usize] == Some(now) {
            self.wakes[vc as usize] = None;
        }
        let end = self.end(vc);
        let out = match end.next_send(now) {
            Some(t) if t <= now => end.send(now),
            _ => None,
        };
        if matches!(out, Some(Out::Frm { .. } | Out::Brm(_))) {
            self.rm_cells += 1;
        }
        let next = self.end(vc).next_send(now);
        (out, self.needs(vc, next))
    }

    /// A cell of `vc` is offered at `now` to the output port sending on `channel`, where
    /// `queued` cells wait: the port's feedback measures it (ERICA) or marks it (EFCI on a
    /// data cell, CI/NI in an RM cell).
    pub fn offer(
        &mut self,
        now: Nanos,
        channel: usize,
        vc: u32,
        queued: u64,
        efci: &mut bool,
        rm: Option<&mut RmCell>,
    ) {
        if !self.is_abr(vc) {
            return;
        }
        let queued = u32::try_from(queued).unwrap_or(u32::MAX);
        match (&mut self.ports[channel], rm) {
            (Some(Feedback::Erica(port)), rm) => {
                port.on_cell(now, vc, queued);
                if let Some(rm) = rm.filter(|rm| rm.dir == super::Dir::Forward) {
                    port.on_frm(vc, rm);
                }
            }
            (Some(Feedback::Binary(port)), Some(rm)) => port.on_rm(queued, rm),
            (Some(Feedback::Binary(port)), None) => *efci |= port.on_data(queued),
            (None, _) => {}
        }
    }

    /// A backward RM cell of the connection whose forward VC is `vc` crosses a switch at
    /// `now`; `channel` is the switch's port onto `vc`'s forward path, where `queued` cells
    /// wait. The port lowers ER (ERICA) or sets CI/NI (relative-rate marking).
    pub fn backward(&mut self, now: Nanos, channel: usize, vc: u32, queued: u64, rm: &mut RmCell) {
        let queued = u32::try_from(queued).unwrap_or(u32::MAX);
        match &mut self.ports[channel] {
            Some(Feedback::Erica(port)) => port.on_brm(now, vc, queued, rm),
            Some(Feedback::Binary(port)) => port.on_rm(queued, rm),
            None => {}
        }
    }

    /// A cell of ABR VC `vc` reaches the end of its ATM run at `now`, where the end system
    /// of `vc ^ 1` sits: a data cell's EFCI is noted, a forward RM cell is turned around, a
    /// backward RM cell sets that end system's ACR. Returns when to wake its source.
    pub fn arrive(&mut self, now: Nanos, vc: u32, efci: bool, rm: Option<RmCell>) -> Option<Nanos> {
        let back = vc ^ 1;
        let end = self.end(back);
        match rm {
            None => {
                end.on_data(efci);
                return None;
            }
            Some(rm) if rm.dir == super::Dir::Forward => end.on_frm(rm),
            Some(rm) => end.on_brm(&rm),
        }
        let next = end.next_send(now);
        self.needs(back, next)
    }

    /// Records every ABR VC's ACR (the trace interval's sample).
    pub fn sample(&mut self, now: Nanos) {
        for (vc, end) in self.ends.iter().enumerate() {
            let Some(end) = end else { continue };
            self.acr.t_s.push(now as f64 / NS_PER_S as f64);
            self.acr.flow.push(vc / 2);
            self.acr
                .direction
                .push(if vc % 2 == 0 { "forward" } else { "reverse" });
            self.acr.acr_cells_s.push(end.acr());
        }
    }

    pub fn take_acr(&mut self) -> AbrAcrSeries {
        std::mem::take(&mut self.acr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::{BinaryFeedback, Dir, EricaParams};

    const LINE: f64 = 100_000.0;

    fn plan() -> AbrPlan {
        AbrPlan::tm4_defaults()
    }

    /// One connection (VCs 0 and 1), both ABR; channel 0 is a port with `feedback`.
    fn net(feedback: Option<Feedback>) -> AbrNet {
        AbrNet::new(&plan(), &[Some(LINE), Some(LINE)], vec![feedback, None])
    }

    #[test]
    fn a_queued_frame_is_sent_cell_by_cell_with_one_wake_up_each() {
        // TM 4.0 §5.10.4 rules 1–3 through the network's hooks: an FRM, then the frame's
        // cells 1/ACR apart, each wake-up asking for the next.
        let mut abr = net(None);
        assert_eq!(abr.enqueue(0, 0, 9, 2), Some(0));
        // A second frame before the wake-up needs no second wake-up.
        assert_eq!(abr.enqueue(0, 0, 10, 1), None);
        let mut now = 0;
        let mut sent = Vec::new();
        loop {
            let (out, next) = abr.wake(now, 0);
            sent.push((now, out.unwrap()));
            match next {
                Some(t) => now = t,
                None => break,
            }
        }
        assert_eq!(sent.len(), 4);
        assert!(matches!(sent[0].1, Out::Frm { .. }));
        assert_eq!(
            sent[3],
            (
                30_000,
                Out::Data {
                    frame: 10,
                    eom: true
                }
            )
        );
        assert_eq!(abr.rm_cells(), 1);
    }

    #[test]
    fn a_stale_wake_up_sends_nothing_and_asks_for_the_right_time() {
        let mut abr = net(None);
        abr.enqueue(0, 0, 0, 2);
        abr.wake(0, 0);
        // Woken early (say, by a wake-up scheduled before ACR fell): nothing is due yet.
        let (out, next) = abr.wake(5_000, 0);
        assert_eq!(out, None);
        assert_eq!(next, None); // the one for 10 µs stands
    }

    #[test]
    fn the_far_end_turns_forward_rms_around_onto_the_other_vc() {
        // TM 4.0 §5.10.5: an FRM of VC 0 reaching its end is turned around by the end
        // system of VC 1, which then has a cell to send: the BRM, with CI from EFCI.
        let mut abr = net(None);
        assert_eq!(abr.arrive(0, 0, true, None), None);
        let frm = RmCell::forward(5_000.0, LINE, 0.0);
        assert_eq!(abr.arrive(7, 0, false, Some(frm)), Some(7));
        let (first, _) = abr.wake(7, 1);
        assert!(matches!(first, Some(Out::Frm { .. })));
        let (second, _) = abr.wake(17_000, 1);
        match second {
            Some(Out::Brm(rm)) => assert!(rm.ci && rm.dir == Dir::Backward),
            other => panic!("expected a BRM, got {other:?}"),
        }
    }

    #[test]
    fn a_backward_rm_at_the_source_sets_acr() {
        // TM 4.0 §5.10.4 rule 9: the BRM of VC 0 arrives at the end of VC 1's run.
        let mut abr = net(None);
        let mut rm = RmCell::forward(LINE, LINE, 0.0).turned_around();
        rm.er = 20_000.0;
        abr.arrive(0, 1, false, Some(rm));
        abr.sample(0);
        let acr = abr.take_acr();
        assert_eq!(acr.acr_cells_s, vec![20_000.0, LINE]);
        assert_eq!(acr.direction, vec!["forward", "reverse"]);
    }

    #[test]
    fn ports_mark_and_measure_only_abr_cells() {
        let binary = BinarySwitch::new(BinaryFeedback::Efci, 10, 10).unwrap();
        let mut abr = AbrNet::new(
            &plan(),
            &[Some(LINE), Some(LINE), None, None],
            vec![Some(Feedback::Binary(binary)), None],
        );
        let mut efci = false;
        abr.offer(0, 0, 0, 11, &mut efci, None);
        assert!(efci);
        let mut efci = false;
        abr.offer(0, 0, 2, 11, &mut efci, None);
        assert!(!efci, "a UBR VC's cell is not marked");
        let erica = EricaPort::new(EricaParams::new(LINE), 0);
        let mut abr = net(Some(Feedback::Erica(Box::new(erica))));
        let mut rm = RmCell::forward(LINE, LINE, 0.0).turned_around();
        abr.backward(10, 0, 0, 0, &mut rm);
        assert_eq!(rm.er, 90_000.0);
    }
}
