//! The ABR source end system (TM 4.0 §5.10.4, source rules 1–10 as a simulator needs
//! them): the allowed cell rate ACR, the choice of forward RM, backward RM or data cell at
//! each transmission opportunity, and the ACR updates on backward RM cells, on idle
//! (use-it-or-lose-it, ADTF) and on missing feedback (CRM/CDF).
//!
//! The caller owns the cell queue and the clock: it asks [`AbrSource::next_opportunity`]
//! when the next cell may leave and then [`AbrSource::transmit`] what to send, so the
//! same machine serves a cell-level simulator and the unit tests below.

use super::rm::RmCell;
use crate::engine::{Nanos, NS_PER_S};

/// The negotiated and signalled ABR parameters of one VC (TM 4.0 §5.10.2; defaults from
/// §5.10.2's table as the reference §3.1 gives them).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceParams {
    /// Peak cell rate, cells/s.
    pub pcr: f64,
    /// Minimum cell rate, cells/s.
    pub mcr: f64,
    /// Initial cell rate, cells/s: the rate at setup and after an idle period.
    pub icr: f64,
    /// Tagged cell rate: the out-of-rate RM cell rate when ACR falls below it.
    pub tcr: f64,
    /// Rate increase factor: an increase adds RIF·PCR.
    pub rif: f64,
    /// Rate decrease factor: a decrease removes ACR·RDF.
    pub rdf: f64,
    /// Cutoff decrease factor, applied when CRM forward RM cells went unanswered.
    pub cdf: f64,
    /// At most Nrm cells per forward RM cell.
    pub nrm: u32,
    /// At least Mrm cells between forward RM cells sent because Trm expired.
    pub mrm: u32,
    /// Upper bound on the time between forward RM cells while the source sends.
    pub trm: Nanos,
    /// ACR decrease time factor: idle this long and ACR falls back to ICR.
    pub adtf: Nanos,
    /// Transient buffer exposure, cells.
    pub tbe: u64,
    /// Fixed round-trip time signalled at setup; 0 when not signalled.
    pub frtt: Nanos,
}

impl SourceParams {
    /// TM 4.0's defaults for every parameter but PCR, which is negotiated: ICR = PCR,
    /// MCR = 0, TCR = 10 cells/s, RIF = RDF = CDF = 1/16, Nrm = 32, Mrm = 2, Trm = 100 ms,
    /// ADTF = 0.5 s, TBE = 2^24 − 1 (reference §3.1, confirmed in YATS).
    pub fn tm4_defaults(pcr: f64) -> Self {
        SourceParams {
            pcr,
            mcr: 0.0,
            icr: pcr,
            tcr: 10.0,
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            cdf: 1.0 / 16.0,
            nrm: 32,
            mrm: 2,
            trm: 100_000_000,
            adtf: 500_000_000,
            tbe: 16_777_215,
            frtt: 0,
        }
    }

