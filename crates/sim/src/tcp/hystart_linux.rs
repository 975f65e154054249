//! HyStart as Linux's CUBIC runs it (tcp_cubic.c `hystart_update`, `cubictcp_acked`;
//! Ha & Rhee, "Taming the elephants: new TCP slow start", Computer Networks 55(9), 2011,
//! first presented at PFLDnet 2008), not RFC 9406's HyStart++ (`hystart.rs`). Slow start
//! ends, with ssthresh = cwnd, on either signal:
//!
//! - ACK train: ACKs arriving no more than 2 ms apart have spanned more than half the
//!   minimum RTT since the round began, so the flight already fills about half the pipe
//!   (`hystart_ack_delta_us` = 2000);
//! - delay increase: the smallest of the round's first eight RTT samples exceeds the
//!   minimum RTT by min_rtt/8, clamped to [4 ms, 16 ms].
//!
//! Neither acts below 16 segments of cwnd (`hystart_low_window`), though rounds are counted
//! from the first ACK.

use crate::engine::Nanos;

const ACK_DELTA_NS: Nanos = 2_000_000; /* 2 ms */
const MIN_SAMPLES: u32 = 8;
const DELAY_MIN_NS: Nanos = 4_000_000; /* 4 ms */
const DELAY_MAX_NS: Nanos = 16_000_000; /* 16 ms */
/// Segments of cwnd below which HyStart does not act.
pub const LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delay`: the ACK-train threshold allows for the time a 64 KiB GSO
/// burst takes at the pacing rate, at most 1 ms.
const GSO_MAX_BYTES: u64 = 65_536;
const ACK_DELAY_MAX_NS: Nanos = 1_000_000; /* 1 ms */

#[derive(Debug, Default, Clone)]
pub struct LinuxHyStart {
    /// Slow start was ended (`found`).
    found: bool,
    /// The round: when it began, when its last train ACK came, the byte that ends it.
    round_start: Nanos,
    last_ack: Nanos,
    end_seq: Option<u64>,
    /// Smallest RTT sample of the round and how many samples it has seen.
    curr_rtt: Option<Nanos>,
    samples: u32,
    /// Smallest RTT sample of the connection (`delay_min`).
    delay_min: Option<Nanos>,
}

/// What one ACK tells HyStart.
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    pub now: Nanos,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// RTT of the newest segment the ACK delivered.
    pub rtt: Nanos,
    pub cwnd_segments: u64,
    /// Bytes per second (Linux `sk_pacing_rate`: 2·cwnd/SRTT in slow start).
    pub pacing_rate: u64,
}

impl LinuxHyStart {
    /// Linux `bictcp_hystart_reset`.
    fn start_round(&mut self, now: Nanos, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// A new slow start (after a timeout): HyStart may act again.
    pub fn restart(&mut self, now: Nanos, snd_nxt: u64) {
        self.found = false;
        self.start_round(now, snd_nxt);
    }

    /// An ACK with an RTT sample during slow start; true when slow start should end now.
    pub fn on_ack(&mut self, a: AckSample) -> bool {
        let delay = a.rtt.max(1);
        let delay_min = *self
            .delay_min
            .insert(self.delay_min.map_or(delay, |m| m.min(delay)));
        if self.found {
            return false;
        }
        // Rounds are counted from the first ACK on, but nothing is judged below the low
        // window.
        if self.end_seq.is_none_or(|end| a.snd_una > end) {
            self.start_round(a.now, a.snd_nxt);
        }
        if a.cwnd_segments < LOW_WINDOW {
            return false;
        }
        if a.now - self.last_ack <= ACK_DELTA_NS {
            self.last_ack = a.now;
            let ack_delay = (GSO_MAX_BYTES * 4 * 1_000_000_000)
                .checked_div(a.pacing_rate)
                .map_or(0, |d| d.min(ACK_DELAY_MAX_NS));
            // Unpaced senders: the train spans half the minimum RTT.
            if a.now - self.round_start > (delay_min + ack_delay) / 2 {
                self.found = true;
            }
        }
        let curr = *self
            .curr_rtt
            .insert(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else if curr > delay_min + (delay_min / 8).clamp(DELAY_MIN_NS, DELAY_MAX_NS) {
            self.found = true;
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn sample(now: Nanos, snd_una: u64, rtt: Nanos, cwnd_segments: u64) -> AckSample {
        AckSample {
            now,
            snd_una,
            snd_nxt: snd_una + 100_000,
            rtt,
            cwnd_segments,
            pacing_rate: 10_000_000,
        }
    }

    #[test]
    fn an_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        // min RTT 40 ms: ACKs 1 ms apart for more than (40 + 1) / 2 ms end it.
        let mut h = LinuxHyStart::default();
        let mut found_at = None;
        for i in 0..40 {
            if h.on_ack(sample(100 * MS + i * MS, i * 1000, 40 * MS, 32)) {
                found_at = Some(i);
                break;
            }
        }
        assert_eq!(found_at, Some(21));
    }

    #[test]
    fn gaps_longer_than_two_ms_break_the_train() {
        let mut h = LinuxHyStart::default();
        for i in 0..40 {
            assert!(!h.on_ack(sample(100 * MS + i * 3 * MS, i * 1000, 40 * MS, 32)));
        }
    }

    #[test]
    fn a_delay_rise_after_eight_samples_ends_slow_start() {
        // min RTT 40 ms sets a threshold of 40 + max(5, 4) = 45 ms; in the next round,
        // samples 3 ms apart keep the ACK train out of it, and the ninth decides.
        let mut h = LinuxHyStart::default();
        h.on_ack(sample(0, 0, 40 * MS, 32));
        let mut results = Vec::new();
        for i in 1..=9 {
            results.push(h.on_ack(sample(i * 3 * MS, 200_000, 46 * MS, 32)));
        }
        assert_eq!(results.iter().position(|&f| f), Some(8));
    }

    #[test]
    fn nothing_happens_below_the_low_window() {
        let mut h = LinuxHyStart::default();
        for i in 0..100 {
            assert!(!h.on_ack(sample(i * MS, i * 1000, 80 * MS, LOW_WINDOW - 1)));
        }
    }
}
