//! ERICA, the explicit-rate switch algorithm of Jain, Kalyanaraman, Goyal, Fahmy and
//! Viswanathan ("ERICA Switch Algorithm: A Complete Description", ATM Forum 96-1172,
//! 1996; Kalyanaraman et al., IEEE/ACM ToN 8(1), 2000), per output port, with the
//! ERICA+ queue control of Kalyanaraman's dissertation as an option (reference §3.6–3.7).
//!
//! Each averaging interval the port measures its ABR input rate and the VCs that were
//! active; the load factor z = input rate / target rate scales each VC's current rate
//! (VCShare = CCR / z) and the target divided among the active VCs is the fair share; a
//! backward RM cell leaves with ER = min(ER, max(FairShare, VCShare)). Only ABR cells
//! are counted, and the whole link is ABR capacity: no CBR/VBR traffic shares these ports.

use std::collections::BTreeMap;

use super::rm::RmCell;
use crate::engine::{Nanos, NS_PER_S};

/// ERICA+ queue control: the target rate is the capacity scaled by f(q), above 1 while
/// the queue is under its target Q0 = T0 × capacity and down to QDLF above it.
#[derive(Clone, Debug, PartialEq)]
pub struct EricaPlus {
    /// Target queueing delay T0.
    pub t0: Nanos,
    /// Queue drain limit factor: f(q) never falls below it.
    pub qdlf: f64,
    /// Curvature of f above Q0.
    pub a: f64,
    /// f(0): how far above capacity the target may go with an empty queue.
    pub b: f64,
}

impl EricaPlus {
    /// Kalyanaraman's values for a WAN: T0 = 500 µs, QDLF = 0.5, a = 1.15, b = 1.05.
    pub fn wan() -> Self {
        EricaPlus {
            t0: 500_000,
            qdlf: 0.5,
            a: 1.15,
            b: 1.05,
        }
    }

    /// f(q) for a queue of `queue` cells on a port of `capacity` cells/s.
    pub fn factor(&self, queue: f64, capacity: f64) -> f64 {
        let q0 = self.t0 as f64 / NS_PER_S as f64 * capacity;
        if queue <= q0 {
            self.b * q0 / ((self.b - 1.0) * queue + q0)
        } else {
            (self.a * q0 / ((self.a - 1.0) * queue + q0)).max(self.qdlf)
        }
    }
}

/// An ERICA port's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct EricaParams {
    /// The port's cell rate, cells/s.
    pub link_cell_rate: f64,
    /// Target utilisation U: the ABR input rate the port aims for, as a fraction of the
    /// link (ignored under ERICA+, whose f(q) replaces it).
    pub target_utilization: f64,
    /// Overload is z > 1 + δ; below it the port also offers MaxAllocPrevious.
    pub delta: f64,
    /// Averaging interval length.
    pub interval: Nanos,
    /// Also end the interval after this many ABR cells, if sooner.
    pub interval_cells: Option<u64>,
    pub plus: Option<EricaPlus>,
    /// FairShare divides the target among this many VCs set up through the port (YATS's
    /// default); None: among the VCs that sent a cell in the interval (Jain et al.).
    pub established_vcs: Option<usize>,
    /// VCShare scales the VC's cell rate measured at the port over the last interval
    /// rather than the CCR its RM cells carry, which a source that does not use its ACR
    /// (TCP limited by its window) overstates: ERICA's per-VC CCR measurement option.
    pub measure_ccr: bool,
}

impl EricaParams {
    /// U = 0.9, δ = 0.1, a 1 ms averaging interval and no cell limit (reference §3.6;
    /// seed 001 sets the target at "90–95 %").
    pub fn new(link_cell_rate: f64) -> Self {
        EricaParams {
            link_cell_rate,
            target_utilization: 0.9,
            delta: 0.1,
            interval: 1_000_000,
            interval_cells: None,
            plus: None,
            established_vcs: None,
            measure_ccr: false,
        }
    }

