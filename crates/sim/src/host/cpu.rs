//! A host's one CPU, the NIC receive ring in front of it, and what its work costs.
//!
//! The CPU runs one piece of work at a time, to completion (no preemption: a system call
//! or a storage write holds the CPU until it returns). When it is free it takes packet
//! work first (received packets and packets to send, in the order they came), then the
//! applications' system calls, as an interrupt-driven kernel does. Received packets wait
//! in the NIC's receive ring; one that finds the ring full is dropped, the overflow a slow
//! receiver suffers when packets arrive faster than it processes them (seed 003, Fig. 12's
//! "Low Window" losses at the PDA).

use std::collections::VecDeque;

use crate::engine::Nanos;
use crate::plan::CpuPlan;

/// What each kind of work costs (docs/models/hosts.md has the profiles and their sources).
#[derive(Debug, Clone, Copy)]
pub struct CpuCosts {
    pub per_packet_ns: Nanos,
    pub per_byte_ns: Nanos,
    pub per_call_ns: Nanos,
    pub storage_per_byte_ns: Nanos,
}

impl CpuCosts {
    /// Protocol processing of one packet, sent or received.
    pub fn packet(&self) -> Nanos {
        self.per_packet_ns
    }

    /// A read() or write() moving `bytes` between the application and the socket; a
    /// continuation of a blocked write() pays for its bytes only.
    pub fn copy(&self, bytes: u64, new_call: bool) -> Nanos {
        bytes * self.per_byte_ns + if new_call { self.per_call_ns } else { 0 }
    }

    /// The write() that puts `bytes` just read into storage.
    pub fn store(&self, bytes: u64) -> Nanos {
        self.per_call_ns + bytes * self.storage_per_byte_ns
    }

