//! One direction of an ATM link: a line of cell slots at the link rate, propagation delay,
//! and what bit errors (or a given cell loss ratio) do to each cell at the receiver.

use crate::engine::{Nanos, RngStream, NS_PER_S};
use crate::plan::ErrorPlan;

/// The line's cell slots. A slot holds one cell plus any per-cell PHY octets (ATM25's
/// start-of-cell command, af-phy-0040.000), so slot k starts at
/// floor(k · slot_bits · 10⁹ / rate) ns: exact in the long run, whatever the rate.
#[derive(Debug, Clone, Copy)]
pub struct SlotClock {
    /// slot_bits · 10⁹.
    slot_bit_ns: u128,
    rate_bps: u128,
}

impl SlotClock {
    pub fn new(rate_bps: u64, slot_octets: u64) -> Self {
        Self {
            slot_bit_ns: u128::from(slot_octets) * 8 * u128::from(NS_PER_S),
            rate_bps: u128::from(rate_bps),
        }
    }

    pub fn start(&self, slot: u64) -> Nanos {
        (u128::from(slot) * self.slot_bit_ns / self.rate_bps) as Nanos
    }

    /// The first slot that starts at or after `t`.
    pub fn first_at_or_after(&self, t: Nanos) -> u64 {
        (u128::from(t) * self.rate_bps).div_ceil(self.slot_bit_ns) as u64
    }

    pub fn slot_octets(&self) -> u64 {
        (self.slot_bit_ns / (8 * u128::from(NS_PER_S))) as u64
    }

    /// Cell slots per second.
    pub fn cells_per_s(&self) -> f64 {
        self.rate_bps as f64 * NS_PER_S as f64 / self.slot_bit_ns as f64
    }
}

/// What the receiver makes of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reception {
    Intact,
    /// The header was good (or corrected) but the payload was hit: the cell is passed on
    /// and its frame fails the AAL5 CRC-32.
    PayloadErrored,
    /// Discarded: a header error the HEC could not correct, or a cell lost at the CLR.
    Lost,
}

const HEADER_BITS: i32 = 40;
const PAYLOAD_BITS: i32 = 384;

/// Cell errors at one receiver: independent bit errors through the HEC's two modes
/// (ITU-T I.432.1), or a cell loss ratio.
pub struct CellErrors {
    model: ErrorPlan,
    /// Probabilities of 0 and of exactly 1 bit error in the 40-bit header, and of a hit
    /// payload, for the BER model.
    header_clean: f64,
    header_single: f64,
    payload_hit: f64,
    /// The HEC is in correction mode (the initial mode) rather than detection mode.
    correcting: bool,
    rng: RngStream,
}

impl CellErrors {
    pub fn new(model: ErrorPlan, rng: RngStream) -> Self {
        let (header_clean, header_single, payload_hit) = match model {
            ErrorPlan::Ber { ber } => {
                let ok = (-ber).ln_1p();
                let clean = (f64::from(HEADER_BITS) * ok).exp();
                let single = f64::from(HEADER_BITS) * ber * (f64::from(HEADER_BITS - 1) * ok).exp();
                (clean, single, -(f64::from(PAYLOAD_BITS) * ok).exp_m1())
            }
            _ => (1.0, 0.0, 0.0),
        };
        Self {
            model,
            header_clean,
            header_single,
            payload_hit,
            correcting: true,
            rng,
        }
    }

    pub fn receive(&mut self) -> Reception {
        match self.model {
            ErrorPlan::Ber { .. } => self.hec(),
            ErrorPlan::Loss { p } if self.rng.chance(p) => Reception::Lost,
            _ => Reception::Intact,
        }
    }

