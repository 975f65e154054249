//! The sender's side of ECN (RFC 3168 §6.1, crate::tcp::ecn): ECT on new data, CWR on the
//! first new data after a window reduction, and the reduction ECE asks for: once per
//! window, through the algorithm's ssthresh as for a loss, without a retransmission.
//! Under RACK-TLP recovery (Linux's congestion states) ECE enters CWR, where PRR brings
//! cwnd down to ssthresh (`tcp_enter_cwr`, rack_recovery.rs); otherwise cwnd drops to
//! ssthresh at once (§6.1.2: "halve the congestion window").

use super::Sender;
use crate::engine::Nanos;
use crate::tcp::Segment;

impl Sender {
    /// New data of an ECN connection travels ECN-capable, and announces a reduction
    /// (§6.1.2: CWR on the first new data packet after it). Retransmissions and pure ACKs
    /// are not ECN-capable (§6.1.5, §6.1.4).
    pub(super) fn mark_ecn(&mut self, seg: &mut Segment) {
        seg.ect = true;
        if self.cwr_pending {
            seg.cwr = true;
            self.cwr_pending = false;
        }
    }

    /// Any window reduction (loss or ECE) answers the echo: the receiver may stop, and the
    /// ECE of data sent before now is not answered again (Linux `tcp_ecn_queue_cwr`).
    pub(super) fn note_reduction(&mut self) {
        self.cwr_pending = self.ecn_ok;
        self.ece_window_end = self.snd_max;
    }

    /// An ACK with ECE outside RACK's congestion states: reduce once per window, unless
    /// loss recovery is already reducing it.
    pub(super) fn on_ece(&mut self, now: Nanos, seg: &Segment) {
        if !(self.ecn_ok && seg.ece)
            || self.in_recovery
            || self.snd_una < self.ece_window_end
            || self.cc.sets_cwnd_itself()
        {
            return;
        }
        self.stats.ecn_reductions += 1;
        let state = self.cc_state(now);
        self.ssthresh = self.cc.ssthresh_after_loss(&state);
        self.cwnd = self.ssthresh.max(self.mss);
        self.note_reduction();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HyStartVariant, LossRecovery, NagleVariant, SenderConfig};
    use super::*;
    use crate::tcp::cc::{CubicVariant, RenoVariant};
    use crate::tcp::{BufferSize, EcnMode, Receiver, ReceiverConfig, RtoForm};

    const MS: Nanos = 1_000_000;
    const MSS: u64 = 1000;

    fn sender(ecn: EcnMode, loss_recovery: LossRecovery) -> Sender {
        Sender::new(SenderConfig {
            cc: "newreno".into(),
            cubic_variant: CubicVariant::Rfc9438,
            reno_variant: RenoVariant::Rfc5681,
            mss: MSS as u32,
            sndbuf: BufferSize::Bytes(1 << 20),
            sndbuf_accounting: crate::tcp::SndbufAccounting::Payload,
            rcvbuf: BufferSize::Bytes(1 << 20),
            initial_window: 10,
            window_scaling: false,
            sack: loss_recovery == LossRecovery::Rack,
            timestamps: false,
            abc: false,
            hystart: false,
            hystart_variant: HyStartVariant::Rfc9406,
            nagle: false,
            nagle_variant: NagleVariant::Rfc896,
            fast_retransmit: true,
            min_rto_ns: 200 * MS,
            rto_form: RtoForm::Rfc6298,
            cwnd_validation: false,
            loss_recovery,
            slow_start_after_idle: false,
            frto: false,
            undo: false,
            gso: false,
            ecn,
            rng: crate::engine::RngStream::new(1, "test"),
        })
    }

    fn receiver(ecn: EcnMode) -> Receiver {
        Receiver::new(ReceiverConfig {
            mss: MSS as u32,
            rcvbuf: BufferSize::Bytes(1 << 20),
            window_scaling: false,
            sack: true,
            timestamps: false,
            delayed_ack: false,
            delack_timeout_ns: 0,
            quickack: false,
            dsack: false,
            initial_rwnd: None,
            ecn,
        })
    }

    /// The SYN, the receiver's SYN-ACK, and the sender opened by it with 40 segments
    /// written; returns the first flight.
    fn open(s: &mut Sender, r: &mut Receiver) -> Vec<Segment> {
        let mut out = Vec::new();
        s.connect(0, &mut out);
        r.on_segment(0, &out[0]);
        let mut syn_ack = Vec::new();
        r.poll(0, &mut syn_ack);
        out.clear();
        s.on_segment(100 * MS, &syn_ack[0], &mut out);
        s.write(100 * MS, 40 * MSS);
        s.try_send(100 * MS, &mut out);
        out
    }

