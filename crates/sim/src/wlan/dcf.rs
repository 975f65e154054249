//! One station's DCF state (IEEE 802.11-1999 §9.2.4–9.2.5): the contention window, the
//! retry count of the frame it is sending, and its backoff counter.

use super::phy::{CW_MAX, CW_MIN, SLOT_NS};
use crate::engine::{Nanos, RngStream};

pub struct Dcf {
    cw: u32,
    /// Failed attempts of the current frame (the short retry count, §9.2.4).
    retries: u32,
    /// Idle slots still to count down; None when no backoff is pending, so a frame that
    /// finds the medium idle for DIFS may go at once (§9.2.5.1).
    backoff: Option<u32>,
    /// When the station starts counting idle slots: the end of the last busy period plus
    /// the interframe space it must wait (DIFS, EIFS, or its ACK timeout).
    counting_from: Nanos,
    rng: RngStream,
}

/// What became of a frame after an attempt failed.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    Retry,
    /// The retry limit was reached: the frame is discarded.
    Dropped,
}

impl Dcf {
    pub fn new(rng: RngStream) -> Self {
        Self {
            cw: CW_MIN,
            retries: 0,
            backoff: None,
            counting_from: 0,
            rng,
        }
    }

    /// §9.2.4: a random slot count, uniform over 0..=CW.
    fn draw(&mut self) {
        let slots = (self.rng.uniform() * f64::from(self.cw + 1)) as u32;
        self.backoff = Some(slots.min(self.cw));
    }

    /// When the station would start sending a frame that has waited since `since`, if no
    /// one else goes first: after its backoff slots, or at once if its backoff is over.
    pub fn ready_at(&self, since: Nanos) -> Nanos {
        let slots = Nanos::from(self.backoff.unwrap_or(0));
        (self.counting_from + slots * SLOT_NS).max(since)
    }

    /// Another station's transmission starts at `now`: the slots counted so far come off the
    /// backoff, which stays frozen while the medium is busy (§9.2.5.2). A station with a
    /// frame and no backoff pending found the medium busy, so it draws one.
    pub fn freeze(&mut self, now: Nanos, has_frame: bool) {
        let counted = now.saturating_sub(self.counting_from) / SLOT_NS;
        self.backoff = self
            .backoff
            .and_then(|b| u32::try_from(Nanos::from(b).checked_sub(counted)?).ok())
            .filter(|&b| b > 0);
        if has_frame {
            self.found_busy();
        }
    }

    /// A frame reached the head of the queue while the medium is busy: with no backoff
    /// pending, the station draws one (§9.2.5.2).
    pub fn found_busy(&mut self) {
        if self.backoff.is_none() {
            self.draw();
        }
    }

    /// This station's transmission starts now: its backoff is spent.
    pub fn transmit(&mut self) {
        self.backoff = None;
    }

    /// The medium is idle again; the station counts idle slots from `at`.
    pub fn resume(&mut self, at: Nanos) {
        self.counting_from = at;
    }

    /// §9.2.5.2: after a successful exchange the contention window is reset, and the
    /// station backs off again (post-backoff) whether or not another frame waits.
    pub fn succeeded(&mut self) {
        self.cw = CW_MIN;
        self.retries = 0;
        self.draw();
    }

    /// §9.2.4, §9.2.5.2: an attempt failed (no ACK): the window doubles, up to aCWmax, and a
    /// new backoff is drawn; at the retry limit the frame is discarded and the window reset.
    pub fn failed(&mut self, retry_limit: u32) -> Failure {
        self.retries += 1;
        let outcome = if self.retries >= retry_limit {
            self.cw = CW_MIN;
            self.retries = 0;
            Failure::Dropped
        } else {
            self.cw = (2 * (self.cw + 1) - 1).min(CW_MAX);
            Failure::Retry
        };
        self.draw();
        outcome
    }

    #[cfg(test)]
    pub fn cw(&self) -> u32 {
        self.cw
    }