    /// I.432.1 (cell header error control): in correction mode a single-bit header error is corrected and a
    /// multi-bit one discards the cell; either moves the receiver to detection mode, where
    /// every errored header discards its cell. An error-free header returns it to
    /// correction mode.
    fn hec(&mut self) -> Reception {
        let u = self.rng.uniform();
        let header_ok = if u < self.header_clean {
            self.correcting = true;
            true
        } else {
            let corrected = self.correcting && u < self.header_clean + self.header_single;
            self.correcting = false;
            corrected
        };
        if !header_ok {
            Reception::Lost
        } else if self.rng.chance(self.payload_hit) {
            Reception::PayloadErrored
        } else {
            Reception::Intact
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oc3_payload_slots_follow_the_rate_exactly() {
        // G.707: the STS-3c payload carries 149.76 Mb/s, 353,207.5 cells/s; 2 slots take
        // 2 × 424 bits / 149.76 Mb/s = 5662.393… ns, so the second ends at 5662 ns.
        let clock = SlotClock::new(149_760_000, 53);
        assert!((clock.cells_per_s() - 353_207.547).abs() < 1e-3);
        assert_eq!(clock.start(2), 5662);
        // 353,207.5 slots a second: slot 353,208 is the first to start after 1 s.
        assert!(clock.start(353_207) < NS_PER_S && clock.start(353_208) >= NS_PER_S);
        assert_eq!(clock.first_at_or_after(0), 0);
        assert_eq!(clock.first_at_or_after(1), 1);
        assert_eq!(clock.first_at_or_after(clock.start(5)), 5);
    }

    #[test]
    fn atm25_slots_carry_the_command_octet() {
        // af-phy-0040.000: 25.6 Mb/s, each cell preceded by a one-octet start-of-cell
        // command, so 25.6e6 / (54 × 8) = 59,259.26 cells/s.
        let clock = SlotClock::new(25_600_000, 54);
        assert!((clock.cells_per_s() - 59_259.259).abs() < 1e-3);
    }

    fn share(errors: &mut CellErrors, n: usize, what: Reception) -> f64 {
        (0..n).filter(|_| errors.receive() == what).count() as f64 / n as f64
    }

    #[test]
    fn a_given_clr_loses_that_share_of_cells() {
        let mut e = CellErrors::new(ErrorPlan::Loss { p: 0.01 }, RngStream::new(3, "t"));
        let lost = share(&mut e, 200_000, Reception::Lost);
        assert!((lost - 0.01).abs() < 0.001, "{lost}");
    }

    #[test]
    fn the_hec_corrects_single_bit_errors_only_in_correction_mode() {
        // A BER of 1e-3: 3.9 % of headers have one error, 0.08 % more than one. Models.md
        // §4.5: in steady state almost every header is clean, so the receiver is mostly in
        // correction mode and single errors are corrected; the discards come from
        // multi-bit errors (≈ 780 b²) and from single errors right after another error.
        let b: f64 = 1e-3;
        let mut e = CellErrors::new(ErrorPlan::Ber { ber: b }, RngStream::new(5, "t"));
        let lost = share(&mut e, 400_000, Reception::Lost);
        let multi = 1.0 - (1.0 - b).powi(40) - 40.0 * b * (1.0 - b).powi(39);
        let single = 40.0 * b * (1.0 - b).powi(39);
        let errored = 1.0 - (1.0 - b).powi(40);
        // A cell is lost if multi-bit, or single-bit while the previous header was errored.
        let expected = multi + single * errored;
        assert!(
            (lost - expected).abs() < 0.15 * expected,
            "{lost} vs {expected}"
        );
        // Payload hits (384 bits) are passed on for the CRC to catch: 1 − (1 − b)^384.
        let mut e = CellErrors::new(ErrorPlan::Ber { ber: b }, RngStream::new(6, "t"));
        let hit = share(&mut e, 200_000, Reception::PayloadErrored);
        let payload = 1.0 - (1.0 - b).powi(384);
        assert!(
            (hit - payload * (1.0 - expected)).abs() < 0.02 * payload,
            "{hit}"
        );
    }

    #[test]
    fn detection_mode_discards_every_errored_header() {
        // BER 0.5: nearly every header is errored, so after the first the receiver stays
        // in detection mode and no single-bit correction happens.
        let mut e = CellErrors::new(ErrorPlan::Ber { ber: 0.5 }, RngStream::new(7, "t"));
        assert!(share(&mut e, 1000, Reception::Lost) > 0.999);
    }
}
