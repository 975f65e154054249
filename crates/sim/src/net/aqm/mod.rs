//! Queue disciplines of a link direction (docs/models/aqm.md): drop-tail, RED, CoDel,
//! FQ-CoDel and PIE behind one interface, used by the simulator's channel and by the
//! emulator's hop alike. A packet is offered with `enqueue` and taken for the line with
//! `dequeue`; the AQMs that judge by sojourn time (CoDel, FQ-CoDel) decide at dequeue,
//! RED and PIE at enqueue. A discipline marks an ECN-capable packet (RFC 3168 §5) where it
//! is configured to, instead of dropping it.

mod codel;
mod fq_codel;
mod pie;
mod red;

pub use codel::{Codel, CodelParams};
pub use fq_codel::FqCodel;
pub use pie::Pie;
pub use red::Red;

use super::{DropTail, Queued};
use crate::engine::{Nanos, RngStream};
use crate::plan::{AqmPlan, QueuePlan};

/// The FIFO under CoDel, RED and PIE, and each flow queue of FQ-CoDel: of stamped packets.
type Fifo<T> = super::queue::Fifo<Stamped<T>>;

/// What a discipline needs to know of an arriving packet besides its size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Identifies the packet's flow (its 5-tuple): FQ-CoDel hashes it to a queue.
    pub flow: u64,
    /// ECN-capable transport (ECT(0) or ECT(1) in the IP header, RFC 3168 §5).
    pub ect: bool,
}

/// A packet taken from the queue for the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure<T> {
    pub packet: T,
    /// The discipline marked it Congestion Experienced instead of dropping it.
    pub ce: bool,
    /// How long it waited in the queue.
    pub sojourn_ns: Nanos,
}

/// Linux's psched_mtu for Ethernet (1500 + 14 bytes of header): CoDel's "maxpacket"
/// (RFC 8289 §5.6: no drop while a queue holds at most one packet) and PIE's packet size
/// (RFC 8033 §4.1: no drop while it holds less than two).
pub const MTU_BYTES: u64 = 1514;

pub enum Discipline<T> {
    DropTail(DropTail<Stamped<T>>),
    Red(Box<Red<T>>),
    Codel(Box<Codel<T>>),
    FqCodel(Box<FqCodel<T>>),
    Pie(Box<Pie<T>>),
}

/// A queued packet with what the disciplines keep beside it.
#[derive(Debug, Clone, Copy)]
pub struct Stamped<T> {
    pub packet: T,
    pub enqueued_ns: Nanos,
    pub ect: bool,
    pub ce: bool,
}

impl<T: Queued> Queued for Stamped<T> {
    fn ip_bytes(&self) -> u64 {
        self.packet.ip_bytes()
    }
}

impl<T> Stamped<T> {
    fn depart(self, now: Nanos) -> Departure<T> {
        Departure {
            packet: self.packet,
            ce: self.ce,
            sojourn_ns: now - self.enqueued_ns,
        }
    }
}

