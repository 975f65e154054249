//! Explicit Congestion Notification in TCP (RFC 3168 §6.1): negotiated on the SYN and
//! SYN-ACK, then data travels ECN-capable (ECT(0)); a receiver that gets a packet marked
//! Congestion Experienced sets ECE on its ACKs until a segment with CWR arrives (§6.1.3),
//! and the sender answers ECE with one window reduction per round trip, announced by CWR
//! on its next new data (§6.1.2). Linux: net/ipv4/tcp_input.c (tcp_ecn_*), tcp_output.c.

use schemars::JsonSchema;
use serde::Deserialize;

/// Whether a host uses ECN, as Linux's `net.ipv4.tcp_ecn`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// 0: never.
    #[default]
    Off,
    /// 1: request it on connections this host opens, accept it on the others.
    On,
    /// 2 (Linux's default): accept it when the peer requests it, never request it.
    Passive,
}

impl EcnMode {
    /// An active opener asks for ECN with ECE and CWR on its SYN (§6.1.1).
    pub fn requests(self) -> bool {
        self == EcnMode::On
    }

    pub fn accepts(self) -> bool {
        self != EcnMode::Off
    }
}

/// The receiver's side of an ECN connection: whether it still owes the sender an echo.
#[derive(Debug, Default, Clone, Copy)]
pub struct EcnEcho {
    /// Negotiated on this connection.
    pub enabled: bool,
    /// Linux's TCP_ECN_DEMAND_CWR: set ECE on every ACK until CWR is seen.
    demand_cwr: bool,
}

impl EcnEcho {
    /// A data segment arrived; returns true when it newly asks for an echo, which Linux
    /// sends at once (`tcp_ecn_check_ce` enters quick-ACK mode: the sender's cwnd may be
    /// small).
    pub fn on_data(&mut self, cwr: bool, ce: bool) -> bool {
        if !self.enabled {
            return false;
        }
        // §6.1.3: CWR ends the echo; a CE on the same packet starts a new one.
        if cwr {
            self.demand_cwr = false;
        }
        let newly = ce && !self.demand_cwr;
        if ce {
            self.demand_cwr = true;
        }
        newly
    }

    /// The ECE flag of the next ACK.
    pub fn ece(&self) -> bool {
        self.demand_cwr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ece_is_echoed_from_the_ce_packet_until_cwr() {
        // RFC 3168 §6.1.3.
        let mut e = EcnEcho {
            enabled: true,
            ..EcnEcho::default()
        };
        assert!(!e.on_data(false, false));
        assert!(!e.ece());
        assert!(e.on_data(false, true));
        assert!(e.ece());
        // Later packets, marked or not, keep the echo on and do not ask for an ACK again.
        assert!(!e.on_data(false, false));
        assert!(!e.on_data(false, true));
        assert!(e.ece());
        assert!(!e.on_data(true, false));
        assert!(!e.ece());
        // CWR and CE on one packet: the new mark is echoed.
        e.on_data(false, true);
        assert!(e.on_data(true, true));
        assert!(e.ece());
    }

    #[test]
    fn without_negotiation_marks_are_not_echoed() {
        let mut e = EcnEcho::default();
        assert!(!e.on_data(false, true));
        assert!(!e.ece());
    }

    #[test]
    fn linux_modes_request_and_accept() {
        assert!(EcnMode::On.requests() && EcnMode::On.accepts());
        assert!(!EcnMode::Passive.requests() && EcnMode::Passive.accepts());
        assert!(!EcnMode::Off.requests() && !EcnMode::Off.accepts());
    }
}
