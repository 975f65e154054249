//! Binary-feedback ABR switch port (TM 4.0 §5.10.6): when its ABR queue is long it tells
//! the sources to slow down with one bit, either EFCI on forwarded data cells (the
//! destination copies it into CI of the returning RM cell) or CI/NI directly in passing RM
//! cells ("relative rate" marking).
//!
//! Seed 001 calls its switch "EFCI" and describes it as marking RM cells at congestion;
//! it ran YATS, whose binary switch (`abrmux` in BINMODE) sets CI in forward and backward
//! RM cells above HI_THRESH until the queue falls to LO_THRESH (reference §3.5). That is
//! [`BinaryFeedback::RelativeRate`]; [`BinaryFeedback::Efci`] is the data-cell form.

use super::rm::RmCell;

/// Which cells a congested port marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryFeedback {
    /// Set EFCI in the header of forwarded ABR data cells.
    Efci,
    /// Set CI (and NI above its own threshold) in passing RM cells.
    RelativeRate,
}

/// The congestion state of one output port, with hysteresis: congested once the queue
/// exceeds `q_hi`, no longer once it has fallen to `q_lo`.
#[derive(Clone, Debug)]
pub struct BinarySwitch {
    mode: BinaryFeedback,
    q_hi: u32,
    q_lo: u32,
    /// Relative-rate mode only: queue length above which NI is set (no increase).
    q_ni: Option<u32>,
    congested: bool,
}

impl BinarySwitch {
    /// A port marking above `q_hi` cells and clearing at `q_lo` (`q_lo == q_hi`: a single
    /// threshold). Fails, naming the parameter, unless `q_lo <= q_hi`.
    pub fn new(mode: BinaryFeedback, q_hi: u32, q_lo: u32) -> Result<Self, (&'static str, String)> {
        if q_lo > q_hi {
            return Err(("q_lo", format!("must not exceed q_hi = {q_hi}, got {q_lo}")));
        }
        Ok(BinarySwitch {
            mode,
            q_hi,
            q_lo,
            q_ni: None,
            congested: false,
        })
    }

    /// Also sets NI in RM cells while the queue exceeds `q_ni` (relative-rate mode).
    pub fn with_no_increase_above(mut self, q_ni: u32) -> Self {
        self.q_ni = Some(q_ni);
        self
    }

    pub fn mode(&self) -> BinaryFeedback {
        self.mode
    }

    fn update(&mut self, queue: u32) -> bool {
        if queue > self.q_hi {
            self.congested = true;
        } else if queue <= self.q_lo {
            self.congested = false;
        }
        self.congested
    }

    /// A data cell passes with the ABR queue at `queue` cells: whether to set its EFCI bit.
    pub fn on_data(&mut self, queue: u32) -> bool {
        let congested = self.update(queue);
        congested && self.mode == BinaryFeedback::Efci
    }

    /// An RM cell passes with the ABR queue at `queue` cells: in relative-rate mode, CI is
    /// set while congested and NI while above the NI threshold. Marks are only ever set:
    /// another element's CI stays.
    pub fn on_rm(&mut self, queue: u32, rm: &mut RmCell) {
        let congested = self.update(queue);
        if self.mode != BinaryFeedback::RelativeRate {
            return;
        }
        if congested {
            rm.ci = true;
        }
        if self.q_ni.is_some_and(|q| queue > q) {
            rm.ni = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rm() -> RmCell {
        RmCell::forward(100.0, 1000.0, 0.0)
    }

    #[test]
    fn efci_marks_data_above_the_threshold() {
        // TM 4.0 §5.10.6 (EFCI marking): data cells leave with EFCI = 1 while the queue is
        // above the threshold; RM cells are left alone.
        let mut sw = BinarySwitch::new(BinaryFeedback::Efci, 100, 100).unwrap();
        assert!(!sw.on_data(100));
        assert!(sw.on_data(101));
        let mut cell = rm();
        sw.on_rm(500, &mut cell);
        assert!(!cell.ci && !cell.ni);
        assert!(!sw.on_data(100));
    }

    #[test]
    fn hysteresis_keeps_marking_until_the_low_threshold() {
        // Reference §3.5 (YATS HI_THRESH/LO_THRESH): on above q_hi, off at or below q_lo.
        let mut sw = BinarySwitch::new(BinaryFeedback::Efci, 80, 60).unwrap();
        let marks: Vec<bool> = [50, 79, 81, 70, 61, 60, 70, 80]
            .into_iter()
            .map(|q| sw.on_data(q))
            .collect();
        assert_eq!(marks, [false, false, true, true, true, false, false, false]);
    }

    #[test]
    fn relative_rate_sets_ci_and_ni_in_rm_cells() {
        // TM 4.0 §5.10.6 (relative-rate marking): CI in passing RM cells while congested,
        // NI above a lower threshold; data cells carry no mark.
        let mut sw = BinarySwitch::new(BinaryFeedback::RelativeRate, 100, 100)
            .unwrap()
            .with_no_increase_above(50);
        assert!(!sw.on_data(500));
        let mut a = rm();
        sw.on_rm(40, &mut a);
        assert!(!a.ci && !a.ni);
        let mut b = rm();
        sw.on_rm(60, &mut b);
        assert!(!b.ci && b.ni);
        let mut c = rm();
        sw.on_rm(101, &mut c);
        assert!(c.ci && c.ni);
    }

    #[test]
    fn marks_are_never_cleared() {
        // TM 4.0 §5.10.6: a switch may set CI/NI but not clear another element's mark.
        let mut sw = BinarySwitch::new(BinaryFeedback::RelativeRate, 100, 100).unwrap();
        let mut cell = rm();
        cell.ci = true;
        sw.on_rm(0, &mut cell);
        assert!(cell.ci);
    }

    #[test]
    fn low_threshold_above_high_is_refused() {
        let err = BinarySwitch::new(BinaryFeedback::Efci, 10, 20).unwrap_err();
        assert_eq!(err.0, "q_lo");
    }
}
