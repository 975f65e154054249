//! Sender rules, each driven with crafted segments. Times in ms.

use super::*;

const MS: Nanos = 1_000_000;
const MSS: u64 = 1000;

fn config() -> SenderConfig {
    SenderConfig {
        cc: "newreno".into(),
        cubic_variant: cc::CubicVariant::Rfc9438,
        reno_variant: cc::RenoVariant::Rfc5681,
        mss: MSS as u32,
        sndbuf: BufferSize::Bytes(1 << 20),
        sndbuf_accounting: SndbufAccounting::Payload,
        rcvbuf: BufferSize::Bytes(1 << 20),
        initial_window: 4,
        window_scaling: false,
        sack: false,
        timestamps: false,
        abc: false,
        hystart: false,
        hystart_variant: HyStartVariant::Rfc9406,
        nagle: true,
        nagle_variant: NagleVariant::Rfc896,
        fast_retransmit: true,
        min_rto_ns: 200 * MS,
        rto_form: crate::tcp::RtoForm::Rfc6298,
        cwnd_validation: true,
        loss_recovery: LossRecovery::Classic,
        slow_start_after_idle: false,
        frto: false,
        undo: false,
        gso: false,
        ecn: crate::tcp::EcnMode::Off,
        rng: crate::engine::RngStream::new(1, "test"),
    }
}

/// A sender past its handshake (SYN-ACK after 100 ms, window 64000 bytes), with `backlog`
/// bytes written and the first window sent.
fn established(cfg: SenderConfig, backlog: u64) -> (Sender, Vec<Segment>) {
    established_with_window(cfg, backlog, 64_000)
}

fn established_with_window(cfg: SenderConfig, backlog: u64, window: u16) -> (Sender, Vec<Segment>) {
    open(cfg, 100 * MS, syn_ack(window), backlog)
}

/// The peer's SYN-ACK offering `window` and our MSS.
fn syn_ack(window: u16) -> Segment {
    Segment {
        syn: true,
        has_ack: true,
        window,
        mss_option: Some(MSS as u16),
        ..Segment::default()
    }
}

/// A sender whose SYN is answered by `syn_ack` at `at`, with `backlog` bytes written then
/// and what it sent at once.
fn open(cfg: SenderConfig, at: Nanos, syn_ack: Segment, backlog: u64) -> (Sender, Vec<Segment>) {
    let mut s = Sender::new(cfg);
    let mut out = Vec::new();
    s.connect(0, &mut out);
    s.on_segment(at, &syn_ack, &mut out);
    s.write(at, backlog);
    out.clear();
    s.try_send(at, &mut out);
    (s, out)
}

fn ack(s: &mut Sender, now_ms: u64, ack: u64) -> Vec<Segment> {
    let mut out = Vec::new();
    s.on_segment(now_ms * MS, &Segment::pure_ack(ack, 64_000), &mut out);
    out
}

fn seqs(out: &[Segment]) -> Vec<u64> {
    out.iter().map(|s| s.seq).collect()
}

// ---- handshake -------------------------------------------------------------------------

#[test]
fn syn_carries_mss_and_window_scale_options() {
    let mut s = Sender::new(SenderConfig {
        window_scaling: true,
        ..config()
    });
    let mut out = Vec::new();
    s.connect(0, &mut out);
    assert!(out[0].syn);
    assert_eq!(out[0].mss_option, Some(1000));
    assert_eq!(out[0].wscale_option, Some(5)); // 1 MiB buffer needs a shift of 5
    assert_eq!(s.next_deadline(), Some(1000 * MS)); // RFC 6298 §2.1
}

#[test]
fn lost_syn_is_retransmitted_with_backoff_and_shrinks_the_initial_window() {
    let mut s = Sender::new(config());
    let mut out = Vec::new();
    s.connect(0, &mut out);
    out.clear();
    s.on_timer(1000 * MS, &mut out);
    assert!(out[0].syn && out[0].retransmission);
    assert_eq!(s.next_deadline(), Some(3000 * MS)); // backed off to 2 s
    let syn_ack = Segment {
        syn: true,
        has_ack: true,
        window: 64_000,
        ..Segment::default()
    };
    s.on_segment(1500 * MS, &syn_ack, &mut out);
    assert_eq!(s.cwnd(), MSS); // RFC 5681 §3.1
    assert_eq!(s.rto().rto(), 3000 * MS); // RFC 6298 §5.7
}

#[test]
fn handshake_gives_the_first_rtt_sample_and_the_initial_window() {
    let (s, out) = established(config(), 100_000);
    assert_eq!(s.rto().srtt(), Some(100 * MS));
    assert_eq!(seqs(&out), vec![0, 1000, 2000, 3000]); // IW = 4 segments
}

#[test]
fn opening_without_a_handshake_negotiates_as_the_syns_would_and_measures_nothing() {
    use crate::tcp::{Receiver, ReceiverConfig};
    let mut s = Sender::new(SenderConfig {
        mss: 1460,
        window_scaling: true,
        sack: true,
        timestamps: true,
        ..config()
    });
    let mut r = Receiver::new(ReceiverConfig {
        mss: 1000,
        rcvbuf: BufferSize::Bytes(1 << 20),
        window_scaling: true,
        sack: false,
        timestamps: true,
        delayed_ack: false,
        delack_timeout_ns: 0,
        quickack: false,
        dsack: false,
        initial_rwnd: None,
        ecn: crate::tcp::EcnMode::Off,
    });
    r.on_segment(0, &s.syn(0));
    let syn_ack = r.hand_over_syn_ack(0);
    s.open_established(&syn_ack);
    assert!(s.is_established());
    // RFC 7323 §2.2: the window field of the SYN-ACK is never scaled; both offered scaling.
    assert_eq!(syn_ack.window, 65_535);
    assert_eq!(syn_ack.wscale_option, Some(5));
    // SACK needs both SYNs' SACK-permitted (RFC 2018 §2): the receiver did not offer it.
    assert!(!syn_ack.sack_permitted);
    // The smaller MSS, less the 12-byte timestamps option (RFC 6691 §2).
    s.write(100 * MS, 100_000);
    let mut out = Vec::new();
    s.try_send(0, &mut out);
    assert_eq!(out.len(), 4); // IW = 4 segments
    assert_eq!(out[0].len, 988);
    assert!(out[0].timestamps.is_some());
    // Nothing crossed the path: no RTT sample, the timer runs on the initial RTO
    // (RFC 6298 §2.1).
    assert_eq!(s.rto().srtt(), None);
    assert_eq!(s.next_deadline(), Some(1000 * MS));
}

// ---- windows ----------------------------------------------------------------------------

#[test]
fn peer_window_limits_the_flight() {
    let (mut s, _) = established(config(), 100_000);
    let mut out = Vec::new();
    s.on_segment(200 * MS, &Segment::pure_ack(1000, 2000), &mut out);
    // snd_una = 1000, window 2000 → may send up to 3000; 1000..4000 is already out.
    assert!(out.is_empty());
    assert_eq!(s.limit(true), Limit::Rwnd);
}

#[test]
fn send_buffer_bounds_unacknowledged_plus_unsent_data() {
    let (mut s, out) = established(
        SenderConfig {
            sndbuf: BufferSize::Bytes(2500),
            ..config()
        },
        2500,
    );
    assert_eq!(s.buffer_space(), 0);
    assert_eq!(seqs(&out), vec![0, 1000]); // the 500-byte tail waits (Nagle)
    ack(&mut s, 200, 1000);
    assert_eq!(s.buffer_space(), 1000);
}

