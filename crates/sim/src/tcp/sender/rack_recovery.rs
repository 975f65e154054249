//! Loss recovery as Linux does it with `tcp_recovery = 1` and `tcp_early_retrans = 3`
//! (`loss_recovery = "rack"`): RACK-TLP (RFC 8985) decides what is lost, PRR (RFC 6937)
//! how fast to send during recovery, and the connection moves through Linux's congestion
//! states (tcp_input.c `tcp_fastretrans_alert`):
//!
//! - Open: nothing outstanding is SACKed or lost.
//! - Disorder: SACKs arrived but RACK has not yet judged anything lost.
//! - Recovery: RACK marked data lost; PRR brings cwnd down to ssthresh while lost data is
//!   resent, lowest first, then new data; it ends when the cumulative ACK reaches the
//!   highest byte sent at its start (`high_seq`), with cwnd = ssthresh.
//! - CWR: a tail loss probe repaired a loss: cwnd is reduced once, without recovery.
//! - Loss: the retransmission timer expired: the head, and everything sent a RACK RTT ago,
//!   is lost; cwnd restarts from one segment above the flight and slow start resends it.
//!
//! Without SACK the states, PRR and undo are the same, and duplicate ACKs stand in for
//! SACKs and RACK (`reno_sack.rs`), as in Linux.

use super::prr::Prr;
use super::rtx_queue::Delivery;
use super::undo::{echoes_before, AckFacts, AfterAck};
use super::{CaState, Sender};
use crate::engine::Nanos;
use crate::tcp::cc::{CcState, RateSample};
use crate::tcp::{timestamp_clock, Segment};

/// Linux TCP_TIMEOUT_MIN_US: the probe timeout's allowance for a delayed ACK when more than
/// one segment is outstanding.
const TLP_MIN_EXTRA_NS: Nanos = 2_000_000; /* 2 ms */

/// The tail loss probe in flight (RFC 8985 §7.4, Linux `tlp_high_seq`, `tlp_retrans`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe {
    pub(super) high_seq: u64,
    pub(super) retransmission: bool,
}

impl Sender {
    /// Linux's recovery applies: asked for, and not Tahoe's go-back-N.
    pub(super) fn rack_mode(&self) -> bool {
        self.rack_recovery
    }

    fn segments(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }

