//! How Linux batches a sender's segments (tcp_output.c): it builds GSO buffers of about a
//! millisecond of its pacing rate (`tcp_tso_autosize`) and, while the window has room for
//! less than one such buffer, may hold the data back until more ACKs widen it
//! (`tcp_tso_should_defer`), for at most a millisecond after its last transmission. The
//! held data then leaves as one burst: on a 100 Mb/s path the kernel's segments reach the
//! bottleneck in bursts started about 1 ms apart (docs/calibration.md), where a sender
//! that answers every ACK at once sends two or three.

use crate::engine::Nanos;

/// Linux's `sk_pacing_shift`: a GSO buffer holds about 2^-10 s of the pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// `sk_gso_max_size` of a device without hardware TSO (`GSO_LEGACY_MAX_SIZE`).
pub const GSO_MAX_SIZE: u64 = 65_536;
/// net.ipv4.tcp_min_tso_segs.
const MIN_TSO_SEGS: u64 = 2;
/// net.ipv4.tcp_tso_rtt_log: paths with a minimum RTT below 2^9 µs get larger buffers.
const TSO_RTT_LOG: u32 = 9;
/// net.ipv4.tcp_tso_win_divisor: a third of the window is always worth sending.
const TSO_WIN_DIVISOR: u64 = 3;
/// net.ipv4.tcp_pacing_ss_ratio and tcp_pacing_ca_ratio, in percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;
/// Deferral ends a millisecond after the last transmission (`tcp_tso_should_defer`).
const MAX_DEFER_NS: Nanos = 1_000_000;

/// Linux `tcp_update_pacing_rate` for a connection that does not pace itself, in bytes per
/// second: twice cwnd per SRTT while cwnd is below half of ssthresh, 1.2 times after.
pub fn pacing_rate(mss: u64, cwnd_segments: u64, ssthresh: u64, cwnd: u64, srtt: Nanos) -> u64 {
    let ratio = if cwnd < ssthresh / 2 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    let per_second = u128::from(mss) * u128::from(cwnd_segments) * u128::from(ratio) * 10_000_000;
    (per_second / u128::from(srtt.max(1))) as u64
}

/// Linux `tcp_tso_autosize`: segments per GSO buffer at `rate` bytes per second.
pub fn autosize_segments(rate: u64, min_rtt: Nanos, mss: u64) -> u64 {
    let mut bytes = rate >> PACING_SHIFT;
    let shift = (min_rtt / 1_000) >> TSO_RTT_LOG;
    if shift < 32 {
        bytes += GSO_MAX_SIZE >> shift;
    }
    (bytes.min(GSO_MAX_SIZE) / mss.max(1)).max(MIN_TSO_SEGS)
}

/// What `tcp_tso_should_defer` looks at when the window has room for more than a segment.
#[derive(Debug, Clone, Copy)]
pub struct Moment {
    pub now: Nanos,
    /// The latest transmission of anything (`tcp_wstamp_ns` of an unpaced sender).
    pub last_sent_at: Nanos,
    /// When the oldest unacknowledged segment was sent, if any is.
    pub head_sent_at: Option<Nanos>,
    pub srtt: Nanos,
    /// Bytes the windows let out now: min(send window, cwnd room).
    pub room: u64,
    /// min(peer's window, cwnd), of which a third is always sent.
    pub window: u64,
    /// One GSO buffer, in bytes.
    pub buffer: u64,
}

/// Linux `tcp_tso_should_defer`, outside recovery: wait for a larger burst while the last
/// transmission is under 1 ms old, the room holds neither a whole buffer nor a third of
/// the window, and the ACK of the oldest segment in flight is due (one SRTT after it was
/// sent) within min(SRTT / 2, 1 ms), so that more room comes soon.
pub fn should_defer(m: Moment) -> bool {
    if m.now > m.last_sent_at + MAX_DEFER_NS {
        return false;
    }
    if m.room >= m.buffer || m.room >= m.window / TSO_WIN_DIVISOR {
        return false;
    }
    let Some(head) = m.head_sent_at else {
        return false;
    };
    let ack_due_in = (head + m.srtt).saturating_sub(m.now);
    ack_due_in <= (m.srtt / 2).min(MAX_DEFER_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn moment() -> Moment {
        Moment {
            now: 10_000_000,
            last_sent_at: 9_800_000,
            head_sent_at: Some(0),
            srtt: 10_000_000,
            room: 4 * MSS,
            window: 100 * MSS,
            buffer: 44 * MSS,
        }
    }

    #[test]
    fn pacing_rate_is_twice_cwnd_per_srtt_in_early_slow_start_then_one_point_two() {
        // tcp_update_pacing_rate: 10 segments of 1448 B per 10 ms = 1.448 MB/s.
        assert_eq!(
            pacing_rate(MSS, 10, u64::MAX, 14_480, 10_000_000),
            2_896_000
        );
        assert_eq!(pacing_rate(MSS, 10, 20_000, 14_480, 10_000_000), 1_737_600);
    }

    #[test]
    fn autosize_is_a_millisecond_of_the_rate_within_two_segments_and_64_kib() {
        // 12.5 MB/s (100 Mb/s) >> 10 = 12,207 B = 8 segments on a 20 ms path.
        assert_eq!(autosize_segments(12_500_000, 20_000_000, MSS), 8);
        assert_eq!(autosize_segments(125_000, 20_000_000, MSS), 2);
        assert_eq!(autosize_segments(1_250_000_000, 20_000_000, MSS), 45);
        // tcp_tso_rtt_log: a 2 ms path adds 64 KiB >> 3.
        assert_eq!(autosize_segments(125_000, 2_000_000, MSS), 5);
    }

    #[test]
    fn defers_a_small_room_while_the_last_send_is_recent_and_the_head_is_old() {
        assert!(should_defer(moment()));
    }

    #[test]
    fn sends_once_the_last_transmission_is_over_a_millisecond_old() {
        let m = Moment {
            last_sent_at: 8_999_999,
            ..moment()
        };
        assert!(!should_defer(m));
    }

    #[test]
    fn sends_a_whole_buffer_or_a_third_of_the_window() {
        assert!(!should_defer(Moment {
            room: 44 * MSS,
            ..moment()
        }));
        assert!(!should_defer(Moment {
            room: 34 * MSS,
            ..moment()
        }));
    }

    #[test]
    fn waits_only_for_an_ack_due_within_a_millisecond_or_half_an_srtt() {
        // SRTT 10 ms: the head's ACK is due 0.9 ms from now, then 1.1 ms.
        assert!(should_defer(Moment {
            head_sent_at: Some(900_000),
            ..moment()
        }));
        assert!(!should_defer(Moment {
            head_sent_at: Some(1_100_000),
            ..moment()
        }));
        // SRTT 1 ms: within half of it.
        let short = Moment {
            srtt: 1_000_000,
            head_sent_at: Some(9_400_000),
            ..moment()
        };
        assert!(should_defer(short));
        assert!(!should_defer(Moment {
            head_sent_at: Some(9_600_000),
            ..short
        }));
    }

    #[test]
    fn sends_when_nothing_is_in_flight() {
        assert!(!should_defer(Moment {
            head_sent_at: None,
            ..moment()
        }));
    }
}