#[test]
fn linux_send_buffer_holds_skbs_against_twice_sndbuf_and_wakes_the_writer_at_a_third_free() {
    // sk_sndbuf = 2 × 8000; without GSO every 1000-byte segment is an skb charged 1832
    // (tcp_sendmsg_locked), and a ninth skb still begins at a charge of 14,656 < 16,000.
    let (mut s, _) = established(
        SenderConfig {
            sndbuf: BufferSize::Bytes(8_000),
            sndbuf_accounting: SndbufAccounting::Linux,
            ..config()
        },
        0,
    );
    assert_eq!(s.buffer_space(), 9_000);
    s.write(100 * MS, 9_000);
    s.try_send(100 * MS, &mut Vec::new());
    assert_eq!(s.buffer_space(), 0);
    s.wait_for_space();
    // sk_stream_write_space: woken only once free ≥ charge / 2. Three skbs acknowledged
    // leave 6 × 1832 = 10,992 charged (5008 free); four leave 9160 (6840 free ≥ 4580).
    ack(&mut s, 200, 3_000);
    assert_eq!(s.buffer_space(), 0);
    ack(&mut s, 201, 4_000);
    assert_eq!(s.buffer_space(), 4_000);
}

#[test]
fn slow_start_grows_one_mss_per_ack() {
    let (mut s, _) = established(config(), 100_000);
    let out = ack(&mut s, 200, 1000);
    assert_eq!(s.cwnd(), 5 * MSS);
    assert_eq!(seqs(&out), vec![4000, 5000]); // one replaces the acked segment, one grows
}

#[test]
fn congestion_avoidance_grows_about_one_mss_per_window() {
    let (mut s, _) = established(config(), 1_000_000);
    s.ssthresh = 2 * MSS;
    for i in 1..=4 {
        ack(&mut s, 200, i * 1000);
    }
    // 4 ACKs at cwnd ≈ 4 MSS add ⌊MSS²/cwnd⌋ each: 250 + 235 + 222 + 212.
    assert_eq!(s.cwnd(), 4000 + 250 + 235 + 222 + 212);
}

// ---- congestion window validation (RFC 7661) ---------------------------------------------

/// ACKs one segment at a time with the peer's window fixed at `window`.
fn ack_window(s: &mut Sender, now_ms: u64, ack: u64, window: u16) -> Vec<Segment> {
    let mut out = Vec::new();
    s.on_segment(now_ms * MS, &Segment::pure_ack(ack, window), &mut out);
    out
}

#[test]
fn cwnd_does_not_grow_in_avoidance_while_the_peer_window_limits() {
    // RFC 7661 §4.3 (Linux tcp_is_cwnd_limited): in congestion avoidance cwnd grows only
    // in a round in which the flight filled it. A 3000-byte window keeps the flight at 3
    // segments under a 4-segment cwnd.
    let (mut s, _) = established_with_window(config(), 1_000_000, 3000);
    s.ssthresh = 2 * MSS;
    for i in 1..=40 {
        ack_window(&mut s, 200 + i, i * 1000, 3000);
    }
    assert_eq!(s.cwnd(), 4 * MSS);
    assert_eq!(s.in_flight(), 3000);
}

#[test]
fn slow_start_grows_to_twice_the_largest_flight_while_the_peer_window_limits() {
    // RFC 7661 §4.3 with Linux's slow-start allowance: cwnd may reach twice what the
    // flight used in the last round, not more. Flight 3 segments → cwnd stops at 6.
    let (mut s, _) = established_with_window(config(), 1_000_000, 3000);
    for i in 1..=40 {
        ack_window(&mut s, 200 + i, i * 1000, 3000);
    }
    assert_eq!(s.cwnd(), 6 * MSS);
}

#[test]
fn without_validation_cwnd_grows_while_the_peer_window_limits() {
    // RFC 5681 §3.1 alone (stacks before RFC 2861): every ACK of new data grows cwnd,
    // whatever limits the flight.
    let cfg = SenderConfig {
        cwnd_validation: false,
        ..config()
    };
    let (mut s, _) = established_with_window(cfg, 1_000_000, 3000);
    for i in 1..=40 {
        ack_window(&mut s, 200 + i, i * 1000, 3000);
    }
    assert_eq!(s.cwnd(), 44 * MSS);
}

#[test]
fn cwnd_grows_again_once_it_limits_the_sender() {
    // The window opens wide: the flight fills cwnd again and growth resumes (slow start
    // adds one segment per ACK). The ACK that opens it grows nothing: the round before
    // it was limited by the peer.
    let (mut s, _) = established_with_window(config(), 1_000_000, 3000);
    for i in 1..=40 {
        ack_window(&mut s, 200 + i, i * 1000, 3000);
    }
    let out = ack_window(&mut s, 300, 41_000, 60_000);
    assert_eq!((s.cwnd(), out.len()), (6 * MSS, 4));
    ack_window(&mut s, 310, 42_000, 60_000);
    assert_eq!(s.cwnd(), 7 * MSS);
}

// ---- Nagle and sender silly-window avoidance (RFC 896, RFC 1122 §4.2.3.4) ----------------

#[test]
fn nagle_holds_a_small_segment_while_data_is_unacknowledged() {
    let (mut s, out) = established(config(), 1500);
    assert_eq!(seqs(&out), vec![0]);
    let mut out = Vec::new();
    s.try_send(150 * MS, &mut out);
    assert!(out.is_empty());
    let out = ack(&mut s, 200, 1000);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, out[0].len), (1000, 500));
}

#[test]
fn without_nagle_a_small_tail_goes_at_once() {
    let (_, out) = established(
        SenderConfig {
            nagle: false,
            ..config()
        },
        1500,
    );
    assert_eq!(
        out.iter().map(|s| s.len).collect::<Vec<_>>(),
        vec![1000, 500]
    );
}

#[test]
fn small_segment_that_fills_half_the_peer_window_is_sent() {
    let (mut s, _) = established(config(), 1000);
    s.max_rwnd = 1000;
    s.write(100 * MS, 600);
    let mut out = Vec::new();
    s.try_send(150 * MS, &mut out);
    assert_eq!(out[0].len, 600); // ≥ half of the largest window offered
}

#[test]
fn nagle_follows_the_two_steps_of_seed_001_fig_2() {
    // Seed 001, Fig. 2 (after Comer & Lin 1995): S1, send a full segment whenever at least
    // an MSS is queued and the window takes it; S2, when an ACK acknowledges everything
    // outstanding, send what is queued. That is RFC 896's rule as RFC 1122 §4.2.3.4 words
    // it; between the steps a short segment waits.
    let (mut s, out) = established(config(), 500);
    assert_eq!((out[0].seq, out[0].len), (0, 500)); // nothing outstanding: it goes
    s.write(100 * MS, 300);
    let mut out = Vec::new();
    s.try_send(110 * MS, &mut out);
    assert!(
        out.is_empty(),
        "300 bytes wait while 500 are unacknowledged"
    );
    s.write(100 * MS, 900);
    s.try_send(120 * MS, &mut out);
    // S1: 1200 bytes queued, so a full segment goes and the 200-byte rest waits.
    assert_eq!(
        out.iter().map(|g| (g.seq, g.len)).collect::<Vec<_>>(),
        vec![(500, 1000)]
    );
    // An ACK of part of the data releases nothing ...
    assert!(ack(&mut s, 200, 500).is_empty());
    // ... S2: the ACK of all outstanding data releases the rest.
    let out = ack(&mut s, 210, 1500);
    assert_eq!(
        out.iter().map(|g| (g.seq, g.len)).collect::<Vec<_>>(),
        vec![(1500, 200)]
    );
}