    #[cfg(test)]
    pub fn backoff(&self) -> Option<u32> {
        self.backoff
    }

    #[cfg(test)]
    pub fn set_backoff(&mut self, slots: u32) {
        self.backoff = Some(slots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wlan::phy::DIFS_NS;

    fn dcf() -> Dcf {
        Dcf::new(RngStream::new(1, "t"))
    }

    #[test]
    fn the_window_doubles_up_to_cw_max_and_resets_after_success() {
        // IEEE 802.11-1999 §9.2.4: CW takes the values 2^n − 1 from aCWmin to aCWmax.
        let mut d = dcf();
        let mut seen = vec![d.cw()];
        for _ in 0..6 {
            assert_eq!(d.failed(100), Failure::Retry);
            seen.push(d.cw());
        }
        assert_eq!(seen, [31, 63, 127, 255, 511, 1023, 1023]);
        d.succeeded();
        assert_eq!(d.cw(), CW_MIN);
        assert!(
            d.backoff().is_some_and(|b| b <= CW_MIN),
            "post-backoff drawn"
        );
    }

    #[test]
    fn the_frame_is_dropped_at_the_retry_limit_and_the_window_reset() {
        // §9.2.4: when the short retry count reaches dot11ShortRetryLimit (7) the MSDU is
        // discarded and CW reset: 7 attempts, 6 retries.
        let mut d = dcf();
        for _ in 0..6 {
            assert_eq!(d.failed(7), Failure::Retry);
        }
        assert_eq!(d.failed(7), Failure::Dropped);
        assert_eq!(d.cw(), CW_MIN);
        assert_eq!(d.failed(7), Failure::Retry, "the next frame starts afresh");
    }

    #[test]
    fn backoff_draws_cover_zero_to_cw() {
        // §9.2.4: Backoff Time = Random() · aSlotTime, Random() uniform over [0, CW].
        let mut d = dcf();
        let mut counts = [0u32; 32];
        for _ in 0..32_000 {
            d.succeeded();
            counts[d.backoff().unwrap() as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn the_counter_freezes_while_the_medium_is_busy_and_resumes_after_difs() {
        // §9.2.5.2: the backoff timer decrements per idle slot after DIFS and is frozen while
        // the medium is busy; it resumes with the slots that were left.
        let mut d = dcf();
        d.resume(1_000_000 + DIFS_NS);
        d.set_backoff(10);
        assert_eq!(d.ready_at(0), 1_000_000 + DIFS_NS + 10 * SLOT_NS);
        // Someone else starts 4.5 slots into the count: 4 slots are spent, 6 remain.
        d.freeze(1_000_000 + DIFS_NS + 4 * SLOT_NS + SLOT_NS / 2, true);
        assert_eq!(d.backoff(), Some(6));
        // The medium is busy for 2 ms; the count resumes DIFS after it ends.
        d.resume(3_000_000 + DIFS_NS);
        assert_eq!(d.ready_at(0), 3_000_000 + DIFS_NS + 6 * SLOT_NS);
    }

    #[test]
    fn a_frame_finding_the_medium_idle_goes_at_once_and_one_finding_it_busy_backs_off() {
        // §9.2.5.1: a station with no backoff pending transmits when the medium has been
        // idle for DIFS; §9.2.5.2: finding the medium busy, it draws a backoff.
        let mut d = dcf();
        d.resume(DIFS_NS);
        assert_eq!(d.ready_at(5_000_000), 5_000_000);
        assert_eq!(d.ready_at(10_000), DIFS_NS, "not before DIFS has passed");
        d.freeze(5_000_000, true);
        assert!(d.backoff().is_some());
    }

    #[test]
    fn a_post_backoff_that_ran_out_leaves_no_backoff_pending() {
        // §9.2.5.2: the post-backoff counts down with an empty queue; once it is over the
        // next frame may go at once.
        let mut d = dcf();
        d.resume(0);
        d.set_backoff(3);
        d.freeze(10 * SLOT_NS, false);
        assert_eq!(d.backoff(), None);
    }
}