    /// Checks the ranges; the error names the parameter and what it accepts.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.link_cell_rate.is_finite() && self.link_cell_rate > 0.0) {
            return Err(("link_cell_rate", "must be a positive rate".into()));
        }
        let u = self.target_utilization;
        if !(u > 0.0 && u <= 1.0) {
            return Err(("target_utilization", format!("must lie in (0, 1], got {u}")));
        }
        if !(self.delta.is_finite() && self.delta >= 0.0) {
            return Err(("delta", format!("must be non-negative, got {}", self.delta)));
        }
        if self.interval == 0 {
            return Err(("interval", "must be positive".into()));
        }
        if self.interval_cells == Some(0) {
            return Err(("interval_cells", "must be at least 1 cell".into()));
        }
        if let Some(p) = &self.plus {
            if p.t0 == 0 {
                return Err(("t0", "must be positive".into()));
            }
            if !(p.qdlf > 0.0 && p.qdlf <= 1.0) {
                return Err(("qdlf", format!("must lie in (0, 1], got {}", p.qdlf)));
            }
            if !(p.a > 1.0 && p.b >= 1.0) {
                return Err(("a", "a must exceed 1 and b be at least 1".into()));
            }
        }
        Ok(())
    }
}

/// One output port's ERICA state.
#[derive(Clone, Debug)]
pub struct EricaPort {
    p: EricaParams,
    interval_start: Nanos,
    cells: u64,
    /// Cells of each VC that sent in the current interval.
    active: BTreeMap<u32, u64>,
    /// The CCR each VC's last forward RM cell carried.
    ccr: BTreeMap<u32, f64>,
    /// Each VC's cell rate measured over the last interval (VCs absent sent nothing).
    measured: BTreeMap<u32, f64>,
    /// Measurements of the last complete interval. Before the first one, z = 0: the
    /// port knows of no load and offers the whole target.
    z: f64,
    target: f64,
    fair_share: f64,
    n_active: usize,
    max_alloc_previous: f64,
    max_alloc_current: f64,
}

impl EricaPort {
    /// A port whose first averaging interval starts at `now`. The parameters must have
    /// passed [`EricaParams::validate`].
    pub fn new(p: EricaParams, now: Nanos) -> Self {
        let target = p.target_utilization * p.link_cell_rate;
        EricaPort {
            interval_start: now,
            cells: 0,
            active: BTreeMap::new(),
            measured: BTreeMap::new(),
            ccr: BTreeMap::new(),
            z: 0.0,
            target,
            fair_share: target,
            n_active: 0,
            max_alloc_previous: 0.0,
            max_alloc_current: 0.0,
            p,
        }
    }

    /// The load factor of the last interval.
    pub fn load_factor(&self) -> f64 {
        self.z
    }

    pub fn fair_share(&self) -> f64 {
        self.fair_share
    }

    /// The ABR target rate of the last interval, cells/s.
    pub fn target_rate(&self) -> f64 {
        self.target
    }

    pub fn active_vcs(&self) -> usize {
        self.n_active
    }

    /// An ABR cell (data or RM) of `vc` arrives at the port, whose ABR queue holds `queue`
    /// cells: counted towards the input rate and marks the VC active.
    pub fn on_cell(&mut self, now: Nanos, vc: u32, queue: u32) {
        self.roll(now, queue);
        self.cells += 1;
        *self.active.entry(vc).or_default() += 1;
    }

    /// A forward RM cell of `vc` passes: remember its CCR for the VCShare.
    pub fn on_frm(&mut self, vc: u32, rm: &RmCell) {
        self.ccr.insert(vc, rm.ccr);
    }

    /// A backward RM cell of `vc` passes: lower its ER to this port's allocation.
    pub fn on_brm(&mut self, now: Nanos, vc: u32, queue: u32, rm: &mut RmCell) {
        self.roll(now, queue);
        let ccr = if self.p.measure_ccr {
            self.measured.get(&vc).copied().unwrap_or(0.0)
        } else {
            self.ccr.get(&vc).copied().unwrap_or(rm.ccr)
        };
        let er = self.allocation(ccr, rm.mcr);
        rm.limit_er(er);
    }