#[test]
fn rfc896_holds_the_tail_of_a_multi_segment_write() {
    // RFC 1122 §4.2.3.4: full segments go, the 500-byte tail waits for all data's ACK.
    let (_, out) = established(config(), 2500);
    assert_eq!(seqs(&out), vec![0, 1000]);
}

fn minshall() -> SenderConfig {
    SenderConfig {
        nagle_variant: NagleVariant::Minshall,
        ..config()
    }
}

#[test]
fn minshall_sends_the_tail_of_a_multi_segment_write_at_once() {
    // Minshall's variant (Linux tcp_minshall_check): no earlier small segment is
    // unacknowledged, so the tail leaves behind the two full segments.
    let (_, out) = established(minshall(), 2500);
    assert_eq!(
        out.iter().map(|g| (g.seq, g.len)).collect::<Vec<_>>(),
        vec![(0, 1000), (1000, 1000), (2000, 500)]
    );
}

#[test]
fn minshall_holds_a_small_segment_while_an_earlier_small_one_is_unacknowledged() {
    let (mut s, _) = established(minshall(), 2500);
    s.write(100 * MS, 300);
    let mut out = Vec::new();
    s.try_send(110 * MS, &mut out);
    assert!(out.is_empty(), "the 500-byte tail is still unacknowledged");
    // The ACK of the small segment releases the next one.
    let out = ack_window(&mut s, 200, 2500, 64_000);
    assert_eq!((out[0].seq, out[0].len), (2500, 300));
    // While only full segments are unacknowledged, a small one goes (RFC 896 would wait).
    let (mut s, _) = established(minshall(), 3000);
    s.write(100 * MS, 300);
    let mut out = Vec::new();
    s.try_send(110 * MS, &mut out);
    assert_eq!((out[0].seq, out[0].len), (3000, 300));
}

// ---- fast retransmit and NewReno (RFC 5681 §3.2, RFC 6582) -------------------------------

fn into_steady_flight(cfg: SenderConfig) -> Sender {
    // cwnd 10 MSS in congestion avoidance, 10 segments 0..10000 outstanding.
    let (mut s, _) = established(
        SenderConfig {
            initial_window: 10,
            ..cfg
        },
        1_000_000,
    );
    s.ssthresh = 10 * MSS;
    s
}

#[test]
fn third_duplicate_ack_triggers_fast_retransmit() {
    let mut s = into_steady_flight(config());
    assert!(ack(&mut s, 200, 0).is_empty());
    assert!(ack(&mut s, 201, 0).is_empty());
    let out = ack(&mut s, 202, 0);
    assert_eq!(seqs(&out), vec![0]);
    assert!(out[0].retransmission);
    assert_eq!(s.ssthresh(), 5 * MSS); // flight 10 MSS / 2
    assert_eq!(s.cwnd(), 8 * MSS); // ssthresh + 3 MSS
    assert_eq!(s.stats.fast_retransmits, 1);
}

#[test]
fn further_duplicates_inflate_the_window_and_release_new_data() {
    let mut s = into_steady_flight(config());
    for t in 0..3 {
        ack(&mut s, 200 + t, 0);
    }
    for t in 0..2 {
        assert!(ack(&mut s, 203 + t, 0).is_empty()); // cwnd 9, 10 MSS: flight is 10
    }
    let out = ack(&mut s, 205, 0);
    assert_eq!(seqs(&out), vec![10_000]); // cwnd 11 MSS opens one new segment
}