    /// Checks the ranges TM 4.0 allows; the error names the parameter and what it accepts.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let positive = |name, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err((name, format!("must be a positive rate, got {v}")))
            }
        };
        let fraction = |name, v: f64, zero_ok: bool| {
            if v.is_finite() && v <= 1.0 && (v > 0.0 || (zero_ok && v == 0.0)) {
                Ok(())
            } else {
                let low = if zero_ok { "[0, 1]" } else { "(0, 1]" };
                Err((name, format!("must lie in {low}, got {v}")))
            }
        };
        positive("pcr", self.pcr)?;
        positive("tcr", self.tcr)?;
        if !(self.mcr.is_finite() && self.mcr >= 0.0 && self.mcr <= self.pcr) {
            return Err(("mcr", format!("must lie in [0, pcr], got {}", self.mcr)));
        }
        if !(self.icr.is_finite() && self.icr >= self.mcr && self.icr <= self.pcr) {
            return Err(("icr", format!("must lie in [mcr, pcr], got {}", self.icr)));
        }
        fraction("rif", self.rif, false)?;
        fraction("rdf", self.rdf, false)?;
        fraction("cdf", self.cdf, true)?;
        if self.nrm < 2 {
            return Err(("nrm", format!("must be at least 2, got {}", self.nrm)));
        }
        if self.mrm < 1 || self.mrm >= self.nrm {
            return Err(("mrm", format!("must lie in [1, nrm), got {}", self.mrm)));
        }
        if self.trm == 0 {
            return Err(("trm", "must be positive".into()));
        }
        if self.adtf == 0 {
            return Err(("adtf", "must be positive".into()));
        }
        if self.tbe == 0 {
            return Err(("tbe", "must be at least 1 cell".into()));
        }
        Ok(())
    }

    /// CRM = ceil(TBE / Nrm): unanswered forward RM cells tolerated before the cutoff
    /// decrease (TM 4.0 §5.10.2, derived parameter).
    pub fn crm(&self) -> u64 {
        self.tbe.div_ceil(u64::from(self.nrm))
    }

    /// The ICR the source actually uses: min(ICR, TBE/FRTT) when FRTT is signalled, so
    /// that the first round trip cannot put more than TBE cells into the network
    /// (TM 4.0 §5.10.2 / source rule 2).
    pub fn effective_icr(&self) -> f64 {
        if self.frtt == 0 {
            return self.icr;
        }
        let cap = self.tbe as f64 * NS_PER_S as f64 / self.frtt as f64;
        self.icr.min(cap).max(self.mcr)
    }
}

/// What the source sends at a transmission opportunity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tx {
    /// An in-rate forward RM cell (CLP = 0).
    Frm(RmCell),
    /// An out-of-rate forward RM cell (CLP = 1), sent at TCR while ACR < TCR.
    OutOfRateFrm(RmCell),
    /// The backward RM cell this end system owes its peer (the caller holds it).
    Brm,
    /// The next data cell of the caller's queue.
    Data,
}

/// One VC's ABR source end system.
#[derive(Clone, Debug)]
pub struct AbrSource {
    p: SourceParams,
    icr: f64,
    crm: u64,
    acr: f64,
    /// In-rate cells sent since the last in-rate forward RM cell (rule 3a).
    count: u32,
    /// When the last in-rate forward RM cell left; None before the first cell (rule 2).
    last_frm: Option<Nanos>,
    /// Forward RM cells sent since the last backward RM with BN = 0 arrived (rule 6).
    unack: u64,
    /// Whether a backward RM went out since the last forward RM (rule 3b).
    brm_since_frm: bool,
    last_in_rate: Option<Nanos>,
    last_out_of_rate: Option<Nanos>,
}

/// Time between cells at `rate` cells/s, rounded up so the source never exceeds the rate.
fn spacing(rate: f64) -> Nanos {
    (NS_PER_S as f64 / rate).ceil() as Nanos
}

impl AbrSource {
    /// A source at setup: ACR = ICR (rule 2). The parameters must have passed
    /// [`SourceParams::validate`].
    pub fn new(p: SourceParams) -> Self {
        let icr = p.effective_icr();
        AbrSource {
            crm: p.crm(),
            icr,
            acr: icr,
            count: 0,
            last_frm: None,
            unack: 0,
            brm_since_frm: false,
            last_in_rate: None,
            last_out_of_rate: None,
            p,
        }
    }

    /// The allowed cell rate, cells/s.
    pub fn acr(&self) -> f64 {
        self.acr
    }

    pub fn params(&self) -> &SourceParams {
        &self.p
    }

    /// Below TCR the source sends no data, only out-of-rate RM cells at TCR (rule 10):
    /// its forward RM cells keep feedback flowing so that ACR can recover, and a backward
    /// RM owed to the peer may go out the same way (destination rule 4).
    fn out_of_rate(&self) -> bool {
        self.acr < self.p.tcr
    }