    pub(super) fn on_ack_rack(&mut self, now: Nanos, seg: &Segment, window_changed: bool) {
        let min_rtt = self.rto.min_rtt().unwrap_or(0);
        let prior_in_flight = self.rtx.in_flight();
        let lost_before = self.rtx.lost_total;
        self.undo.after_ack = AfterAck::Lost;
        let dsack = self.take_dsack(seg, self.snd_una);
        // The delivered record sent last, cumulatively acknowledged or SACKed, whose rate
        // state gives the ACK's delivery-rate sample (Linux `tcp_rate_skb_delivered`).
        let mut newest: Option<Delivery> = None;
        // Data never retransmitted, sent before `high_seq`, got through (F-RTO step 3b).
        let mut original_delivered = false;
        let high_seq = self.high_seq;
        let mut original = |d: Delivery| original_delivered |= !d.ever_retrans && d.end <= high_seq;
        // The first segment this ACK newly SACKs that was never resent: its send time
        // times a round trip when the cumulative ACK cannot (Linux `first_sackt`).
        let mut sacked_sent_at = None;
        let sack = self.sack_ok;
        let echoed = self.echoed(seg);
        let (rtx, rack) = (&mut self.rtx, &mut self.rack);
        let sacked_before = rtx.sacked_bytes();
        let prior_highest_sacked = rack.highest_sacked();
        let newly_sacked = rtx.sack(seg.sack_blocks(), |d| {
            rack.note_sacked(d);
            rack.advance(d, now, min_rtt);
            newest = sent_later(newest, d);
            original(d);
            if !d.ever_retrans {
                sacked_sent_at.get_or_insert(d.sent_at);
            }
        });
        let cumulative = seg.ack.max(self.snd_una);
        let sacked_mid = rtx.sacked_bytes();
        let covered = rtx.acknowledge(cumulative, |d| {
            // Without SACK, Linux neither looks for reordering here nor moves RACK
            // (`tcp_clean_rtx_queue`).
            if sack {
                rack.note_acked(d, prior_highest_sacked);
                // Linux `tcp_skb_spurious_retrans`: a resent segment whose ACK echoes a
                // time before it was resent was delivered by an earlier transmission.
                if !(d.ever_retrans && echoes_before(echoed, timestamp_clock(d.sent_at))) {
                    rack.advance(d, now, min_rtt);
                }
            }
            newest = sent_later(newest, d);
            original(d);
        });
        let sacked_covered = sacked_mid - rtx.sacked_bytes();
        debug_assert!(sacked_mid == sacked_before + newly_sacked);
        let mut delivered =
            newly_sacked + (cumulative - self.snd_una) - sacked_covered + dsack.bytes;
        if !sack {
            delivered = self.remove_reno_sacks(covered.records, delivered);
            // Without SACK bits nothing shows which transmission got through
            // (FLAG_RETRANS_DATA_ACKED clears FLAG_ORIG_SACK_ACKED).
            original_delivered &= !covered.retransmitted;
        }
        self.sample_rtt(now, seg, covered, sacked_sent_at);
        self.note_delivered(now, delivered);
        // Every ACK gives the algorithm a sample (Linux `tcp_rate_gen`): an invalid one
        // when nothing delivered carried rate state, with what was acknowledged and lost.
        let mut sample = match newest {
            Some(d) if delivered > 0 => {
                let rtt = (!d.ever_retrans).then(|| now - d.sent_at);
                self.rate_sample_from(now, d.tx, d.sent_at, rtt, delivered, prior_in_flight)
            }
            _ => RateSample::invalid(self.delivered, delivered, prior_in_flight),
        };

        self.rack
            .update_reo_wnd(newest.map_or(0, |d| d.tx.delivered), self.delivered);

        let una_advanced = seg.ack > self.snd_una;
        if una_advanced {
            self.snd_una = seg.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.rack.forget_sacks_below(self.snd_una);
            self.consecutive_timeouts = 0;
            self.restart_timer(now);
        }
        let facts = AckFacts {
            una_advanced,
            original_delivered,
            data_sacked: newly_sacked > 0,
            duplicate: !una_advanced
                && !window_changed
                && dsack.bytes == 0
                && seg.len == 0
                && !self.rtx.is_empty(),
        };
        self.note_ack_for_undo(seg);
        let delivered_before = self.delivered;
        let held = if self.ca_state == CaState::Loss {
            self.process_loss(now, seg, facts);
            false
        } else {
            self.leave_finished_state(now, seg)
        };
        if !held {
            if !sack {
                self.count_reno_dupacks(now, una_advanced, facts.duplicate);
            }
            self.try_undo_on_ack(now, seg, facts);
        }
        // Duplicate ACKs without SACK report deliveries of their own.
        delivered += self.delivered - delivered_before;
        sample.acked = delivered;

        let mut newly_lost = 0;
        if !sack {
            if !held {
                self.newreno_mark_lost(una_advanced);
            }
            newly_lost = self.rtx.lost_total - lost_before;
        } else if self.rack.advanced() && self.undo.after_ack != AfterAck::NoRetransmission {
            let reo_wnd = self.reo_wnd();
            let detection = self.rack.detect_loss(&mut self.rtx, now, reo_wnd);
            newly_lost = detection.newly_lost;
            self.reo_timer = detection.timer;
        }
        sample.losses = self.rtx.lost_total - lost_before;
        self.rate_sample = Some(sample);
        self.process_probe_ack(now, seg.ack, una_advanced, newly_sacked, dsack.for_probe);
        if matches!(
            self.ca_state,
            CaState::Open | CaState::Disorder | CaState::Cwr
        ) {
            if self.rtx.lost_bytes() > 0 {
                self.enter_rack_recovery(now, seg.ece);
            } else if self.ca_state != CaState::Cwr {
                self.forget_retransmission_stamp();
                if self.ecn_ok && seg.ece && !self.cc.sets_cwnd_itself() {
                    self.enter_cwr(now);
                } else {
                    self.ca_state = self.open_or_disorder();
                }
            }
        }
        match self.ca_state {
            _ if self.cc.sets_cwnd_itself() => {}
            CaState::Recovery | CaState::Cwr => {
                let cwnd = self.prr.cwnd(
                    self.segments(delivered),
                    self.segments(self.rtx.in_flight()),
                    self.ssthresh / self.mss,
                    una_advanced,
                    self.segments(newly_lost),
                );
                if let Some(segments) = cwnd {
                    self.cwnd = segments * self.mss;
                }
            }
            // Linux `tcp_may_raise_cwnd`: growth only on forward progress of the
            // cumulative ACK, with what it and the SACKs delivered.
            _ if una_advanced => self.grow_window(now, delivered),
            _ => {}
        }
        if una_advanced {
            self.schedule_probe(now);
        }
    }