#[test]
fn fast_retransmit_off_leaves_recovery_to_the_timer() {
    let mut s = into_steady_flight(SenderConfig {
        fast_retransmit: false,
        ..config()
    });
    for t in 0..5 {
        assert!(ack(&mut s, 200 + t, 0).is_empty());
    }
    assert_eq!(s.stats.fast_retransmits, 0);
    let deadline = s.next_deadline().unwrap();
    let mut out = Vec::new();
    s.on_timer(deadline, &mut out);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn partial_ack_retransmits_the_next_hole_and_stays_in_recovery() {
    let mut s = into_steady_flight(config());
    for t in 0..3 {
        ack(&mut s, 200 + t, 0);
    }
    // Segments 0 and 3000 were lost: the retransmission of 0 is ACKed up to 3000.
    let out = ack(&mut s, 300, 3000);
    assert_eq!(out[0].seq, 3000);
    assert!(out[0].retransmission);
    assert!(s.in_recovery);
    // Deflate by the 3000 acked, add back one MSS: 8 − 3 + 1.
    assert_eq!(s.cwnd(), 6 * MSS);
}

#[test]
fn full_ack_ends_recovery_with_a_deflated_window() {
    let mut s = into_steady_flight(config());
    for t in 0..3 {
        ack(&mut s, 200 + t, 0);
    }
    ack(&mut s, 300, 10_000);
    assert!(!s.in_recovery);
    // min(ssthresh, max(FlightSize, MSS) + MSS) with nothing outstanding = 2 MSS.
    assert_eq!(s.cwnd(), 2 * MSS);
}

#[test]
fn duplicates_after_a_timeout_do_not_cause_a_second_fast_retransmit() {
    let mut s = into_steady_flight(config());
    let deadline = s.next_deadline().unwrap();
    s.on_timer(deadline, &mut Vec::new());
    // The receiver still holds later segments and answers the resend with duplicates
    // at or below `recover` (RFC 6582 §3.2 step 2).
    for t in 0..4 {
        ack(&mut s, 2000 + t, 0);
    }
    assert_eq!(s.stats.fast_retransmits, 0);
}

#[test]
fn an_ack_that_changes_the_window_is_not_a_duplicate() {
    let mut s = into_steady_flight(config());
    let mut out = Vec::new();
    for (t, w) in [(200, 60_000), (201, 59_000), (202, 58_000)] {
        s.on_segment(t * MS, &Segment::pure_ack(0, w), &mut out);
    }
    assert_eq!(s.stats.fast_retransmits, 0);
}

// ---- retransmission timer (RFC 6298, RFC 5681 §3.1) -------------------------------------

#[test]
fn timeout_resets_to_the_loss_window_and_goes_back_n() {
    let mut s = into_steady_flight(config());
    let deadline = s.next_deadline().unwrap();
    let mut out = Vec::new();
    s.on_timer(deadline, &mut out);
    assert_eq!(s.cwnd(), MSS);
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(seqs(&out), vec![0]);
    // Backed off: the next deadline is twice the RTO later.
    assert_eq!(s.next_deadline(), Some(deadline + s.rto().rto()));
    assert_eq!(s.rto().rto(), 600 * MS); // RTO 300 ms after the 100 ms handshake sample
                                         // The resend's ACK slides the window from snd_una again, in slow start.
    let out = ack(&mut s, 1000, 1000);
    assert_eq!(seqs(&out), vec![1000, 2000]);
    assert!(out.iter().all(|seg| seg.retransmission));
}

#[test]
fn timer_is_stopped_when_everything_is_acknowledged_and_restarted_on_new_acks() {
    let (mut s, _) = established(config(), 2000);
    let first = s.next_deadline().unwrap();
    ack(&mut s, 200, 1000);
    assert!(s.next_deadline().unwrap() > first);
    ack(&mut s, 250, 2000);
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn karn_no_rtt_sample_from_an_ack_that_covers_a_retransmission() {
    let mut s = into_steady_flight(config());
    for t in 0..3 {
        ack(&mut s, 200 + t, 0);
    }
    let srtt = s.rto().srtt();
    // The full ACK covers the retransmitted segment 0: ambiguous, no sample.
    let out = ack(&mut s, 5000, 10_000);
    assert_eq!(s.rto().srtt(), srtt);
    assert_eq!(seqs(&out), vec![10_000, 11_000]);
    // First transmissions sent at 5000 ms and ACKed at 5300 ms: a 300 ms sample.
    ack(&mut s, 5300, 12_000);
    assert_eq!(s.rto().srtt(), Some((7 * 100 * MS + 300 * MS) / 8));
}

#[test]
fn limit_reports_what_blocks_the_sender() {
    let (mut s, _) = established(config(), 100_000);
    assert_eq!(s.limit(true), Limit::Cwnd);
    let (mut t, _) = established(config(), 2000);
    assert_eq!(t.limit(true), Limit::SndBuf);
    assert_eq!(t.limit(false), Limit::App);
    s.rwnd = 1000;
    assert_eq!(s.limit(true), Limit::Rwnd);
    t.write(100 * MS, 5000);
    t.rwnd = 2000;
    assert_eq!(t.limit(true), Limit::Rwnd);
}

#[test]
fn a_tail_held_by_nagle_below_an_open_window_is_not_the_windows_limit() {
    // 2,500 bytes written: two full segments leave, Nagle (RFC 896) holds the 500-byte
    // tail while they are unacknowledged. The window has room for whole segments, so what
    // stops the sender is the full buffer (the application waits) or the application.
    let (s, out) = established(config(), 2500);
    assert_eq!(seqs(&out), vec![0, 1000]);
    assert_eq!(s.limit(true), Limit::SndBuf);
    assert_eq!(s.limit(false), Limit::App);
    // With less than a segment of window left, the window is the limit, as before.
    let (s, out) = established_with_window(config(), 2500, 2400);
    assert_eq!(seqs(&out), vec![0, 1000]);
    assert_eq!(s.limit(true), Limit::Rwnd);
}

// ---- persist timer (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17) ----------------------------------

/// Everything sent is acknowledged with a closed window; 10000 bytes were written.
fn closed_window() -> Sender {
    let (mut s, _) = established(config(), 10_000);
    assert!(ack_window(&mut s, 200, 4000, 0).is_empty());
    s
}

#[test]
fn a_closed_window_arms_the_persist_timer_at_the_rto() {
    let s = closed_window();
    assert_eq!(s.next_deadline(), Some(200 * MS + s.rto().rto()));
}

#[test]
fn persist_probes_carry_one_byte_beyond_the_window_and_back_off() {
    // RFC 9293 §3.8.6.1: probe a zero window; RFC 1122 §4.2.2.17: exponential back-off
    // (Linux tcp_probe0_when: RTO · 2^probes).
    let mut s = closed_window();
    let rto = s.rto().rto();
    let mut at = 200 * MS + rto;
    for k in 0..3 {
        let mut out = Vec::new();
        s.on_timer(at, &mut out);
        assert_eq!(
            out.iter().map(|g| (g.seq, g.len)).collect::<Vec<_>>(),
            vec![(4000, 1)]
        );
        at += rto << (k + 1);
        assert_eq!(s.next_deadline(), Some(at));
    }
    assert_eq!(s.stats.persist_probes, 3);
}

#[test]
fn the_persist_timer_is_not_a_retransmission_timeout() {
    // The probe answers a closed window, not a loss: no RTO back-off, no cwnd or ssthresh
    // reduction, no timeout counted.
    let mut s = closed_window();
    let (rto, cwnd, ssthresh) = (s.rto().rto(), s.cwnd(), s.ssthresh());
    let at = s.next_deadline().unwrap();
    s.on_timer(at, &mut Vec::new());
    assert_eq!(
        (s.rto().rto(), s.cwnd(), s.ssthresh()),
        (rto, cwnd, ssthresh)
    );
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn an_ack_that_opens_the_window_resumes_sending_and_resets_the_back_off() {
    let mut s = closed_window();
    let at = s.next_deadline().unwrap();
    s.on_timer(at, &mut Vec::new());
    let out = ack_window(&mut s, 2000, 4000, 64_000);
    assert_eq!(out[0].seq, 4000);
    assert_eq!(s.persist, None);
    assert_eq!(s.persist_backoff, 0);
}

#[test]
fn a_probe_byte_the_receiver_kept_is_acknowledged() {
    // The window had reopened and the update was lost: the receiver keeps the byte, and
    // the ACK that covers it is not an ACK of unsent data.
    let mut s = closed_window();
    let at = s.next_deadline().unwrap();
    s.on_timer(at, &mut Vec::new());
    let out = ack_window(&mut s, 2000, 4001, 64_000);
    assert_eq!(s.snd_una(), 4001);
    assert_eq!(out[0].seq, 4001);
}

#[test]
fn the_persist_timer_overrides_sender_silly_window_avoidance() {
    // RFC 1122 §4.2.3.4: a window smaller than a segment and under half the largest one
    // offered holds data back; the override timeout sends what fits.
    let (mut s, _) = established(config(), 10_000);
    assert!(ack_window(&mut s, 200, 4000, 500).is_empty());
    let at = s.next_deadline().unwrap();
    let mut out = Vec::new();
    s.on_timer(at, &mut out);
    assert_eq!((out[0].seq, out[0].len), (4000, 500));
    assert_eq!(s.stats.persist_probes, 0);
}

// ---- Tahoe and Reno against NewReno ------------------------------------------------------

fn flavour(cc: &str) -> Sender {
    into_steady_flight(SenderConfig {
        cc: cc.into(),
        ..config()
    })
}

#[test]
fn tahoe_fast_retransmit_restarts_from_one_segment() {
    let mut s = flavour("tahoe");
    for t in 0..2 {
        ack(&mut s, 200 + t, 0);
    }
    let out = ack(&mut s, 202, 0);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 5 * MSS));
    assert!(!s.in_recovery);
    // Further duplicates do not inflate anything: Tahoe has no fast recovery.
    assert!(ack(&mut s, 203, 0).is_empty());
    assert_eq!(s.cwnd(), MSS);
}

#[test]
fn reno_leaves_recovery_at_the_first_new_ack_newreno_at_the_full_ack() {
    // Segments 0 and 3000 of the window 0..10000 are lost.
    let mut reno = flavour("reno");
    let mut newreno = flavour("newreno");
    for s in [&mut reno, &mut newreno] {
        for t in 0..3 {
            ack(s, 200 + t, 0);
        }
    }
    let reno_out = ack(&mut reno, 300, 3000);
    let newreno_out = ack(&mut newreno, 300, 3000);
    // Reno deflates to ssthresh and waits for three more duplicates before it resends 3000.
    assert!(!reno.in_recovery);
    assert_eq!(reno.cwnd(), 5 * MSS);
    assert!(reno_out.is_empty());
    // NewReno resends the second hole at once and keeps its single reduction.
    assert!(newreno.in_recovery);
    assert_eq!(newreno_out[0].seq, 3000);
    // Reno's second loss costs a second halving.
    for t in 0..3 {
        ack(&mut reno, 400 + t, 3000);
    }
    assert_eq!(reno.stats.fast_retransmits, 2);
    assert_eq!(reno.ssthresh(), 3500); // half of the 7000 bytes then in flight
    assert_eq!(newreno.ssthresh(), 5 * MSS);
}

// ---- SACK (RFC 2018, RFC 6675) ------------------------------------------------------------

/// A sender with SACK negotiated past its handshake (100 ms RTT), `backlog` bytes written
/// and the first window (10 segments) sent at 100 ms.
fn sack_established(loss_recovery: LossRecovery, backlog: u64) -> (Sender, Vec<Segment>) {
    let cfg = SenderConfig {
        sack: true,
        initial_window: 10,
        loss_recovery,
        ..config()
    };
    let peer = Segment {
        sack_permitted: true,
        ..syn_ack(64_000)
    };
    let (s, out) = open(cfg, 100 * MS, peer, backlog);
    assert!(s.syn(0).sack_permitted);
    (s, out)
}

fn sack_sender() -> Sender {
    let (mut s, _) = sack_established(LossRecovery::Classic, 1_000_000);
    s.ssthresh = 10 * MSS;
    s
}

fn sack_ack(s: &mut Sender, now_ms: u64, ack: u64, blocks: &[(u64, u64)]) -> Vec<Segment> {
    let mut seg = Segment::pure_ack(ack, 64_000);
    for (i, &b) in blocks.iter().enumerate() {
        seg.sack[i] = b;
    }
    seg.sack_len = blocks.len() as u8;
    let mut out = Vec::new();
    s.on_segment(now_ms * MS, &seg, &mut out);
    out
}

#[test]
fn sack_recovers_three_losses_in_one_round_trip() {
    // Window 0..10000; segments 0, 3000 and 6000 are lost. The receiver reports each
    // arrival with SACK; every hole is resent before any retransmission is acknowledged.
    let mut s = sack_sender();
    let mut resent = Vec::new();
    let mut sacked: Vec<(u64, u64)> = Vec::new();
    for (t, seg) in [1000u64, 2000, 4000, 5000, 7000, 8000, 9000]
        .into_iter()
        .enumerate()
    {
        sacked.push((seg, seg + 1000));
        sacked.sort();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for &(a, b) in &sacked {
            match merged.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => merged.push((a, b)),
            }
        }
        let out = sack_ack(&mut s, 200 + t as u64, 0, &merged);
        resent.extend(out.iter().filter(|x| x.retransmission).map(|x| x.seq));
    }
    assert_eq!(resent, vec![0, 3000, 6000]);
    assert_eq!(s.stats.fast_retransmits, 1);
    assert_eq!(s.ssthresh(), 5 * MSS);
    // One cumulative ACK for everything ends recovery.
    sack_ack(&mut s, 300, 10_000, &[]);
    assert!(!s.in_recovery);
    assert_eq!(s.cwnd(), 5 * MSS);
}