    /// The earliest time at or after `now` when the next cell may leave: 1/ACR after the
    /// previous in-rate cell (rule 1), or 1/TCR after the previous out-of-rate RM cell.
    /// A changed ACR applies from the next cell (rule 7).
    pub fn next_opportunity(&self, now: Nanos) -> Nanos {
        let (last, rate) = if self.out_of_rate() {
            (self.last_out_of_rate, self.p.tcr)
        } else {
            (self.last_in_rate, self.acr)
        };
        last.map_or(now, |t| now.max(t + spacing(rate)))
    }

    /// Rule 3: at a transmission opportunity `now` (not before [`Self::next_opportunity`]),
    /// chooses the cell to send, given whether data cells and a backward RM cell are
    /// waiting. Returns None when there is nothing to send: an idle source sends no RM
    /// cells of its own.
    pub fn transmit(&mut self, now: Nanos, data_waiting: bool, brm_waiting: bool) -> Option<Tx> {
        debug_assert!(now >= self.next_opportunity(now));
        if !data_waiting && !brm_waiting {
            return None;
        }
        if self.out_of_rate() {
            self.last_out_of_rate = Some(now);
            if !data_waiting {
                return Some(Tx::Brm);
            }
            return Some(Tx::OutOfRateFrm(RmCell::forward(
                self.acr, self.p.pcr, self.p.mcr,
            )));
        }
        self.last_in_rate = Some(now);
        if self.frm_due(now) {
            return Some(Tx::Frm(self.send_frm(now)));
        }
        self.count += 1;
        if brm_waiting && (!self.brm_since_frm || !data_waiting) {
            self.brm_since_frm = true;
            Some(Tx::Brm)
        } else {
            Some(Tx::Data)
        }
    }

    /// Rule 3a: a forward RM cell first (rule 2), after Nrm − 1 other in-rate cells, or
    /// after Trm once at least Mrm in-rate cells went out.
    fn frm_due(&self, now: Nanos) -> bool {
        match self.last_frm {
            None => true,
            Some(t) => {
                self.count + 1 >= self.p.nrm
                    || (self.count >= self.p.mrm && now.saturating_sub(t) >= self.p.trm)
            }
        }
    }

    /// Rules 5–7: use-it-or-lose-it, the cutoff decrease, then the cell carries the ACR.
    fn send_frm(&mut self, now: Nanos) -> RmCell {
        if let Some(t) = self.last_frm {
            if self.acr > self.icr && now - t > self.p.adtf {
                self.acr = self.icr;
            }
        }
        if self.unack >= self.crm {
            self.acr = (self.acr - self.acr * self.p.cdf).max(self.p.mcr);
        }
        self.unack += 1;
        self.count = 0;
        self.brm_since_frm = false;
        self.last_frm = Some(now);
        RmCell::forward(self.acr, self.p.pcr, self.p.mcr)
    }

