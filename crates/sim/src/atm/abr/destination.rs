//! The ABR destination end system (TM 4.0 §5.10.5): it remembers the EFCI bit of the last
//! data cell and turns forward RM cells around, carrying that congestion state back in CI.

use super::rm::RmCell;

/// One VC's destination end system.
#[derive(Clone, Debug, Default)]
pub struct AbrDestination {
    /// The EFCI bit of the last data cell received (rule 1).
    efci: bool,
    /// The turned-around RM cell waiting to go back to the source (rule 3).
    pending: Option<RmCell>,
}

impl AbrDestination {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rule 1: every data cell overwrites the EFCI state with its own EFCI bit.
    pub fn on_data(&mut self, efci: bool) {
        self.efci = efci;
    }

    /// Rule 2: turns a forward RM cell around (DIR = 1, CCR and MCR unchanged); if the
    /// last data cell carried EFCI, sets CI and clears the state. Rule 3: a forward RM
    /// arriving before the previous one went back replaces it.
    pub fn on_frm(&mut self, rm: RmCell) {
        let mut back = rm.turned_around();
        if self.efci {
            back.ci = true;
            self.efci = false;
        }
        self.pending = Some(back);
    }

    pub fn brm_waiting(&self) -> bool {
        self.pending.is_some()
    }

    /// The backward RM cell to send now, if one is owed.
    pub fn take_brm(&mut self) -> Option<RmCell> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::abr::rm::Dir;

    fn frm(ccr: f64) -> RmCell {
        RmCell::forward(ccr, 1000.0, 5.0)
    }

    #[test]
    fn turnaround_returns_the_cell_backward() {
        // Destination rule 2: DIR := 1, CCR and MCR copied, ER untouched.
        let mut d = AbrDestination::new();
        assert!(!d.brm_waiting());
        d.on_frm(frm(300.0));
        let b = d.take_brm().unwrap();
        assert_eq!(b.dir, Dir::Backward);
        assert_eq!(
            (b.ccr, b.mcr, b.er, b.ci, b.bn),
            (300.0, 5.0, 1000.0, false, false)
        );
        assert!(d.take_brm().is_none());
    }

    #[test]
    fn efci_of_the_last_data_cell_becomes_ci_once() {
        // Destination rules 1–2: the last data cell's EFCI wins; CI is set and the state
        // reset, so the next FRM goes back with CI = 0 unless EFCI arrives again.
        let mut d = AbrDestination::new();
        d.on_data(true);
        d.on_frm(frm(1.0));
        assert!(d.take_brm().unwrap().ci);
        d.on_frm(frm(2.0));
        assert!(!d.take_brm().unwrap().ci);
        // A later unmarked cell clears an earlier mark.
        d.on_data(true);
        d.on_data(false);
        d.on_frm(frm(3.0));
        assert!(!d.take_brm().unwrap().ci);
    }

    #[test]
    fn a_new_forward_rm_overwrites_the_pending_one() {
        // Destination rule 3: only the latest turned-around RM cell is kept.
        let mut d = AbrDestination::new();
        d.on_frm(frm(1.0));
        d.on_frm(frm(2.0));
        assert_eq!(d.take_brm().unwrap().ccr, 2.0);
        assert!(!d.brm_waiting());
    }

    #[test]
    fn ci_already_set_upstream_is_kept() {
        // Destination rule 2 copies the cell: a CI set by a switch on the forward path
        // stays set whatever the EFCI state.
        let mut d = AbrDestination::new();
        let mut rm = frm(1.0);
        rm.ci = true;
        d.on_frm(rm);
        assert!(d.take_brm().unwrap().ci);
    }
}