#[test]
fn sack_enters_recovery_on_three_duplicates_or_a_lost_head() {
    // Three SACKed segments above the head make it lost (IsLost) on the third ACK.
    let mut s = sack_sender();
    assert!(sack_ack(&mut s, 200, 0, &[(1000, 2000)]).is_empty());
    assert!(sack_ack(&mut s, 201, 0, &[(1000, 3000)]).is_empty());
    let out = sack_ack(&mut s, 202, 0, &[(1000, 4000)]);
    assert_eq!(out[0].seq, 0);
    assert!(s.in_recovery);
}

#[test]
fn an_ack_without_new_sack_information_is_not_a_duplicate() {
    let mut s = sack_sender();
    for t in 0..5 {
        sack_ack(&mut s, 200 + t, 0, &[(1000, 2000)]);
    }
    assert_eq!(s.stats.fast_retransmits, 0);
}

#[test]
fn after_a_timeout_sacked_data_is_not_resent() {
    let mut s = sack_sender();
    sack_ack(&mut s, 200, 0, &[(1000, 2000)]);
    let deadline = s.next_deadline().unwrap();
    let mut out = Vec::new();
    s.on_timer(deadline, &mut out);
    assert_eq!(seqs(&out), vec![0]);
    // With 0 acknowledged and 1000..2000 still SACKed above it, the next resend skips
    // the SACKed block and goes to 2000.
    let out = sack_ack(&mut s, 2000, 1000, &[(1000, 2000)]);
    assert_eq!(out[0].seq, 2000);
}

// ---- timestamps (RFC 7323) ---------------------------------------------------------------

#[test]
fn timestamps_shrink_the_payload_and_resolve_karns_ambiguity() {
    let cfg = SenderConfig {
        timestamps: true,
        initial_window: 10,
        ..config()
    };
    let peer = Segment {
        timestamps: Some(Timestamps { val: 7, ecr: 0 }),
        ..syn_ack(64_000)
    };
    let (mut s, out) = open(cfg, 100 * MS, peer, 100_000);
    assert!(s.syn(0).timestamps.is_some());
    assert_eq!(out[0].len, 988); // RFC 6691: 1000 − 12 option bytes
    assert_eq!(out[0].timestamps, Some(Timestamps { val: 100, ecr: 7 }));
    s.ssthresh = 10 * MSS;
    // Fast retransmit of segment 0, then an ACK covering it: Karn forbids the per-segment
    // sample, but the echo of the retransmission's TSval (sent at 202 ms) gives 400 ms.
    for t in 0..3 {
        let mut dup = Segment::pure_ack(0, 64_000);
        dup.timestamps = Some(Timestamps { val: 8, ecr: 100 });
        s.on_segment((200 + t) * MS, &dup, &mut Vec::new());
    }
    let mut ack = Segment::pure_ack(988, 64_000);
    ack.timestamps = Some(Timestamps { val: 9, ecr: 202 });
    s.on_segment(602 * MS, &ack, &mut Vec::new());
    assert_eq!(s.rto().srtt(), Some((7 * 100 * MS + 400 * MS) / 8));
}

// ---- RACK-TLP recovery (loss_recovery = rack) -----------------------------------------

/// A SACK sender with RACK-TLP past its handshake (100 ms RTT), ten segments sent at 100 ms.
fn rack_sender(backlog: u64) -> (Sender, Vec<Segment>) {
    sack_established(LossRecovery::Rack, backlog)
}

fn resent(out: &[Segment], seq: u64) -> bool {
    out.iter().any(|seg| seg.seq == seq && seg.retransmission)
}

#[test]
fn rack_waits_a_quarter_min_rtt_then_marks_the_hole_lost_once_three_segments_are_sacked() {
    // RFC 8985 §6.2: with fewer than DupThresh segments SACKed the reordering window is
    // min_rtt/4 (a timer); from the third on it is 0 and the hole is lost at once.
    let (mut s, sent) = rack_sender(100_000);
    assert_eq!(sent.len(), 10);
    let out = sack_ack(&mut s, 200, 0, &[(1000, 2000)]);
    assert!(!resent(&out, 0));
    assert_eq!(s.next_deadline(), Some(225 * MS));
    sack_ack(&mut s, 200, 0, &[(1000, 3000)]);
    let out = sack_ack(&mut s, 200, 0, &[(1000, 4000)]);
    assert!(resent(&out, 0));
    assert_eq!(s.stats.fast_retransmits, 1);
}

