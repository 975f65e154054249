//! The window arithmetic Linux's algorithms share (`tcp_cong.c`): whole segments counted
//! per ACK, `tcp_slow_start` up to ssthresh with the rest of the ACK passed on, and
//! `tcp_cong_avoid_ai`'s credit (`snd_cwnd_cnt`), which a reduction clears
//! (`tcp_init_cwnd_reduction`, `tcp_enter_loss`).

use super::CcState;

#[derive(Debug, Default)]
pub struct LinuxGrowth {
    /// Segments acknowledged towards the next increment (`snd_cwnd_cnt`).
    pub cwnd_cnt: u64,
    /// Acknowledged bytes short of a whole segment.
    carry: u64,
}

impl LinuxGrowth {
    /// Whole segments in `bytes` newly acknowledged, what is short of one kept for the next.
    fn segments(&mut self, bytes: u64, mss: u64) -> u64 {
        let bytes = bytes + self.carry;
        self.carry = bytes % mss;
        bytes / mss
    }

    /// The ACK's `bytes` in whole segments through `tcp_slow_start`: below ssthresh cwnd
    /// grows by one segment per segment acknowledged, up to ssthresh. `Ok` holds cwnd and
    /// the segments left for congestion avoidance, `Err` cwnd when slow start took them all.
    pub fn slow_start(&mut self, s: &CcState, bytes: u64) -> Result<(u64, u64), u64> {
        let acked = self.segments(bytes, s.mss);
        let (cwnd, ssthresh) = (s.cwnd / s.mss, s.ssthresh / s.mss);
        if cwnd >= ssthresh {
            return Ok((cwnd, acked));
        }
        let grown = (cwnd + acked).min(ssthresh);
        match acked - (grown - cwnd) {
            0 => Err(grown),
            rest => Ok((grown, rest)),
        }
    }

    /// `tcp_cong_avoid_ai`: one segment every `w` acknowledged; credit earned at a larger
    /// `w` gives at most one segment now.
    pub fn additive_increase(&mut self, cwnd: u64, w: u64, acked: u64) -> u64 {
        let w = w.max(1);
        let mut cwnd = cwnd;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }

    /// A reduction began: the credit earned at the old window counts for nothing.
    pub fn clear(&mut self) {
        self.cwnd_cnt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_passes_the_rest_on() {
        let mut g = LinuxGrowth::default();
        assert_eq!(g.slow_start(&state(10, 12, 0), 5000), Ok((12, 3)));
        assert_eq!(g.slow_start(&state(10, 20, 0), 5000), Err(15));
        assert_eq!(g.slow_start(&state(20, 20, 0), 5000), Ok((20, 5)));
    }

    #[test]
    fn additive_increase_adds_one_segment_per_w_acknowledged() {
        // tcp_cong_avoid_ai: 10 segments acknowledged at w = 4 add 2, with 2 in credit.
        let mut g = LinuxGrowth::default();
        assert_eq!(g.additive_increase(4, 4, 10), 6);
        assert_eq!(g.cwnd_cnt, 2);
        // Credit earned at a larger w (here 2 ≥ w = 2) gives one segment, then counts anew.
        assert_eq!(g.additive_increase(6, 2, 1), 7);
        assert_eq!(g.cwnd_cnt, 1);
    }

    #[test]
    fn partial_segments_carry_over() {
        let mut g = LinuxGrowth::default();
        assert_eq!(g.segments(1500, 1000), 1);
        assert_eq!(g.segments(500, 1000), 1);
    }
}
