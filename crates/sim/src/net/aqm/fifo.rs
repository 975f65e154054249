use std::collections::VecDeque;

use super::Stamped;
use crate::net::queue::fits;
use crate::net::Queued;
use crate::plan::QueuePlan;

/// A FIFO of stamped packets that counts its IP bytes: the queue of CoDel, RED and PIE,
/// and each flow queue of FQ-CoDel.
pub struct Fifo<T> {
    items: VecDeque<Stamped<T>>,
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
    pub fn push(&mut self, item: Stamped<T>) {
        self.bytes += item.ip_bytes();
        self.items.push_back(item);
    }

    pub fn pop(&mut self) -> Option<Stamped<T>> {
        let item = self.items.pop_front()?;
        self.bytes -= item.ip_bytes();
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