impl<T: Queued> Discipline<T> {
    /// The discipline `aqm` names (drop-tail without one), holding at most `limit`.
    /// `rate_bps` is the line's (RED counts idle time in packet transmission times); `rng`
    /// is the queue's own named stream (RED's and PIE's random drops, FQ-CoDel's hash
    /// perturbation).
    pub fn new(limit: QueuePlan, aqm: Option<&AqmPlan>, rate_bps: u64, rng: RngStream) -> Self {
        match aqm {
            None => Discipline::DropTail(DropTail::new(limit)),
            Some(&AqmPlan::Red {
                min_th,
                max_th,
                max_p,
                w_q,
                gentle,
                mean_packet_bytes,
                ecn,
            }) => Discipline::Red(Box::new(Red::new(
                limit,
                red::RedParams {
                    min_th: min_th as f64,
                    max_th: max_th as f64,
                    max_p,
                    w_q,
                    gentle,
                    ecn,
                    idle_packet_ns: crate::engine::serialization_ns(mean_packet_bytes, rate_bps)
                        .max(1),
                },
                rng,
            ))),
            Some(&AqmPlan::Codel {
                target_ns,
                interval_ns,
                ecn,
            }) => Discipline::Codel(Box::new(Codel::new(
                limit,
                CodelParams {
                    target_ns,
                    interval_ns,
                    ecn,
                },
            ))),
            Some(&AqmPlan::FqCodel {
                target_ns,
                interval_ns,
                flows,
                quantum,
                ecn,
            }) => Discipline::FqCodel(Box::new(FqCodel::new(
                limit,
                CodelParams {
                    target_ns,
                    interval_ns,
                    ecn,
                },
                flows,
                quantum,
                rng,
            ))),
            Some(&AqmPlan::Pie {
                target_ns,
                t_update_ns,
                alpha,
                beta,
                max_burst_ns,
                ecn,
            }) => Discipline::Pie(Box::new(Pie::new(
                limit,
                pie::PieParams {
                    target_ns,
                    t_update_ns,
                    alpha,
                    beta,
                    max_burst_ns,
                    ecn,
                },
                rng,
            ))),
        }
    }

    /// Offers a packet at `now`. Returns the packet the discipline dropped, if any: the
    /// arrival, or (FQ-CoDel on overflow) one from the head of the longest flow queue.
    pub fn enqueue(&mut self, now: Nanos, packet: T, arrival: Arrival) -> Option<T> {
        let stamped = Stamped {
            packet,
            enqueued_ns: now,
            ect: arrival.ect,
            ce: false,
        };
        match self {
            Discipline::DropTail(q) => q.push(stamped).err().map(|s| s.packet),
            Discipline::Red(q) => q.enqueue(now, stamped),
            Discipline::Codel(q) => q.enqueue(stamped),
            Discipline::FqCodel(q) => q.enqueue(stamped, arrival.flow),
            Discipline::Pie(q) => q.enqueue(now, stamped),
        }
    }

    /// The next packet for the line at `now`, if any; the packets the discipline drops
    /// on the way (CoDel's) go to `dropped`.
    pub fn dequeue(&mut self, now: Nanos, dropped: &mut impl FnMut(T)) -> Option<Departure<T>> {
        let next = match self {
            Discipline::DropTail(q) => q.pop(),
            Discipline::Red(q) => q.dequeue(now),
            Discipline::Codel(q) => q.dequeue(now, dropped),
            Discipline::FqCodel(q) => q.dequeue(now, dropped),
            Discipline::Pie(q) => q.dequeue(now),
        };
        next.map(|s| s.depart(now))
    }

    /// IP bytes waiting.
    pub fn bytes(&self) -> u64 {
        match self {
            Discipline::DropTail(q) => q.bytes(),
            Discipline::Red(q) => q.fifo.bytes(),
            Discipline::Codel(q) => q.fifo.bytes(),
            Discipline::FqCodel(q) => q.bytes(),
            Discipline::Pie(q) => q.fifo.bytes(),
        }
    }

    /// Packets waiting.
    pub fn packets(&self) -> u64 {
        match self {
            Discipline::DropTail(q) => q.len() as u64,
            Discipline::Red(q) => q.fifo.len() as u64,
            Discipline::Codel(q) => q.fifo.len() as u64,
            Discipline::FqCodel(q) => q.packets(),
            Discipline::Pie(q) => q.fifo.len() as u64,
        }
    }

    /// Whether a packet arriving at an idle line goes straight onto it. Drop-tail's limit
    /// counts only waiting packets, so its arrival at an idle line never meets the limit;
    /// the AQMs see every packet (RED averages the queue at each arrival, PIE counts it).
    pub fn bypassed_when_idle(&self) -> bool {
        matches!(self, Discipline::DropTail(_))
    }
}

#[cfg(test)]
/// Test packets: numbers standing for full 1500-byte datagrams.
impl Queued for u32 {
    fn ip_bytes(&self) -> u64 {
        1500
    }
}
