//! A sender that has been idle: RFC 5681 §4.1's restart window as Linux applies it with
//! `net.ipv4.tcp_slow_start_after_idle = 1` (`tcp_slow_start_after_idle_check`,
//! `tcp_cwnd_restart`), and the algorithm's notice that data leaves with nothing in flight
//! (CA_EVENT_TX_START).

use super::Sender;
use crate::engine::Nanos;

impl Sender {
    /// Linux `tcp_slow_start_after_idle_check`, as the application writes with nothing
    /// outstanding (`tcp_skb_entail`): after an idle spell longer than the RTO, ssthresh
    /// keeps what cwnd had reached (`tcp_current_ssthresh`) and cwnd halves per RTO of
    /// idleness, down to no less than the initial window (or cwnd, if smaller). An
    /// algorithm that sets cwnd itself (BBR) is left alone, as Linux does.
    pub(super) fn restart_after_idle(&mut self, now: Nanos) {
        if !self.cfg.slow_start_after_idle
            || !self.established
            || self.last_sent_at == 0
            || self.cc.sets_cwnd_itself()
        {
            return;
        }
        let rto = self.rto.rto();
        let mut idle = (now - self.last_sent_at).saturating_sub(rto);
        if idle == 0 {
            return;
        }
        self.ssthresh = self.current_ssthresh();
        let restart = (u64::from(self.cfg.initial_window) * self.mss).min(self.cwnd);
        let mut cwnd = self.cwnd;
        while idle > 0 && cwnd > restart {
            cwnd >>= 1;
            idle = idle.saturating_sub(rto);
        }
        self.cwnd = cwnd.max(restart);
    }

    /// Linux `tcp_event_data_sent`: data leaves with nothing in flight.
    pub(super) fn on_transmit_start(&mut self, now: Nanos) {
        if self.last_sent_at == 0 {
            return;
        }
        let state = self.cc_state(now);
        let app_limited = self.app_limited_until > 0;
        self.cc
            .on_transmit_start(&state, now - self.last_sent_at, app_limited);
    }
}
