//! The resource-management cell (TM 4.0 §5.10.3): the fields ABR rate control reads and
//! writes. A cell with PTI = 110 carries one of these in its payload; the cell header
//! (VC, CLP) belongs to the cell that carries it.

/// Which way an RM cell travels: DIR = 0 from source to destination, DIR = 1 back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Forward,
    Backward,
}

/// The ABR fields of an RM cell. Rates are cells/s, kept as doubles rather than TM 4.0's
/// 16-bit floating-point rate format (nothing here depends on its 9-bit mantissa).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmCell {
    pub dir: Dir,
    /// Backward notification: set when a switch or destination generated the cell, clear
    /// when it is the source's own FRM coming back.
    pub bn: bool,
    /// Congestion indication: the source must decrease.
    pub ci: bool,
    /// No increase: the source must not increase.
    pub ni: bool,
    /// Explicit rate: the lowest rate any element on the path allows.
    pub er: f64,
    /// Current cell rate: the source's ACR when it sent the cell.
    pub ccr: f64,
    pub mcr: f64,
}

impl RmCell {
    /// A source's forward RM cell: CCR = ACR, ER = PCR, CI = NI = 0, DIR = 0, BN = 0
    /// (TM 4.0 §5.10.4 source rule 3a and the RM field defaults of §5.10.3).
    pub fn forward(acr: f64, pcr: f64, mcr: f64) -> Self {
        RmCell {
            dir: Dir::Forward,
            bn: false,
            ci: false,
            ni: false,
            er: pcr,
            ccr: acr,
            mcr,
        }
    }

    /// The destination's turnaround: DIR becomes backward, everything else is carried back
    /// unchanged (TM 4.0 §5.10.5 destination rule 2).
    pub fn turned_around(self) -> Self {
        RmCell {
            dir: Dir::Backward,
            ..self
        }
    }

    /// Lowers the explicit rate to `er` if it is lower: an element may only reduce ER
    /// (TM 4.0 §5.10.6 switch behaviour, ER marking).
    pub fn limit_er(&mut self, er: f64) {
        if er < self.er {
            self.er = er;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_fills_ccr_er_and_clears_feedback() {
        // TM 4.0 §5.10.3 / source rule 3a: CCR = ACR, ER = PCR, CI = NI = 0, BN = 0.
        let rm = RmCell::forward(1000.0, 5000.0, 10.0);
        assert_eq!(rm.dir, Dir::Forward);
        assert!(!rm.bn && !rm.ci && !rm.ni);
        assert_eq!((rm.ccr, rm.er, rm.mcr), (1000.0, 5000.0, 10.0));
    }

    #[test]
    fn turnaround_keeps_the_fields() {
        // TM 4.0 §5.10.5 destination rule 2: only DIR changes; CCR and MCR are returned.
        let mut rm = RmCell::forward(1000.0, 5000.0, 10.0);
        rm.ci = true;
        let b = rm.turned_around();
        assert_eq!(b.dir, Dir::Backward);
        assert_eq!(
            (b.ccr, b.er, b.mcr, b.ci, b.bn),
            (1000.0, 5000.0, 10.0, true, false)
        );
    }

    #[test]
    fn er_only_decreases() {
        // TM 4.0 §5.10.6: a switch may reduce ER, never raise it.
        let mut rm = RmCell::forward(1000.0, 5000.0, 0.0);
        rm.limit_er(6000.0);
        assert_eq!(rm.er, 5000.0);
        rm.limit_er(2000.0);
        assert_eq!(rm.er, 2000.0);
    }
}