    /// Linux `tcp_fastretrans_alert` step D: Recovery and CWR end once the cumulative ACK
    /// passes `high_seq` and set cwnd to ssthresh (`tcp_end_cwnd_reduction`), unless
    /// Recovery proves spurious and is undone (Loss ends in `process_loss`). True when,
    /// without SACK, Recovery holds at `high_seq` and this ACK is done with.
    fn leave_finished_state(&mut self, now: Nanos, seg: &Segment) -> bool {
        let done = match self.ca_state {
            CaState::Recovery => self.snd_una >= self.high_seq,
            CaState::Cwr => self.snd_una > self.high_seq,
            CaState::Open | CaState::Disorder | CaState::Loss => false,
        };
        if !done {
            return false;
        }
        if self.ca_state == CaState::Recovery {
            if !self.sack_ok {
                self.reset_reno_sacks();
            }
            self.try_undo_recovery(now, seg);
            if self.holds_at_high_seq() {
                return true;
            }
        }
        if (self.ca_state == CaState::Cwr || self.reduction_stands())
            && self.ssthresh != u64::MAX
            && !self.cc.sets_cwnd_itself()
        {
            self.cwnd = self.ssthresh;
        }
        self.ca_state = CaState::Open;
        self.in_recovery = false;
        false
    }