    /// ERICA's per-VC allocation for a VC at `ccr` with minimum rate `mcr`.
    fn allocation(&mut self, ccr: f64, mcr: f64) -> f64 {
        let fs = self.fair_share;
        // A port that measured no ABR load has no share to scale: FairShare alone (as
        // YATS's abrmux does with Z = 0).
        let vc_share = if self.z > 0.0 { ccr / self.z } else { 0.0 };
        let mut er = if self.z > 1.0 + self.p.delta {
            fs.max(vc_share)
        } else {
            fs.max(vc_share).max(self.max_alloc_previous)
        };
        er = er.min(self.target);
        self.max_alloc_current = self.max_alloc_current.max(er);
        // A VC below its fair share is raised to the fair share, not beyond, so that one
        // interval cannot send every slow VC far above it at once.
        if er > fs && ccr < fs {
            er = fs;
        }
        er.max(mcr)
    }

    /// Ends the averaging interval if it is due at `now`: the input rate, load factor,
    /// active VC count and fair share of the interval just finished become current.
    fn roll(&mut self, now: Nanos, queue: u32) {
        let elapsed = now.saturating_sub(self.interval_start);
        let by_cells = self.p.interval_cells.is_some_and(|n| self.cells >= n);
        if elapsed == 0 || (elapsed < self.p.interval && !by_cells) {
            return;
        }
        let capacity = self.p.link_cell_rate;
        let u = match &self.p.plus {
            Some(plus) => plus.factor(f64::from(queue), capacity),
            None => self.p.target_utilization,
        };
        self.target = u * capacity;
        let input_rate = self.cells as f64 * NS_PER_S as f64 / elapsed as f64;
        self.z = input_rate / self.target;
        self.n_active = self.active.len();
        let sharing = self.p.established_vcs.unwrap_or(self.n_active);
        self.fair_share = self.target / sharing.max(1) as f64;
        self.max_alloc_previous = self.max_alloc_current;
        self.max_alloc_current = self.fair_share;
        let seconds = elapsed as f64 / NS_PER_S as f64;
        self.measured = self
            .active
            .iter()
            .map(|(&vc, &cells)| (vc, cells as f64 / seconds))
            .collect();
        self.interval_start = now;
        self.cells = 0;
        self.active.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::rm::Dir;

    const C: f64 = 100_000.0;
    const MS: Nanos = 1_000_000;

    fn brm(er: f64, ccr: f64, mcr: f64) -> RmCell {
        RmCell {
            dir: Dir::Backward,
            bn: false,
            ci: false,
            ni: false,
            er,
            ccr,
            mcr,
        }
    }

    /// A port that saw `per_vc` cells from each of `vcs` VCs in its first 1 ms interval,
    /// closed by a cell at 1 ms.
    fn loaded(vcs: u32, per_vc: u32) -> EricaPort {
        let mut port = EricaPort::new(EricaParams::new(C), 0);
        for vc in 0..vcs {
            for k in 0..per_vc {
                port.on_cell(u64::from(k), vc, 0);
            }
        }
        port.on_cell(MS, 0, 0);
        port
    }

    #[test]
    fn interval_end_measures_load_and_fair_share() {
        // ERICA end of interval: z = ABR input rate / (U × capacity), FairShare = target /
        // active VCs. 4 VCs × 45 cells in 1 ms = 180 000 cells/s against 90 000: z = 2.
        let port = loaded(4, 45);
        assert_eq!(port.target_rate(), 90_000.0);
        assert_eq!(port.load_factor(), 2.0);
        assert_eq!(port.active_vcs(), 4);
        assert_eq!(port.fair_share(), 22_500.0);
    }

    #[test]
    fn fair_share_over_established_vcs_ignores_idle_intervals() {
        // YATS abrmux without DYNFAIRSHARE (reference §3.6): FairShare = target / the VCs
        // set up through the port, however few sent in the interval.
        let mut p = EricaParams::new(C);
        p.established_vcs = Some(10);
        let mut port = EricaPort::new(p, 0);
        port.on_cell(0, 3, 0);
        port.on_cell(MS, 3, 0);
        assert_eq!(port.active_vcs(), 1);
        assert_eq!(port.fair_share(), 9_000.0);
    }

    #[test]
    fn measured_ccr_replaces_the_rm_cells_ccr() {
        // ERICA's per-VC CCR measurement option: VCShare = (the VC's cells in the last
        // interval / interval) / z. VC 1 sent 30 of 180 cells in 1 ms (30 000 cells/s) but
        // claims 60 000: with z = 2 its VCShare is 15 000, below FairShare 22 500.
        let mut p = EricaParams::new(C);
        p.measure_ccr = true;
        let mut port = EricaPort::new(p, 0);
        for (vc, cells) in [(0, 60), (1, 30), (2, 45), (3, 45)] {
            for k in 0..cells {
                port.on_cell(k, vc, 0);
            }
        }
        port.on_cell(MS, 0, 0);
        assert_eq!(port.load_factor(), 2.0);
        port.on_frm(1, &RmCell::forward(60_000.0, C, 0.0));
        let mut rm = brm(C, 60_000.0, 0.0);
        port.on_brm(MS, 1, 0, &mut rm);
        assert_eq!(rm.er, 22_500.0);
        // VC 0 sent 60 cells: 60 000 cells/s, VCShare 30 000.
        let mut rm = brm(C, 1.0, 0.0);
        port.on_brm(MS, 0, 0, &mut rm);
        assert_eq!(rm.er, 30_000.0);
    }

    #[test]
    fn overload_gives_the_larger_of_fair_share_and_vc_share() {
        // ERICA, z > 1 + δ: ER = max(FairShare, CCR / z).
        let mut port = loaded(4, 45);
        port.on_frm(1, &RmCell::forward(60_000.0, C, 0.0));
        let mut rm = brm(C, 60_000.0, 0.0);
        port.on_brm(MS, 1, 0, &mut rm);
        assert_eq!(rm.er, 30_000.0);
        port.on_frm(2, &RmCell::forward(30_000.0, C, 0.0));
        let mut rm = brm(C, 30_000.0, 0.0);
        port.on_brm(MS, 2, 0, &mut rm);
        assert_eq!(rm.er, 22_500.0);
    }

    #[test]
    fn vc_share_uses_the_ccr_of_the_forward_rm() {
        // ERICA records CCR from forward RM cells; the backward cell's own CCR is only a
        // fallback for a VC whose FRM the port has not seen.
        let mut port = loaded(4, 45);
        port.on_frm(1, &RmCell::forward(80_000.0, C, 0.0));
        let mut rm = brm(C, 10.0, 0.0);
        port.on_brm(MS, 1, 0, &mut rm);
        assert_eq!(rm.er, 40_000.0);
        let mut rm = brm(C, 70_000.0, 0.0);
        port.on_brm(MS, 9, 0, &mut rm);
        assert_eq!(rm.er, 35_000.0);
    }

    #[test]
    fn underload_also_offers_max_alloc_previous() {
        // ERICA, z ≤ 1 + δ: ER = max(FairShare, VCShare, MaxAllocPrevious), so VCs catch up
        // with the largest allocation of the previous interval.
        let mut port = loaded(2, 30); // 60 000 cells/s: z = 2/3, FairShare 45 000
        port.on_frm(1, &RmCell::forward(50_000.0, C, 0.0));
        let mut rm = brm(C, 50_000.0, 0.0);
        port.on_brm(MS, 1, 0, &mut rm);
        assert!((rm.er - 75_000.0).abs() < 1e-6);
        // Next interval: equal load again; VC 2 at 45 000 gets the 75 000 handed out before.
        for k in 0..60 {
            port.on_cell(MS + k, (k % 2) as u32, 0);
        }
        port.on_cell(2 * MS, 0, 0);
        port.on_frm(2, &RmCell::forward(45_000.0, C, 0.0));
        let mut rm = brm(C, 45_000.0, 0.0);
        port.on_brm(2 * MS, 2, 0, &mut rm);
        assert!((rm.er - 75_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_vc_below_fair_share_is_raised_only_to_it() {
        // ERICA: if ER > FairShare and CCR < FairShare then ER = FairShare.
        let mut port = loaded(2, 5); // z = 1/9, VCShare of a 20 000 VC = 180 000
        port.on_frm(1, &RmCell::forward(20_000.0, C, 0.0));
        let mut rm = brm(C, 20_000.0, 0.0);
        port.on_brm(MS, 1, 0, &mut rm);
        assert_eq!(rm.er, 45_000.0);
    }

    #[test]
    fn er_is_capped_at_the_target_floored_at_mcr_and_only_lowered() {
        // ERICA: ER ≤ target and ≥ MCR; TM 4.0 §5.10.6: ER_field = min(ER_field, ER).
        let mut port = loaded(1, 10); // z = 1/9
        port.on_frm(0, &RmCell::forward(85_000.0, C, 0.0));
        let mut rm = brm(C, 85_000.0, 0.0);
        port.on_brm(MS, 0, 0, &mut rm);
        assert_eq!(rm.er, 90_000.0);
        let mut rm = brm(1_000.0, 85_000.0, 0.0);
        port.on_brm(MS, 0, 0, &mut rm);
        assert_eq!(rm.er, 1_000.0);
        let mut port = loaded(4, 450); // z = 20: every share tiny
        port.on_frm(3, &RmCell::forward(1_000.0, C, 0.0));
        let mut rm = brm(C, 1_000.0, 30_000.0);
        port.on_brm(MS, 3, 0, &mut rm);
        assert_eq!(rm.er, 30_000.0);
    }

    #[test]
    fn before_any_measurement_the_whole_target_is_offered() {
        let mut port = EricaPort::new(EricaParams::new(C), 0);
        let mut rm = brm(C, 1_000.0, 0.0);
        port.on_brm(10, 0, 0, &mut rm);
        assert_eq!(rm.er, 90_000.0);
    }

    #[test]
    fn interval_ends_after_the_cell_count_if_sooner() {
        // Reference §3.6: the interval ends after AI_time or AI_cells, whichever first.
        let mut p = EricaParams::new(C);
        p.interval_cells = Some(10);
        let mut port = EricaPort::new(p, 0);
        for k in 0..11 {
            port.on_cell(k * 10_000, 0, 0);
        }
        // 10 cells in 100 µs = 100 000 cells/s: z = 100 000 / 90 000.
        assert_eq!(port.load_factor(), 100_000.0 / 90_000.0);
    }

    #[test]
    fn erica_plus_target_follows_the_queue() {
        // ERICA+ (reference §3.7): f(0) = b, f(Q0) = 1, f → QDLF for long queues.
        // T0 = 500 µs on 100 000 cells/s: Q0 = 50 cells.
        let f = EricaPlus::wan();
        assert!((f.factor(0.0, C) - 1.05).abs() < 1e-12);
        assert!((f.factor(50.0, C) - 1.0).abs() < 1e-12);
        assert!((f.factor(100.0, C) - 1.15 / 1.3).abs() < 1e-12);
        assert_eq!(f.factor(1e6, C), 0.5);
        let mut p = EricaParams::new(C);
        p.plus = Some(f);
        let mut port = EricaPort::new(p, 0);
        port.on_cell(MS, 0, 50);
        assert!((port.target_rate() - C).abs() < 1e-6);
    }

    #[test]
    fn validation_names_the_parameter() {
        let mut p = EricaParams::new(C);
        p.target_utilization = 1.5;
        assert_eq!(p.validate().unwrap_err().0, "target_utilization");
        let mut p = EricaParams::new(C);
        p.interval = 0;
        assert_eq!(p.validate().unwrap_err().0, "interval");
        assert!(EricaParams::new(C).validate().is_ok());
    }
}