#[test]
fn rack_times_round_trips_from_newly_sacked_segments_but_not_from_ones_sacked_before() {
    // Linux tcp_ack_update_rtt: an ACK that only SACKs is timed by the oldest segment it
    // newly SACKs that was never resent (sack_rtt_us), so recovery keeps measuring; a
    // cumulative ACK by the oldest segment it covers that was not SACKed before
    // (first_ackt). Ten segments sent at 100 ms; SRTT 100 ms from the handshake.
    let (mut s, _) = rack_sender(100_000);
    sack_ack(&mut s, 260, 0, &[(1000, 2000)]);
    let after_sack = (7 * 100 * MS + 160 * MS) / 8;
    assert_eq!(s.rto().srtt(), Some(after_sack));
    ack(&mut s, 270, 1000);
    let after_ack = (7 * after_sack + 170 * MS) / 8;
    assert_eq!(s.rto().srtt(), Some(after_ack));
    // Covers only the segment SACKed at 260 ms: no sample (no timestamps either).
    ack(&mut s, 280, 2000);
    assert_eq!(s.rto().srtt(), Some(after_ack));
}

#[test]
fn prr_lets_out_ssthresh_over_recover_fs_of_what_each_ack_delivers() {
    // RFC 6937 with Reno (ssthresh = cwnd/2 = 5 of RecoverFS = 10, as Linux halves cwnd):
    // while the flight is above ssthresh, prr_out follows ⌈prr_delivered · 5 / 10⌉, so the
    // entering ACK's retransmission and one new segment for every two more deliveries
    // leave; then the flight settles at ssthresh.
    let (mut s, _) = rack_sender(100_000);
    for end in 2..=4 {
        sack_ack(&mut s, 200, 0, &[(1000, end * 1000)]);
    }
    assert_eq!(s.ssthresh(), 5 * MSS);
    let sent: Vec<usize> = (5..=10)
        .map(|end| sack_ack(&mut s, 200, 0, &[(1000, end * 1000)]).len())
        .collect();
    assert_eq!(sent, vec![0, 1, 0, 1, 0, 0]);
    assert_eq!(s.cwnd(), 5 * MSS);
}