    pub(super) fn open_or_disorder(&self) -> CaState {
        let rtx = &self.rtx;
        if rtx.sacked_bytes() + rtx.dupacked_bytes() + rtx.lost_bytes() + rtx.retrans_bytes() > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        }
    }

    fn reo_wnd(&self) -> Nanos {
        let recovering = matches!(self.ca_state, CaState::Recovery | CaState::Loss);
        let sacked = self.rtx.sacked_bytes() / self.mss;
        let min_rtt = self.rto.min_rtt().unwrap_or(0);
        self.rack
            .reo_wnd(recovering, sacked, min_rtt, self.rto.srtt().unwrap_or(0))
    }

    /// Linux `tcp_init_cwnd_reduction`: ssthresh from the algorithm, PRR from the current
    /// cwnd. Linux's algorithms reduce from cwnd (`tcp_reno_ssthresh` halves it), where
    /// RFC 5681 halves the flight: the flight they see here is cwnd.
    fn start_cwnd_reduction(&mut self, now: Nanos) {
        let state = CcState {
            flight: self.cwnd,
            ..self.cc_state(now)
        };
        self.reduce_ssthresh(&state);
        self.prr = Prr::start(self.segments(self.cwnd));
        self.undo.prior_cwnd = self.cwnd;
        self.probe = None;
        self.note_reduction();
    }

    /// Linux `tcp_enter_cwr` for an ACK with ECE (RFC 3168 §6.1.2): a reduction that PRR
    /// carries out over the next round trip, with no retransmission, until `high_seq` is
    /// acknowledged.
    fn enter_cwr(&mut self, now: Nanos) {
        self.stats.ecn_reductions += 1;
        self.forbid_undo();
        self.start_cwnd_reduction(now);
        self.ca_state = CaState::Cwr;
        self.high_seq = self.snd_max;
    }

    /// ssthresh from the algorithm (`icsk_ca_ops->ssthresh`). One that sets cwnd itself
    /// keeps its own: Linux's `bbr_ssthresh` only saves cwnd and returns `snd_ssthresh`
    /// as it was, so a BBR sender's ssthresh stays what BBR set (infinite until Startup
    /// ends, then the BDP estimate).
    fn reduce_ssthresh(&mut self, state: &CcState) {
        let ssthresh = self.cc.ssthresh_after_loss(state);
        if !self.cc.sets_cwnd_itself() {
            self.ssthresh = ssthresh;
        }
    }

    /// Linux `tcp_enter_recovery`: a reduction unless one is already under way (CWR),
    /// undoable unless it is one or an ECN echo came with the ACK.
    fn enter_rack_recovery(&mut self, now: Nanos, ece: bool) {
        let reducing = self.ca_state == CaState::Cwr;
        let prior_ssthresh = if reducing || ece {
            0
        } else {
            self.current_ssthresh()
        };
        self.init_undo(prior_ssthresh);
        if !reducing {
            self.start_cwnd_reduction(now);
        }
        self.stats.fast_retransmits += 1;
        self.ca_state = CaState::Recovery;
        self.in_recovery = true;
        self.high_seq = self.snd_max;
    }

    /// Linux `tcp_xmit_retransmit_queue`: lost data first, lowest sequence first, while
    /// the flight is below cwnd. Resending the head restarts the timer.
    pub(super) fn resend_lost(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        while let Some(r) = self.rtx.next_to_resend() {
            if self.rtx.in_flight() + r.len() > self.cwnd || self.pacing_holds(now) {
                return;
            }
            self.retransmit(now, r.start, r.end, out);
            self.note_retransmission(now, r.len());
            if r.start == self.snd_una {
                self.rearm_for_head_retransmission(now);
            }
        }
    }

    /// The highest byte new data may reach: the peer's window, and cwnd over what is in
    /// flight (RFC 8985 §6.2's pipe, Linux `tcp_cwnd_test`).
    pub(super) fn rack_send_limit(&self) -> u64 {
        let cwnd_room = self.cwnd.saturating_sub(self.rtx.in_flight());
        (self.snd_una + self.rwnd).min(self.snd_nxt + cwnd_room)
    }

    /// RFC 8985 §7.2 (Linux `tcp_schedule_loss_probe`): with SACK, in Open or CWR, with data
    /// outstanding and no probe or reordering timer pending, a probe after
    /// PTO = 2·SRTT, plus the peer's delayed-ACK time when a single segment is out, and
    /// never later than the retransmission timer.
    pub(super) fn schedule_probe(&mut self, now: Nanos) {
        self.probe_timer = None;
        let Some(srtt) = self.rto.srtt() else {
            return;
        };
        if self.rtx.is_empty()
            || !self.sack_ok
            || self.probe.is_some()
            || self.reo_timer.is_some()
            || !matches!(self.ca_state, CaState::Open | CaState::Cwr)
        {
            return;
        }
        let extra = if self.rtx.outstanding() <= self.mss {
            self.cfg.min_rto_ns
        } else {
            TLP_MIN_EXTRA_NS
        };
        let mut at = now + 2 * srtt + extra;
        if let Some(rto) = self.timer {
            at = at.min(rto);
        }
        self.probe_timer = Some(at);
    }

    /// RFC 8985 §7.3 (Linux `tcp_send_loss_probe`): one segment of new data if the peer's
    /// window takes it, else the last segment sent again; then the retransmission timer
    /// runs from the oldest outstanding segment's transmission.
    pub(super) fn on_probe_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.probe_timer = None;
        if self.probe.is_none() {
            let queued = self.written.saturating_sub(self.snd_max);
            let room = (self.snd_una + self.rwnd).saturating_sub(self.snd_max);
            let len = self.mss.min(queued).min(room);
            let retransmission = len == 0;
            if !retransmission {
                let seq = self.snd_max;
                self.emit(now, seq, len, out);
                self.snd_nxt = self.snd_max;
            } else if let Some(last) = self.rtx.last().copied().filter(|r| !r.sacked) {
                self.retransmit(now, last.start, last.end, out);
            } else {
                return;
            }
            self.probe = Some(Probe {
                high_seq: self.snd_max,
                retransmission,
            });
        }
        self.rearm_from_head(now);
    }

    /// Linux `tcp_rearm_rto` after an early timer: the timer expires one RTO after the
    /// oldest outstanding segment was sent.
    fn rearm_from_head(&mut self, now: Nanos) {
        self.timer = self
            .rtx
            .head()
            .map(|head| (head.sent_at + self.rto.rto()).max(now + 1));
    }

    /// Linux `tcp_process_tlp_ack`: an ACK past the probe of a retransmission means the
    /// probe repaired a loss, so cwnd is reduced once (CWR); a D-SACK for it, or a
    /// duplicate ACK, means the original arrived too, and nothing was lost.
    fn process_probe_ack(
        &mut self,
        now: Nanos,
        ack: u64,
        una_advanced: bool,
        newly_sacked: u64,
        dsacked: bool,
    ) {
        let Some(probe) = self.probe else {
            return;
        };
        if ack < probe.high_seq {
            return;
        }
        if !probe.retransmission || dsacked {
            self.probe = None;
        } else if ack > probe.high_seq {
            self.start_cwnd_reduction(now);
            self.cwnd = self.ssthresh;
            self.ca_state = self.open_or_disorder();
            self.high_seq = self.snd_max;
        } else if !una_advanced && newly_sacked == 0 {
            self.probe = None;
        }
    }

    /// RFC 8985 §6.3 (Linux `tcp_rack_reo_timeout`): segments RACK had to wait for are
    /// now overdue; recovery starts if any was lost.
    pub(super) fn on_reo_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.reo_timer = None;
        let before = self.rtx.in_flight();
        let reo_wnd = self.reo_wnd();
        let detection = self.rack.detect(&mut self.rtx, now, reo_wnd);
        self.reo_timer = detection.timer;
        if self.rtx.in_flight() != before {
            if self.ca_state != CaState::Recovery {
                self.enter_rack_recovery(now, false);
                // An algorithm that sets cwnd itself does so on the next ACK.
                let prr = (!self.cc.sets_cwnd_itself()).then(|| {
                    self.prr.cwnd(
                        1,
                        self.segments(self.rtx.in_flight()),
                        self.ssthresh / self.mss,
                        false,
                        0,
                    )
                });
                if let Some(Some(segments)) = prr {
                    self.cwnd = segments * self.mss;
                }
            }
            self.resend_lost(now, out);
        }
        self.rearm_from_head(now);
    }

    /// The retransmission timer expired (Linux `tcp_retransmit_timer`, `tcp_enter_loss`):
    /// ssthresh falls unless this window was already reduced, the head and everything sent
    /// a RACK RTT ago are lost, cwnd is one segment above what is still in flight, and the
    /// head is resent at once.
    pub(super) fn on_rto_rack(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.stats.timeouts += 1;
        let prior_ssthresh = self.current_ssthresh();
        let new_recovery = self.ca_state < CaState::Recovery;
        let reduced_already = match self.ca_state {
            CaState::Open | CaState::Disorder => false,
            CaState::Loss => self.consecutive_timeouts > 0,
            CaState::Recovery | CaState::Cwr => self.high_seq > self.snd_una,
        };
        let state = CcState {
            flight: self.cwnd,
            ..self.cc_state(now)
        };
        if !reduced_already {
            self.reduce_ssthresh(&state);
            self.note_reduction();
        }
        self.cc.on_timeout(&state);
        self.reset_reno_sacks();
        self.rtx.mark_lost_on_timeout(now, self.rack.rtt);
        self.start_loss_undo((!reduced_already).then_some(prior_ssthresh), new_recovery);
        self.consecutive_timeouts += 1;
        self.cwnd = self.rtx.in_flight() + self.mss;
        self.ca_state = CaState::Loss;
        self.in_recovery = false;
        self.high_seq = self.snd_max;
        self.probe = None;
        self.probe_timer = None;
        self.reo_timer = None;
        if let Some(head) = self.rtx.next_to_resend() {
            self.retransmit(now, head.start, head.end, out);
            self.note_retransmission(now, head.len());
        }
        self.timer = Some(now + self.rto.rto());
    }
}

/// Of two delivered records, the one sent later (Linux `tcp_skb_sent_after`: by send
/// time, then by sequence).
fn sent_later(newest: Option<Delivery>, d: Delivery) -> Option<Delivery> {
    match newest {
        Some(n) if (n.sent_at, n.end) >= (d.sent_at, d.end) => Some(n),
        _ => Some(d),
    }
}
