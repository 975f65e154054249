//! Congestion control behind one small trait, shaped like Linux's `tcp_congestion_ops`:
//! the algorithm decides the window's growth and its reduction on loss; loss detection
//! and recovery (which differ between Tahoe, Reno and NewReno) live in the sender.

mod bbr;
mod cubic;
mod cubic_linux;
mod hybla;
mod linux_growth;
mod reno;
mod reno_linux;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use cubic_linux::LinuxCubic;
pub use hybla::Hybla;
pub use reno::Reno;
pub use reno_linux::LinuxReno;

use serde::Deserialize;

use crate::engine::{Nanos, RngStream};

/// Which CUBIC `cc = "cubic"` runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CubicVariant {
    /// RFC 9438 as written (`cubic.rs`).
    #[default]
    Rfc9438,
    /// Linux's tcp_cubic.c (`cubic_linux.rs`).
    Linux,
}

/// Which window arithmetic `cc = "reno"` and `"newreno"` run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RenoVariant {
    /// RFC 5681 as written, in bytes (`reno.rs`).
    #[default]
    Rfc5681,
    /// Linux's tcp_cong.c, in whole segments (`reno_linux.rs`).
    Linux,
}

/// The `tcp.cc` names the simulator accepts.
pub const NAMES: &[&str] = &["tahoe", "reno", "newreno", "cubic", "hybla", "bbr"];

/// How the sender recovers from a loss signalled by duplicate ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (4.3BSD Tahoe).
    Tahoe,
    /// Fast retransmit and fast recovery ending at the first new ACK (RFC 5681 §3.2).
    Reno,
    /// Fast recovery through partial ACKs (RFC 6582).
    NewReno,
}

/// Linux's congestion states (`tcp_ca_state`). The RACK sender moves through all of them;
/// the classic senders are in Recovery during fast recovery and Open otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// What an algorithm sees of the connection when it acts. Windows are in bytes.
#[derive(Debug, Clone, Copy)]
pub struct CcState {
    pub now: Nanos,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    pub flight: u64,
    pub srtt: Option<Nanos>,
    pub min_rtt: Option<Nanos>,
    /// Appropriate byte counting (RFC 3465) instead of counting ACKs.
    pub abc: bool,
    /// Bytes delivered so far (acknowledged cumulatively or by SACK).
    pub delivered: u64,
    /// Bytes presumed lost so far (Linux `tp->lost`).
    pub lost: u64,
    pub ca_state: CaState,
    /// When the next segment may leave under pacing (Linux `tcp_wstamp_ns`); `now` or
    /// earlier when it may leave at once.
    pub next_send_at: Nanos,
}

/// A delivery-rate sample for one ACK (draft-cheng-iccrg-delivery-rate-estimation §3):
/// the data delivered between the newest acknowledged packet's send and its
/// acknowledgment, over the longer of the send and ACK intervals.
#[derive(Debug, Clone, Copy)]
pub struct RateSample {
    /// `delivered` when the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    pub delivered: u64,
    pub interval_ns: Nanos,
    /// RTT of the newest acknowledged packet; None if it was retransmitted (Karn).
    pub rtt_ns: Option<Nanos>,
    /// The packet was sent while the application had nothing more to send.
    pub app_limited: bool,
    /// Bytes this ACK newly acknowledged, cumulatively or by SACK (Linux `acked_sacked`).
    pub acked: u64,
    /// Bytes this ACK had presumed lost (Linux `rs->losses`).
    pub losses: u64,
    /// Bytes in flight before this ACK (Linux `rs->prior_in_flight`).
    pub prior_in_flight: u64,
}

impl RateSample {
    /// The sample of an ACK that carried no timing (Linux `tcp_rate_gen`'s invalid sample:
    /// delivered and interval unknown), with what it acknowledged and the flight before it.
    pub fn invalid(prior_delivered: u64, acked: u64, prior_in_flight: u64) -> Self {
        Self {
            prior_delivered,
            delivered: 0,
            interval_ns: 0,
            rtt_ns: None,
            app_limited: false,
            acked,
            losses: 0,
            prior_in_flight,
        }
    }

    /// Bytes per second.
    pub fn rate(&self) -> f64 {
        self.delivered as f64 * 1e9 / self.interval_ns as f64
    }
}