#[test]
fn a_tail_loss_is_probed_with_the_last_segment_before_the_timer_expires() {
    // RFC 8985 §7: segments 8 and 9 lost, nothing left to send: PTO = 2·SRTT + 2 ms after
    // the last ACK, before the RTO; the probe resends the last segment.
    let (mut s, _) = rack_sender(10_000);
    ack(&mut s, 200, 8000);
    assert_eq!(s.next_deadline(), Some(402 * MS));
    let mut out = Vec::new();
    s.on_timer(402 * MS, &mut out);
    assert!(resent(&out, 9000));
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn a_timeout_with_rack_marks_everything_lost_and_restarts_from_one_segment() {
    // Linux tcp_enter_loss: the head and what was sent a RACK RTT ago are lost, cwnd = in
    // flight + 1 segment, the head is resent at once.
    // Nothing is acknowledged: the tail probe (2·SRTT + 2 ms after the send) comes first
    // and resends the last segment; the RTO follows one RTO after the head was sent.
    let (mut s, _) = rack_sender(10_000);
    assert_eq!(s.next_deadline(), Some(302 * MS));
    let mut out = Vec::new();
    s.on_timer(302 * MS, &mut out);
    assert_eq!(seqs(&out), vec![9000]);
    assert_eq!(s.next_deadline(), Some(400 * MS));
    out.clear();
    s.on_timer(400 * MS, &mut out);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(seqs(&out), vec![0]);
    // The probe's retransmission of the last segment, 98 ms old, is still counted in
    // flight (Linux tcp_mark_skb_lost keeps SACKED_RETRANS on a segment first marked
    // lost): cwnd = 1 + 1 segments.
    assert_eq!(s.cwnd(), 2 * MSS);
}

// ---- undo of spurious reductions (undo = true, frto) ------------------------------------

/// A RACK-TLP sender that undoes spurious reductions (with F-RTO if asked), timestamps on
/// if asked; ten segments sent at 100 ms (100 ms RTT), a megabyte written.
fn undo_sender(timestamps: bool, undo: bool, frto: bool) -> Sender {
    recovering_sender(true, timestamps, undo, frto)
}

/// As `undo_sender`, with SACK negotiated or not.
fn recovering_sender(sack: bool, timestamps: bool, undo: bool, frto: bool) -> Sender {
    let cfg = SenderConfig {
        sack,
        initial_window: 10,
        loss_recovery: LossRecovery::Rack,
        timestamps,
        undo,
        frto,
        ..config()
    };
    let peer = Segment {
        sack_permitted: sack,
        timestamps: timestamps.then_some(Timestamps { val: 1, ecr: 0 }),
        ..syn_ack(64_000)
    };
    open(cfg, 100 * MS, peer, 1_000_000).0
}

/// The probe at 302 ms sends an eleventh segment; the timer expires at 400 ms and resends
/// the first. Returns that resend.
fn time_out(s: &mut Sender) -> Vec<Segment> {
    let mut out = Vec::new();
    s.on_timer(302 * MS, &mut out);
    out.clear();
    s.on_timer(400 * MS, &mut out);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(s.ca_state, CaState::Loss);
    out
}

/// An ACK at `now_ms` of the first two segments' original transmissions (sent at 100 ms):
/// the path only delayed them.
fn late_originals_acked(s: &mut Sender, now_ms: u64) -> Vec<Segment> {
    let mut seg = Segment::pure_ack(2 * s.mss, 64_000);
    seg.timestamps = s.timestamps.then_some(Timestamps { val: 2, ecr: 100 });
    let mut out = Vec::new();
    s.on_segment(now_ms * MS, &seg, &mut out);
    out
}

#[test]
fn frto_finds_a_timeout_spurious_when_data_never_resent_is_acknowledged() {
    // RFC 5682 §3.1 step 3b (Linux tcp_process_loss, FLAG_ORIG_SACK_ACKED): the ACK covers
    // a segment sent once, so not everything in flight was lost. The reduction is undone
    // (cwnd back to the ten segments before the timeout) and nothing more is resent.
    let mut s = undo_sender(false, true, true);
    time_out(&mut s);
    let out = late_originals_acked(&mut s, 450);
    assert!(out.iter().all(|seg| !seg.retransmission));
    assert!(!out.is_empty());
    assert_eq!(s.ca_state, CaState::Open);
    assert!(s.cwnd() >= 10 * MSS);
    assert_eq!(s.ssthresh(), u64::MAX);
}

#[test]
fn without_frto_or_undo_the_timeout_resends_what_it_marked_lost() {
    let mut s = undo_sender(false, false, false);
    time_out(&mut s);
    let out = late_originals_acked(&mut s, 450);
    assert!(resent(&out, 2 * MSS));
    assert_eq!(s.ca_state, CaState::Loss);
    assert!(s.cwnd() < 10 * MSS);
}

#[test]
fn an_echo_from_before_the_first_retransmission_undoes_the_timeout() {
    // RFC 3522 (Linux tcp_packet_delayed, tcp_try_undo_loss): the ACK echoes the
    // originals' timestamp (100 ms), older than the timeout's retransmission (400 ms).
    let mut s = undo_sender(true, true, false);
    time_out(&mut s);
    let out = late_originals_acked(&mut s, 450);
    assert!(out.iter().all(|seg| !seg.retransmission));
    assert_eq!(s.ca_state, CaState::Open);
    assert!(s.cwnd() >= 10 * s.mss);
}

#[test]
fn dsacks_for_every_retransmission_undo_a_fast_recovery() {
    // RFC 3708 §3 (Linux tcp_try_undo_dsack): three segments SACKed above the first start
    // a recovery that resends it and halves ssthresh; the original then fills the hole and
    // the resend comes back reported in a D-SACK block: ssthresh and cwnd are restored.
    let mut s = undo_sender(false, true, true);
    for end in 2..=4 {
        sack_ack(&mut s, 200, 0, &[(MSS, end * MSS)]);
    }
    assert_eq!(s.ca_state, CaState::Recovery);
    assert_eq!(s.ssthresh(), 5 * MSS);
    sack_ack(&mut s, 201, 4 * MSS, &[]);
    assert_eq!(s.ca_state, CaState::Recovery);
    sack_ack(&mut s, 202, 4 * MSS, &[(0, MSS)]);
    assert_ne!(s.ca_state, CaState::Recovery);
    assert_eq!(s.ssthresh(), u64::MAX);
    assert!(s.cwnd() >= 10 * MSS);
}

#[test]
fn a_dsack_for_a_segment_never_resent_is_dubious_and_undoes_nothing() {
    // Linux tcp_dsack_seen: more duplicates reported than were ever resent.
    let mut s = undo_sender(false, true, true);
    for end in 2..=4 {
        sack_ack(&mut s, 200, 0, &[(MSS, end * MSS)]);
    }
    sack_ack(&mut s, 201, 4 * MSS, &[(MSS, 3 * MSS)]);
    assert_eq!(s.ca_state, CaState::Recovery);
    assert_eq!(s.ssthresh(), 5 * MSS);
}

// ---- Linux's recovery without SACK (loss_recovery = rack, reno_sack.rs) ------------------

/// A sender in Linux's states without SACK: ten segments sent at 100 ms (100 ms RTT), a
/// megabyte written, Reno halving cwnd.
fn reno_sack_sender() -> Sender {
    recovering_sender(false, false, true, true)
}

#[test]
fn without_sack_the_third_duplicate_marks_the_head_lost_and_prr_resends_it() {
    // Linux tcp_add_reno_sack / tcp_newreno_mark_lost: each duplicate counts a segment as
    // held, which leaves room in cwnd for a new one (RFC 3042's limited transmit follows);
    // at three (net.ipv4.tcp_reordering) the head is lost and Recovery starts. PRR (RFC
    // 6937), not RFC 5681's inflation: flight 12 − 3 held − 1 lost = 8 above ssthresh 5,
    // so cwnd = 8 + 1 lets the retransmission out.
    let mut s = reno_sack_sender();
    assert_eq!(seqs(&ack(&mut s, 200, 0)), vec![10_000]);
    assert_eq!(s.ca_state, CaState::Disorder);
    assert_eq!(seqs(&ack(&mut s, 200, 0)), vec![11_000]);
    let out = ack(&mut s, 200, 0);
    assert_eq!(seqs(&out), vec![0]);
    assert!(out[0].retransmission);
    assert_eq!(s.ca_state, CaState::Recovery);
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(s.cwnd(), 9 * MSS);
    assert_eq!(s.stats.fast_retransmits, 1);
}

#[test]
fn without_sack_duplicates_in_recovery_let_data_out_in_proportion() {
    // RFC 6937 with the flight above ssthresh: prr_out follows ⌈prr_delivered · 5 / 10⌉,
    // one segment for every two duplicates.
    let mut s = reno_sack_sender();
    for _ in 0..3 {
        ack(&mut s, 200, 0);
    }
    let sent: Vec<Vec<u64>> = (0..5).map(|_| seqs(&ack(&mut s, 200, 0))).collect();
    assert_eq!(
        sent,
        vec![vec![], vec![12_000], vec![], vec![13_000], vec![]]
    );
}

#[test]
fn without_sack_a_partial_ack_marks_the_next_head_lost_and_resends_it() {
    // RFC 6582 §3.2 step 5 as Linux does it (tcp_newreno_mark_lost): segments 0 and 5
    // lost; the resend of 0 fills the first hole, the ACK stops at 5000, and 5000 is lost
    // and resent at once, in Recovery still. The ACK takes back four of the eight
    // segments the duplicates counted (tcp_remove_reno_sacks).
    let mut s = reno_sack_sender();
    for _ in 0..8 {
        ack(&mut s, 200, 0);
    }
    let out = ack(&mut s, 300, 5 * MSS);
    assert!(resent(&out, 5 * MSS));
    assert_eq!(s.ca_state, CaState::Recovery);
    assert_eq!(s.rtx.dupacked_bytes(), 4 * MSS);
}

#[test]
fn without_sack_recovery_holds_at_its_end_until_an_ack_passes_it() {
    // Linux tcp_try_undo_recovery for Reno (RFC 6582 §4.1): an ACK exactly at high_seq
    // leaves the connection in Recovery, so duplicates for data sent before the recovery
    // began start no second one; the next ACK above ends it with cwnd = ssthresh.
    let mut s = reno_sack_sender();
    for _ in 0..8 {
        ack(&mut s, 200, 0);
    }
    let high_seq = s.high_seq;
    assert!(s.snd_max > high_seq);
    ack(&mut s, 300, high_seq);
    assert_eq!(s.ca_state, CaState::Recovery);
    for _ in 0..3 {
        assert!(ack(&mut s, 300, high_seq)
            .iter()
            .all(|seg| !seg.retransmission));
    }
    assert_eq!(s.stats.fast_retransmits, 1);
    ack(&mut s, 310, high_seq + MSS);
    assert_eq!(s.ca_state, CaState::Open);
    // cwnd = ssthresh, then congestion avoidance's growth for the same ACK.
    assert_eq!(s.ssthresh(), 5 * MSS);
    assert_eq!(s.cwnd(), 5 * MSS + MSS / 5);
}

#[test]
fn without_sack_more_duplicates_than_segments_beyond_a_hole_are_reordering() {
    // Linux tcp_limit_reno_sacked / tcp_check_reno_reordering: with two segments out, at
    // most one can have arrived beyond a hole; further duplicates raise the reordering
    // degree instead, and no fast retransmit follows.
    let (mut s, sent) = established(
        SenderConfig {
            loss_recovery: LossRecovery::Rack,
            undo: true,
            ..config()
        },
        2 * MSS,
    );
    assert_eq!(sent.len(), 2);
    for _ in 0..4 {
        assert!(ack(&mut s, 200, 0).is_empty());
    }
    assert_eq!(s.rtx.dupacked_bytes(), MSS);
    assert_eq!(s.stats.fast_retransmits, 0);
    assert_eq!(s.ca_state, CaState::Disorder);
}

#[test]
fn without_sack_no_tail_probe_and_a_timeout_marks_everything_lost() {
    // Linux tcp_schedule_loss_probe needs SACK; RACK's RTT is never measured without it,
    // so tcp_timeout_mark_lost marks every segment lost.
    let mut s = reno_sack_sender();
    assert_eq!(s.next_deadline(), Some(400 * MS));
    let out = time_out(&mut s);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(s.rtx.lost_bytes(), 10 * MSS);
    assert_eq!(s.cwnd(), MSS);
}

#[test]
fn without_sack_frto_sends_new_data_and_the_next_original_ack_undoes_the_timeout() {
    // RFC 5682 §3.1 without SACK (Linux tcp_process_loss): the first ACK covers the
    // resent head, so it cannot tell (FLAG_RETRANS_DATA_ACKED); new data goes instead of
    // retransmissions (step 2b); the next ACK covers only data sent once (step 3b).
    let mut s = reno_sack_sender();
    time_out(&mut s);
    let out = late_originals_acked(&mut s, 450);
    assert!(!out.is_empty() && out.iter().all(|seg| !seg.retransmission));
    assert_eq!(s.ca_state, CaState::Loss);
    let out = ack(&mut s, 451, 3 * MSS);
    assert!(out.iter().all(|seg| !seg.retransmission));
    assert_eq!(s.ca_state, CaState::Open);
    assert!(s.cwnd() >= 10 * MSS);
}

#[test]
fn without_sack_an_echo_from_before_the_retransmission_undoes_the_timeout() {
    // RFC 3522 needs no SACK (Linux tcp_try_undo_loss).
    let mut s = recovering_sender(false, true, true, false);
    time_out(&mut s);
    let out = late_originals_acked(&mut s, 450);
    assert!(out.iter().all(|seg| !seg.retransmission));
    assert_eq!(s.ca_state, CaState::Open);
    assert!(s.cwnd() >= 10 * s.mss);
}

// ---- restart after idle (slow_start_after_idle) ------------------------------------------

/// A sender whose 64-segment window was all acknowledged at 200 ms, nothing written since.
fn idle_sender(slow_start_after_idle: bool) -> Sender {
    let (mut s, sent) = established(
        SenderConfig {
            slow_start_after_idle,
            ..config()
        },
        4 * MSS,
    );
    assert_eq!(sent.len(), 4);
    ack(&mut s, 200, 4 * MSS);
    s.cwnd = 64 * MSS;
    s
}

/// The application writes again `after` ns past the last transmission (at 100 ms).
fn write_after(s: &mut Sender, after: Nanos) -> Vec<Segment> {
    s.write(100 * MS + after, 100 * MSS);
    let mut out = Vec::new();
    s.try_send(100 * MS + after, &mut out);
    out
}

#[test]
fn after_an_idle_spell_cwnd_halves_per_rto_down_to_the_initial_window() {
    // RFC 5681 §4.1, Linux tcp_cwnd_restart: idle 3.5 RTOs, so three halvings (64 → 8
    // segments); 8 is above the initial window of 4. ssthresh keeps what cwnd had reached.
    let mut s = idle_sender(true);
    let rto = s.rto.rto();
    let out = write_after(&mut s, 7 * rto / 2);
    assert_eq!(out.len(), 8);
    assert_eq!(s.cwnd(), 8 * MSS);
    assert_eq!(s.ssthresh(), u64::MAX);
    // Long enough, and the restart window is the initial window.
    let mut s = idle_sender(true);
    write_after(&mut s, 20 * rto);
    assert_eq!(s.cwnd(), 4 * MSS);
}

#[test]
fn a_spell_shorter_than_the_rto_keeps_cwnd() {
    let mut s = idle_sender(true);
    let rto = s.rto.rto();
    write_after(&mut s, rto);
    assert_eq!(s.cwnd(), 64 * MSS);
}

#[test]
fn without_the_restart_an_idle_sender_keeps_its_window() {
    let mut s = idle_sender(false);
    let rto = s.rto.rto();
    assert_eq!(write_after(&mut s, 20 * rto).len(), 64);
}

// ---- GSO buffers (gso = true) -----------------------------------------------------------

/// A sender whose handshake took 1 ms, 40 segments sent at 1 ms.
fn gso_sender(gso: bool) -> Sender {
    let cfg = SenderConfig {
        initial_window: 40,
        gso,
        ..config()
    };
    let (s, out) = open(cfg, MS, syn_ack(64_000), 1_000_000);
    assert_eq!(out.len(), 40);
    s
}

/// Segments sent on an ACK of `ack` bytes at `t` ns.
fn sent_on_ack(s: &mut Sender, t: Nanos, ack: u64) -> usize {
    let mut out = Vec::new();
    s.on_segment(t, &Segment::pure_ack(ack, 64_000), &mut out);
    out.len()
}

#[test]
fn gso_holds_a_small_room_back_until_a_millisecond_after_the_last_send() {
    // Linux tcp_tso_should_defer: each ACK opens 3 segments (2 acknowledged, 1 of slow
    // start), less than a GSO buffer (65 segments at this rate) and a third of the window,
    // and the head was sent over half an SRTT ago: held back...
    let mut s = gso_sender(true);
    assert_eq!(sent_on_ack(&mut s, 1_600_000, 2 * MSS), 0);
    assert_eq!(s.limit(true), Limit::Cwnd);
    assert_eq!(sent_on_ack(&mut s, 1_700_000, 4 * MSS), 0);
    assert_eq!(sent_on_ack(&mut s, 1_800_000, 6 * MSS), 0);
    // ... until the last transmission is over a millisecond old: then all 12 leave at once.
    assert_eq!(sent_on_ack(&mut s, 2_100_000, 8 * MSS), 12);
}

#[test]
fn without_gso_each_ack_lets_its_room_out_at_once() {
    let mut s = gso_sender(false);
    assert_eq!(sent_on_ack(&mut s, 1_600_000, 2 * MSS), 3);
    assert_eq!(sent_on_ack(&mut s, 1_700_000, 4 * MSS), 3);
}

fn window_edge_sender(gso: bool) -> (Sender, Vec<Segment>) {
    let cfg = SenderConfig {
        initial_window: 40,
        nagle_variant: NagleVariant::Minshall,
        gso,
        ..config()
    };
    // A 5.7-segment window: GSO buffers of 2 segments at this rate, the third cut by it.
    established_with_window(cfg, 1_000_000, (5 * MSS + 700) as u16)
}

fn lengths(out: &[Segment]) -> Vec<u64> {
    out.iter().map(|s| u64::from(s.len)).collect()
}

#[test]
fn a_gso_buffer_cut_by_the_peer_window_takes_the_sub_mss_rest_to_its_edge() {
    // Linux tcp_mss_split_point: the buffer that reaches the window's edge sends the
    // 700 bytes beyond the fifth segment too, since no small segment is unacknowledged
    // (Minshall's Nagle, tcp_nagle_check).
    let (mut s, out) = window_edge_sender(true);
    assert_eq!(lengths(&out), [MSS, MSS, MSS, MSS, MSS, 700]);
    // The edge moves by 2 segments: a buffer of 2 whole segments, nothing small.
    let window = (5 * MSS + 700) as u16;
    let more = ack_window(&mut s, 200, 1 + 2 * MSS, window);
    assert_eq!(lengths(&more), [MSS, MSS]);
    // By 1.5 segments while the small segment is unacknowledged: the buffer starts with a
    // whole segment, and Nagle holds the rest.
    let more = ack_window(&mut s, 205, 1 + 3 * MSS + MSS / 2, window);
    assert_eq!(lengths(&more), [MSS]);
}

#[test]
fn without_gso_the_window_edge_is_left_unfilled() {
    // One segment per buffer (gso_max_segs 1): a buffer never straddles the edge, and sender
    // silly-window avoidance (RFC 1122 §4.2.3.4) holds the 700 bytes.
    let (_, out) = window_edge_sender(false);
    assert_eq!(lengths(&out), [MSS; 5]);
}