    pub fn stores(&self) -> bool {
        self.storage_per_byte_ns > 0
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct CpuStats {
    pub busy_ns: Nanos,
    pub packets: u64,
    pub calls: u64,
    pub ring_drops: u64,
}

struct Work<J> {
    job: J,
    cost: Nanos,
    /// A received packet, which holds a ring slot while it waits.
    received: bool,
}

pub struct Cpu<J> {
    pub costs: CpuCosts,
    ring_packets: usize,
    kernel: VecDeque<Work<J>>,
    in_ring: usize,
    user: VecDeque<Work<J>>,
    running: Option<(J, Nanos)>,
    pub stats: CpuStats,
}

impl<J> Cpu<J> {
    pub fn new(plan: &CpuPlan) -> Self {
        Self {
            costs: CpuCosts {
                per_packet_ns: plan.per_packet_ns,
                per_byte_ns: plan.per_byte_ns,
                per_call_ns: plan.per_call_ns,
                storage_per_byte_ns: plan.storage_per_byte_ns,
            },
            ring_packets: usize::try_from(plan.ring_packets).unwrap_or(usize::MAX),
            kernel: VecDeque::new(),
            in_ring: 0,
            user: VecDeque::new(),
            running: None,
            stats: CpuStats::default(),
        }
    }

    /// A packet arrived from the network and waits in the ring; `Err(job)` if the ring is
    /// full and the packet is dropped.
    pub fn receive(&mut self, job: J) -> Result<(), J> {
        if self.in_ring >= self.ring_packets {
            self.stats.ring_drops += 1;
            return Err(job);
        }
        self.in_ring += 1;
        self.push_packet(job, true);
        Ok(())
    }

    /// A packet to send: protocol processing, then the NIC puts it on the link.
    pub fn transmit(&mut self, job: J) {
        self.push_packet(job, false);
    }

    fn push_packet(&mut self, job: J, received: bool) {
        self.stats.packets += 1;
        let cost = self.costs.packet();
        self.kernel.push_back(Work {
            job,
            cost,
            received,
        });
    }

    /// An application's system call, or the continuation of a blocked one, costing `cost`.
    pub fn call(&mut self, job: J, cost: Nanos, new_call: bool) {
        if new_call {
            self.stats.calls += 1;
        }
        self.user.push_back(Work {
            job,
            cost,
            received: false,
        });
    }

    /// If the CPU is idle, starts the next piece of work, packets first; returns when it
    /// will end.
    pub fn dispatch(&mut self, now: Nanos) -> Option<Nanos> {
        if self.running.is_some() {
            return None;
        }
        let work = match self.kernel.pop_front() {
            Some(w) => w,
            None => self.user.pop_front()?,
        };
        if work.received {
            self.in_ring -= 1;
        }
        let done = now + work.cost;
        self.stats.busy_ns += work.cost;
        self.running = Some((work.job, done));
        Some(done)
    }

    /// The running work has ended; the CPU is idle until the next `dispatch`, so that what
    /// the work leads to (the packets a read() sends, say) is queued before it picks again.
    pub fn finish(&mut self) -> J {
        let (job, _) = self
            .running
            .take()
            .expect("the CPU finishes only the work it started");
        job
    }

    /// Busy time up to `stop`: work still running then counts only until `stop`.
    pub fn busy_until(&self, stop: Nanos) -> Nanos {
        let overrun = self
            .running
            .as_ref()
            .map_or(0, |(_, end)| end.saturating_sub(stop));
        self.stats.busy_ns - overrun
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(per_packet_ns: Nanos, ring_packets: u64) -> Cpu<&'static str> {
        Cpu::new(&CpuPlan {
            per_packet_ns,
            per_byte_ns: 10,
            per_call_ns: 1_000,
            storage_per_byte_ns: 0,
            ring_packets,
        })
    }

    /// Runs the CPU until it is idle; returns the jobs with the times they ended.
    fn drain(c: &mut Cpu<&'static str>, now: Nanos) -> Vec<(&'static str, Nanos)> {
        let mut done = Vec::new();
        let mut next = c.dispatch(now);
        while let Some(at) = next {
            done.push((c.finish(), at));
            next = c.dispatch(at);
        }
        done
    }

    #[test]
    fn work_runs_one_piece_at_a_time_in_order() {
        let mut c = cpu(100, 8);
        c.receive("a").unwrap();
        c.transmit("b");
        assert_eq!(drain(&mut c, 0), vec![("a", 100), ("b", 200)]);
        assert_eq!(c.stats.busy_ns, 200);
        assert_eq!(c.stats.packets, 2);
    }

    #[test]
    fn packets_go_before_system_calls_but_do_not_preempt_them() {
        // The kernel serves interrupts before user work when it picks the next piece, but
        // a call that holds the CPU runs to completion (no preemption).
        let mut c = cpu(100, 8);
        c.call("read", 5_000, true);
        c.call("store", 5_000, true);
        assert_eq!(c.dispatch(0), Some(5_000));
        c.receive("packet").unwrap();
        assert_eq!(c.finish(), "read");
        assert_eq!(
            drain(&mut c, 5_000),
            vec![("packet", 5_100), ("store", 10_100)]
        );
        assert_eq!(c.stats.calls, 2);
    }

    #[test]
    fn a_full_ring_drops_arrivals_while_the_cpu_is_busy() {
        // Packets arriving faster than a CPU that needs 300 ns for each: the ring of 2
        // fills and the excess is lost, as at a PDA's NIC (seed 003, Fig. 12).
        let mut c = cpu(300, 2);
        c.receive("p0").unwrap();
        assert_eq!(c.dispatch(0), Some(300));
        c.receive("p1").unwrap();
        c.receive("p2").unwrap();
        assert_eq!(c.receive("p3"), Err("p3"));
        // p0 ends and p1 leaves the ring for the CPU, freeing a slot for p4.
        assert_eq!(c.finish(), "p0");
        assert_eq!(c.dispatch(300), Some(600));
        c.receive("p4").unwrap();
        assert_eq!(c.receive("p5"), Err("p5"));
        assert_eq!(c.finish(), "p1");
        assert_eq!(drain(&mut c, 600), vec![("p2", 900), ("p4", 1_200)]);
        assert_eq!(c.stats.ring_drops, 2);
    }

    #[test]
    fn busy_time_stops_at_the_end_of_the_run() {
        let mut c = cpu(100, 8);
        c.call("long", 1_000, true);
        c.dispatch(0);
        assert_eq!(c.busy_until(400), 400);
        c.finish();
        assert_eq!(c.busy_until(2_000), 1_000);
    }

    #[test]
    fn costs_add_calls_bytes_and_storage() {
        let c = Cpu::<()>::new(&CpuPlan {
            per_packet_ns: 50_000,
            per_byte_ns: 20,
            per_call_ns: 30_000,
            storage_per_byte_ns: 100,
            ring_packets: 4,
        });
        assert_eq!(c.costs.packet(), 50_000);
        assert_eq!(c.costs.copy(512, true), 30_000 + 512 * 20);
        assert_eq!(c.costs.copy(512, false), 512 * 20);
        assert_eq!(c.costs.store(512), 30_000 + 512 * 100);
        assert!(c.costs.stores());
    }
}