    /// Rules 8–9 on a backward RM cell: CI decreases by ACR·RDF, otherwise NI = 0 increases
    /// by RIF·PCR up to PCR; then ACR = max(MCR, min(ACR, ER)). A BN = 0 cell is feedback
    /// to this source's own forward RM and resets the CRM count (rule 6).
    pub fn on_brm(&mut self, rm: &RmCell) {
        if !rm.bn {
            self.unack = 0;
        }
        if rm.ci {
            self.acr -= self.acr * self.p.rdf;
        } else if !rm.ni {
            self.acr = (self.acr + self.p.rif * self.p.pcr).min(self.p.pcr);
        }
        self.acr = self.acr.min(rm.er).max(self.p.mcr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::rm::Dir;

    const PCR: f64 = 100_000.0;

    fn brm(ci: bool, ni: bool, er: f64) -> RmCell {
        RmCell {
            dir: Dir::Backward,
            bn: false,
            ci,
            ni,
            er,
            ccr: 0.0,
            mcr: 0.0,
        }
    }

    /// Sends `n` cells back to back at the source's pace with data always waiting and
    /// returns them with their departure times.
    fn run(src: &mut AbrSource, start: Nanos, n: usize) -> Vec<(Nanos, Tx)> {
        let mut now = start;
        (0..n)
            .map(|_| {
                now = src.next_opportunity(now);
                (now, src.transmit(now, true, false).unwrap())
            })
            .collect()
    }

    #[test]
    fn defaults_are_tm4s() {
        // TM 4.0 §5.10.2 (reference §3.1): RIF = RDF = CDF = 1/16, Nrm 32, Mrm 2, Trm 100 ms,
        // ADTF 0.5 s, TBE 2^24 − 1, TCR 10, ICR = PCR, MCR = 0; CRM = ceil(TBE/Nrm).
        let p = SourceParams::tm4_defaults(PCR);
        assert_eq!((p.rif, p.rdf, p.cdf), (0.0625, 0.0625, 0.0625));
        assert_eq!(
            (p.nrm, p.mrm, p.trm, p.adtf),
            (32, 2, 100_000_000, 500_000_000)
        );
        assert_eq!((p.tbe, p.tcr, p.icr, p.mcr), (16_777_215, 10.0, PCR, 0.0));
        assert_eq!(p.crm(), 524_288);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn validation_names_the_parameter() {
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 2.0 * PCR;
        assert_eq!(p.validate().unwrap_err().0, "icr");
        let mut p = SourceParams::tm4_defaults(PCR);
        p.rdf = 0.0;
        assert_eq!(p.validate().unwrap_err().0, "rdf");
        let mut p = SourceParams::tm4_defaults(PCR);
        p.mrm = 32;
        assert_eq!(p.validate().unwrap_err().0, "mrm");
        let mut p = SourceParams::tm4_defaults(-1.0);
        p.icr = 0.0;
        assert_eq!(p.validate().unwrap_err().0, "pcr");
    }

    #[test]
    fn icr_is_limited_by_tbe_over_frtt() {
        // TM 4.0 §5.10.2: the source uses min(ICR, TBE/FRTT). 1000 cells over 20 ms
        // allow 50 000 cells/s.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.tbe = 1000;
        p.frtt = 20_000_000;
        assert_eq!(p.effective_icr(), 50_000.0);
        assert_eq!(AbrSource::new(p).acr(), 50_000.0);
    }

    #[test]
    fn first_cell_is_a_forward_rm_at_icr() {
        // Source rule 2: ACR = ICR at setup and the first in-rate cell is an FRM; rule 3a
        // fills CCR = ACR and ER = PCR.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 20_000.0;
        let mut src = AbrSource::new(p);
        match src.transmit(0, true, false) {
            Some(Tx::Frm(rm)) => {
                assert_eq!((rm.ccr, rm.er, rm.dir), (20_000.0, PCR, Dir::Forward));
            }
            other => panic!("expected an FRM, got {other:?}"),
        }
    }

    #[test]
    fn a_forward_rm_every_nrm_cells() {
        // Source rule 3a(ii): an FRM after Nrm − 1 in-rate cells, so one in every Nrm.
        let mut src = AbrSource::new(SourceParams::tm4_defaults(PCR));
        let cells = run(&mut src, 0, 100);
        let frms: Vec<usize> = cells
            .iter()
            .enumerate()
            .filter(|(_, (_, tx))| matches!(tx, Tx::Frm(_)))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(frms, vec![0, 32, 64, 96]);
    }

    #[test]
    fn cells_are_spaced_one_over_acr() {
        // Source rule 1: in-rate cells never faster than ACR; 100 000 cells/s is 10 µs.
        let mut src = AbrSource::new(SourceParams::tm4_defaults(PCR));
        let cells = run(&mut src, 1_000, 5);
        let times: Vec<Nanos> = cells.iter().map(|c| c.0).collect();
        assert_eq!(times, vec![1_000, 11_000, 21_000, 31_000, 41_000]);
        // A non-integer spacing rounds up: 30 000 cells/s → 33 334 ns.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 30_000.0;
        let mut src = AbrSource::new(p);
        let cells = run(&mut src, 0, 2);
        assert_eq!(cells[1].0, 33_334);
    }

    #[test]
    fn a_new_acr_applies_from_the_next_cell() {
        // Source rule 7: after a BRM raises ACR, the next cell follows at the new spacing.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 10_000.0;
        let mut src = AbrSource::new(p);
        src.transmit(0, true, false);
        assert_eq!(src.next_opportunity(0), 100_000);
        src.on_brm(&brm(false, false, PCR));
        assert_eq!(src.acr(), 16_250.0);
        assert_eq!(src.next_opportunity(0), 61_539);
    }

    #[test]
    fn trm_sends_a_forward_rm_after_mrm_cells() {
        // Source rule 3a(i): an FRM once Trm has elapsed and at least Mrm in-rate cells
        // went out since the last one; fewer than Mrm cells and Trm alone is not enough.
        let mut src = AbrSource::new(SourceParams::tm4_defaults(PCR));
        assert!(matches!(src.transmit(0, true, false), Some(Tx::Frm(_))));
        assert_eq!(src.transmit(10_000, true, false), Some(Tx::Data));
        // One cell since the FRM, Trm passed: still data.
        assert_eq!(src.transmit(200_000_000, true, false), Some(Tx::Data));
        // Two cells (= Mrm) since the FRM and Trm passed: an FRM.
        assert!(matches!(
            src.transmit(200_010_000, true, false),
            Some(Tx::Frm(_))
        ));
    }

    #[test]
    fn backward_rm_takes_one_slot_per_forward_rm_while_data_waits() {
        // Source rule 3b: a waiting BRM goes out if none went since the last FRM, or if no
        // data waits; otherwise data has the slot.
        let mut src = AbrSource::new(SourceParams::tm4_defaults(PCR));
        assert!(matches!(src.transmit(0, true, true), Some(Tx::Frm(_))));
        assert_eq!(src.transmit(10_000, true, true), Some(Tx::Brm));
        assert_eq!(src.transmit(20_000, true, true), Some(Tx::Data));
        assert_eq!(src.transmit(30_000, false, true), Some(Tx::Brm));
        assert_eq!(src.transmit(40_000, false, false), None);
    }

    #[test]
    fn ci_decreases_multiplicatively_down_to_mcr() {
        // Source rule 8: CI = 1 → ACR −= ACR·RDF, never below MCR.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.mcr = 85_000.0;
        let mut src = AbrSource::new(p);
        src.on_brm(&brm(true, false, PCR));
        assert_eq!(src.acr(), 93_750.0);
        src.on_brm(&brm(true, false, PCR));
        assert_eq!(src.acr(), 93_750.0 - 93_750.0 / 16.0);
        src.on_brm(&brm(true, false, PCR));
        assert_eq!(src.acr(), 85_000.0);
    }

    #[test]
    fn no_ci_increases_additively_in_pcr_units_up_to_pcr() {
        // Source rule 8: CI = 0 and NI = 0 → ACR += RIF·PCR, capped at PCR.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 10_000.0;
        let mut src = AbrSource::new(p);
        src.on_brm(&brm(false, false, PCR));
        assert_eq!(src.acr(), 16_250.0);
        for _ in 0..20 {
            src.on_brm(&brm(false, false, PCR));
        }
        assert_eq!(src.acr(), PCR);
    }

    #[test]
    fn ni_holds_the_rate() {
        // Source rule 8: CI = 0, NI = 1 → ACR unchanged.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 10_000.0;
        let mut src = AbrSource::new(p);
        src.on_brm(&brm(false, true, PCR));
        assert_eq!(src.acr(), 10_000.0);
    }

    #[test]
    fn er_caps_acr_but_mcr_is_the_floor() {
        // Source rule 9: ACR = max(MCR, min(ACR, ER)).
        let mut p = SourceParams::tm4_defaults(PCR);
        p.mcr = 5_000.0;
        let mut src = AbrSource::new(p);
        src.on_brm(&brm(false, false, 40_000.0));
        assert_eq!(src.acr(), 40_000.0);
        src.on_brm(&brm(false, false, 1_000.0));
        assert_eq!(src.acr(), 5_000.0);
    }

    #[test]
    fn idle_longer_than_adtf_falls_back_to_icr() {
        // Source rule 5 (use-it-or-lose-it): before an FRM, if ACR > ICR and more than ADTF
        // passed since the last FRM, ACR = ICR.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 10_000.0;
        let mut src = AbrSource::new(p);
        src.transmit(0, true, false);
        src.on_brm(&brm(false, false, PCR));
        src.on_brm(&brm(false, false, PCR));
        assert_eq!(src.acr(), 22_500.0);
        // After Mrm cells, an FRM 0.4 s later keeps the rate ...
        src.transmit(100_000, true, false);
        src.transmit(200_000, true, false);
        match src.transmit(400_000_000, true, false) {
            Some(Tx::Frm(rm)) => assert_eq!(rm.ccr, 22_500.0),
            other => panic!("expected an FRM, got {other:?}"),
        }
        // ... and one 0.6 s after that carries ICR.
        src.transmit(400_100_000, true, false);
        src.transmit(400_200_000, true, false);
        match src.transmit(1_000_200_001, true, false) {
            Some(Tx::Frm(rm)) => assert_eq!(rm.ccr, 10_000.0),
            other => panic!("expected an FRM, got {other:?}"),
        }
    }

    #[test]
    fn unanswered_forward_rms_cut_the_rate_by_cdf() {
        // Source rule 6: before an FRM, if CRM FRMs went out since the last BN = 0 BRM,
        // ACR −= ACR·CDF (not below MCR). TBE = 64 and Nrm = 32 give CRM = 2.
        let mut p = SourceParams::tm4_defaults(PCR);
        p.tbe = 64;
        let mut src = AbrSource::new(p);
        let frm_ccr = |cells: &[(Nanos, Tx)]| -> Vec<f64> {
            cells
                .iter()
                .filter_map(|(_, tx)| match tx {
                    Tx::Frm(rm) => Some(rm.ccr),
                    _ => None,
                })
                .collect()
        };
        let cells = run(&mut src, 0, 4 * 32);
        let d = PCR - PCR / 16.0;
        assert_eq!(frm_ccr(&cells), vec![PCR, PCR, d, d - d / 16.0]);
        // A switch-generated BRM (BN = 1) does not reset the count ...
        let mut from_switch = brm(false, true, PCR);
        from_switch.bn = true;
        src.on_brm(&from_switch);
        let acr = src.acr();
        let cells = run(&mut src, 10_000_000, 32);
        assert_eq!(frm_ccr(&cells), vec![acr - acr / 16.0]);
        // ... the destination's own turned-around FRM (BN = 0) does.
        src.on_brm(&brm(false, true, PCR));
        let acr = src.acr();
        let cells = run(&mut src, 20_000_000, 64);
        assert_eq!(frm_ccr(&cells), vec![acr, acr]);
    }

    #[test]
    fn below_tcr_only_out_of_rate_forward_rms_leave_at_tcr() {
        // Source rule 10 (out-of-rate RM cells): with ACR < TCR the source sends no data,
        // only FRMs with CLP = 1 at TCR, which bring back the feedback to recover; an owed
        // BRM may go out of rate too (destination rule 4).
        let mut p = SourceParams::tm4_defaults(PCR);
        p.icr = 5.0;
        let mut src = AbrSource::new(p);
        match src.transmit(0, true, false) {
            Some(Tx::OutOfRateFrm(rm)) => assert_eq!(rm.ccr, 5.0),
            other => panic!("expected an out-of-rate FRM, got {other:?}"),
        }
        assert_eq!(src.next_opportunity(0), 100_000_000);
        assert_eq!(src.transmit(100_000_000, false, true), Some(Tx::Brm));
        src.on_brm(&brm(false, false, PCR));
        assert!(matches!(
            src.transmit(100_000_000, true, false),
            Some(Tx::Frm(_))
        ));
    }
}