    fn ack(s: &mut Sender, now: Nanos, ack: u64, ece: bool) -> Vec<Segment> {
        let mut out = Vec::new();
        let seg = Segment {
            ece,
            ..Segment::pure_ack(ack, 65_535)
        };
        s.on_segment(now, &seg, &mut out);
        out
    }

    #[test]
    fn ecn_is_negotiated_only_when_asked_and_accepted() {
        // §6.1.1: SYN with ECE and CWR, SYN-ACK with ECE alone; Linux's tcp_ecn = 2
        // accepts but does not ask.
        for (client, server, agreed) in [
            (EcnMode::On, EcnMode::On, true),
            (EcnMode::On, EcnMode::Passive, true),
            (EcnMode::On, EcnMode::Off, false),
            (EcnMode::Passive, EcnMode::On, false),
        ] {
            let mut s = sender(client, LossRecovery::Classic);
            let syn = s.syn(0);
            assert_eq!((syn.ece, syn.cwr), (client.requests(), client.requests()));
            let mut r = receiver(server);
            let flight = open(&mut s, &mut r);
            assert!(
                flight.iter().all(|seg| seg.ect == agreed),
                "{client:?} {server:?}"
            );
        }
    }

    #[test]
    fn ece_halves_the_window_once_per_window_and_cwr_follows_on_new_data() {
        // §6.1.2: one reduction per window of data, no retransmission, CWR on the next
        // new data packet only.
        let mut s = sender(EcnMode::On, LossRecovery::Classic);
        let mut r = receiver(EcnMode::On);
        open(&mut s, &mut r);
        let out = ack(&mut s, 200 * MS, MSS, true);
        assert_eq!(s.stats.ecn_reductions, 1);
        // The algorithm's loss response: NewReno's FlightSize / 2 of the 9 segments still
        // in flight, and cwnd down to it at once.
        assert_eq!(s.ssthresh(), 9 * MSS / 2);
        assert_eq!(s.cwnd(), s.ssthresh());
        assert_eq!(s.stats.retransmits, 0);
        let cwr: Vec<bool> = out.iter().map(|seg| seg.cwr).collect();
        assert!(
            cwr.is_empty() || (cwr[0] && !cwr[1..].contains(&true)),
            "{cwr:?}"
        );
        // Further ECE for data sent before the reduction: no second reduction.
        ack(&mut s, 201 * MS, 2 * MSS, true);
        ack(&mut s, 202 * MS, 5 * MSS, true);
        assert_eq!(s.stats.ecn_reductions, 1);
    }

    #[test]
    fn under_rack_ece_enters_cwr_and_prr_brings_cwnd_to_ssthresh() {
        // Linux `tcp_enter_cwr`: PRR reduces over the round trip, then cwnd = ssthresh.
        let mut s = sender(EcnMode::On, LossRecovery::Rack);
        let mut r = receiver(EcnMode::On);
        open(&mut s, &mut r);
        ack(&mut s, 200 * MS, MSS, true);
        assert_eq!(s.stats.ecn_reductions, 1);
        let ssthresh = s.ssthresh();
        let mut acked = MSS;
        let mut now = 200 * MS;
        while acked < 10 * MSS {
            acked += MSS;
            now += MS;
            ack(&mut s, now, acked, true);
        }
        assert_eq!(s.stats.ecn_reductions, 1);
        // The whole first flight acknowledged: past high_seq, the state ends at ssthresh.
        ack(&mut s, now + MS, 20 * MSS, false);
        assert!(s.cwnd() <= ssthresh + 2 * MSS, "{} vs {ssthresh}", s.cwnd());
        assert_eq!(s.stats.retransmits, 0);
    }

    #[test]
    fn retransmissions_are_not_ecn_capable() {
        // §6.1.5.
        let mut s = sender(EcnMode::On, LossRecovery::Classic);
        let mut r = receiver(EcnMode::On);
        open(&mut s, &mut r);
        let mut out = Vec::new();
        s.on_timer(10 * 1_000 * MS, &mut out);
        assert!(!out.is_empty());
        assert!(out.iter().all(|seg| seg.retransmission && !seg.ect));
    }
}
