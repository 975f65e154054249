use std::collections::VecDeque;

use super::PacketRef;
use crate::engine::prefetch;
use crate::plan::QueuePlan;

/// What a queue holds: an IP datagram, or one wrapped with where it goes next.
pub trait Queued {
    fn ip_bytes(&self) -> u64;
}

impl Queued for PacketRef {
    fn ip_bytes(&self) -> u64 {
        u64::from(self.ip_bytes)
    }
}

/// How many packets behind the one leaving a queue asks for (crate::engine::prefetch): a
/// few cache lines on.
const PREFETCH_AHEAD: usize = 8;

/// A FIFO that counts its packets' IP bytes: the drop-tail queue's, and the queue of CoDel,
/// RED and PIE and each flow queue of FQ-CoDel (crate::net::aqm), which judge for
/// themselves what it may hold.
pub struct Fifo<T> {
    items: VecDeque<T>,
    bytes: u64,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Self {
            items: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<T: Queued> Fifo<T> {
    pub fn push(&mut self, item: T) {
        self.bytes += item.ip_bytes();
        self.items.push_back(item);
    }

    pub fn pop(&mut self) -> Option<T> {
        let item = self.items.pop_front()?;
        self.bytes -= item.ip_bytes();
        // A long queue is read one packet a serialization, too seldom for the processor to
        // see a stream: the packets a few lines on are asked for now.
        if let Some(later) = self.items.get(PREFETCH_AHEAD) {
            prefetch(later);
        }
        Some(item)
    }

    /// Whether a packet of `ip_bytes` fits under `limit`.
    pub fn fits(&self, limit: QueuePlan, ip_bytes: u64) -> bool {
        fits(limit, self.items.len(), self.bytes, ip_bytes)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A drop-tail FIFO limited in packets or in IP bytes. The packet being serialized has
/// already left it, as in a Linux qdisc or an ns-3 device queue.
pub struct DropTail<T = PacketRef> {
    limit: QueuePlan,
    fifo: Fifo<T>,
}

impl<T: Queued> DropTail<T> {
    pub fn new(limit: QueuePlan) -> Self {
        Self {
            limit,
            fifo: Fifo::default(),
        }
    }

    /// Appends the packet; hands it back when it does not fit (it is dropped).
    pub fn push(&mut self, packet: T) -> Result<(), T> {
        if !self.fifo.fits(self.limit, packet.ip_bytes()) {
            return Err(packet);
        }
        self.fifo.push(packet);
        Ok(())
    }

    pub fn pop(&mut self) -> Option<T> {
        self.fifo.pop()
    }

    pub fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
}

/// Whether `extra` more IP bytes fit a queue holding `packets` and `bytes` under `limit`.
fn fits(limit: QueuePlan, packets: usize, bytes: u64, extra: u64) -> bool {
    match limit {
        QueuePlan::Packets(n) => (packets as u64) < n,
        QueuePlan::Bytes(n) => bytes + extra <= n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IP datagram carrying `len` bytes of TCP payload behind 40 bytes of headers.
    fn packet(len: u32) -> PacketRef {
        PacketRef {
            id: 0,
            ip_bytes: 40 + len,
        }
    }

    #[test]
    fn packet_limit_drops_the_arrival_that_does_not_fit() {
        let mut q = DropTail::new(QueuePlan::Packets(2));
        assert!(q.push(packet(100)).is_ok());
        assert!(q.push(packet(100)).is_ok());
        assert!(q.push(packet(100)).is_err());
        q.pop();
        assert!(q.push(packet(100)).is_ok());
    }

    #[test]
    fn byte_limit_counts_ip_bytes() {
        // Two 1500-byte datagrams fit in 3000 bytes, a third does not, a 40-byte ACK does not.
        let mut q = DropTail::new(QueuePlan::Bytes(3000));
        assert!(q.push(packet(1460)).is_ok());
        assert!(q.push(packet(1460)).is_ok());
        assert_eq!(q.bytes(), 3000);
        assert!(q.push(packet(0)).is_err());
    }
}