pub trait CongestionControl {
    /// Slow-start threshold when a loss is detected (duplicate ACKs or a timeout).
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64;
    /// The new `cwnd` after an ACK of `acked` new bytes outside loss recovery.
    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64;
    /// The retransmission timer expired.
    fn on_timeout(&mut self, _s: &CcState) {}
    /// Data leaves with nothing in flight, `idle` after the last transmission, with the
    /// sender application-limited or not (Linux CA_EVENT_TX_START, `tp->app_limited`).
    fn on_transmit_start(&mut self, _s: &CcState, _idle: Nanos, _app_limited: bool) {}
    /// cwnd after a reduction proved spurious (Linux `undo_cwnd`); `prior_cwnd` is cwnd
    /// when the reduction began. Reno's and CUBIC's (`tcp_reno_undo_cwnd`): the larger.
    fn undo_cwnd(&mut self, s: &CcState, prior_cwnd: u64) -> u64 {
        s.cwnd.max(prior_cwnd)
    }
    /// A model-based algorithm sees every delivery-rate sample, in recovery too, and
    /// returns the cwnd to use instead of what loss recovery set; others return None.
    fn on_rate_sample(&mut self, _s: &CcState, _rs: &RateSample) -> Option<u64> {
        None
    }
    /// A new ssthresh the algorithm set while taking the last rate sample, handed over
    /// once (BBR's, on leaving Startup).
    fn take_ssthresh(&mut self) -> Option<u64> {
        None
    }
    /// The algorithm alone sets cwnd on ACKs (Linux's `cong_control` hook): the RACK
    /// sender then applies neither PRR nor slow start or congestion avoidance, and leaves
    /// cwnd as it is when recovery ends (`tcp_end_cwnd_reduction` returns early).
    fn sets_cwnd_itself(&self) -> bool {
        false
    }
    /// The pacing rate in bytes per second, for an algorithm that paces.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
}

/// Slow start: RFC 5681 eq. (2) adds at most one SMSS per ACK, so delayed ACKs slow it to
/// ×1.5 per round trip; with byte counting (RFC 3465 §2.2) an ACK adds what it covers, up
/// to L = 2·SMSS, which restores ×2 (Linux counts acknowledged segments the same way).
pub fn slow_start(s: &CcState, acked: u64) -> u64 {
    let limit = if s.abc { 2 * s.mss } else { s.mss };
    s.cwnd + acked.min(limit)
}

/// The algorithm and recovery for a validated `tcp.cc` name; `rng` is the connection's
/// stream for an algorithm that draws (BBR).
pub fn build(
    name: &str,
    cubic: CubicVariant,
    reno: RenoVariant,
    rng: RngStream,
) -> (Box<dyn CongestionControl>, Recovery) {
    let reno_arithmetic = || -> Box<dyn CongestionControl> {
        match reno {
            RenoVariant::Rfc5681 => Box::new(Reno::default()),
            RenoVariant::Linux => Box::new(LinuxReno::default()),
        }
    };
    match name {
        "tahoe" => (Box::new(Reno::default()), Recovery::Tahoe),
        "reno" => (reno_arithmetic(), Recovery::Reno),
        "newreno" => (reno_arithmetic(), Recovery::NewReno),
        "cubic" if cubic == CubicVariant::Linux => {
            (Box::new(LinuxCubic::default()), Recovery::NewReno)
        }
        "cubic" => (Box::new(Cubic::default()), Recovery::NewReno),
        "hybla" => (Box::new(Hybla::default()), Recovery::NewReno),
        "bbr" => (Box::new(Bbr::new(rng)), Recovery::NewReno),
        other => unreachable!("plan validation admits only {NAMES:?}, got {other}"),
    }
}

#[cfg(test)]
pub(crate) fn state(cwnd_segments: u64, ssthresh_segments: u64, now: Nanos) -> CcState {
    CcState {
        now,
        cwnd: cwnd_segments * 1000,
        ssthresh: ssthresh_segments.saturating_mul(1000),
        mss: 1000,
        flight: cwnd_segments * 1000,
        srtt: Some(100_000_000),
        min_rtt: Some(100_000_000),
        abc: false,
        delivered: 0,
        lost: 0,
        ca_state: CaState::Open,
        next_send_at: 0,
    }
}
