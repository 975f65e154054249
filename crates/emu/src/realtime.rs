//! The emulator thread's real-time class, kept within the kernel's real-time budget.
//!
//! SCHED_FIFO lets the thread run the moment it wakes, whatever else wants the CPU. But
//! Linux lets real-time threads use only `sched_rt_runtime_us` of each `sched_rt_period_us`
//! on a CPU (950 ms of 1 s by default, Documentation/scheduler/sched-rt-group.rst) and then
//! stops them for the rest of the period: a thread that polls at high packet rates (crate::
//! sys `Epoll::wait_until`) was frozen for 50 ms once a second, the worst lateness of
//! every fast run. The thread therefore keeps its own account, a token bucket filled at
//! [`SHARE_PPM`] of the wall-clock time and drained by the CPU time it uses in the real-time
//! class: in any window of T it runs real-time at most SHARE · T + [`BURST_NS`], under the
//! kernel's limit for T = 1 s (0.9 s against 0.95 s), so the kernel never throttles it.
//! When the bucket is empty the thread goes to the normal class (at nice -20: it keeps
//! running, sharing the CPU only with what else runs there), and returns to SCHED_FIFO once
//! the bucket holds half its burst again. No system setting is touched.

use crate::sys;

/// The share of wall-clock time the thread may run in the real-time class, per million.
pub const SHARE_PPM: u64 = 850_000;
/// The bucket's size: how far ahead of its share the thread may run for a while.
pub const BURST_NS: u64 = 50_000_000;
/// How often the account is brought up to date (a thread CPU-time read each time).
const CHECK_EVERY_NS: u64 = 1_000_000;

/// The account alone, without system calls: what [`Realtime`] decides from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    tokens_ns: u64,
    pub fifo: bool,
}

impl Budget {
    pub fn new() -> Self {
        Self {
            tokens_ns: BURST_NS,
            fifo: true,
        }
    }

    /// `elapsed_ns` of wall time passed, of which the thread ran `cpu_ns`; true if the class
    /// must change (the new one is in `fifo`).
    pub fn update(&mut self, elapsed_ns: u64, cpu_ns: u64) -> bool {
        let earned = elapsed_ns.saturating_mul(SHARE_PPM) / 1_000_000;
        let spent = if self.fifo { cpu_ns } else { 0 };
        self.tokens_ns = (self.tokens_ns + earned)
            .min(BURST_NS)
            .saturating_sub(spent);
        let change = if self.fifo {
            self.tokens_ns == 0
        } else {
            self.tokens_ns >= BURST_NS / 2
        };
        self.fifo ^= change;
        change
    }
}

/// The thread's class over a run, and what it cost.
pub struct Realtime {
    priority: i32,
    budget: Budget,
    last_wall_ns: u64,
    last_cpu_ns: u64,
    since_ns: u64,
    /// Times the thread left the real-time class to stay within the budget.
    pub demotions: u32,
    /// Wall time spent in the normal class after a demotion.
    pub normal_ns: u64,
}

impl Realtime {
    /// Takes SCHED_FIFO at `priority` for the calling thread; None if refused.
    pub fn start(priority: i32, now_ns: u64) -> Option<Self> {
        sys::try_realtime(priority).then(|| Self {
            priority,
            budget: Budget::new(),
            last_wall_ns: now_ns,
            last_cpu_ns: sys::thread_cpu_ns(),
            since_ns: now_ns,
            demotions: 0,
            normal_ns: 0,
        })
    }

    /// Brings the account up to date (at most once a millisecond) and changes class if due.
    pub fn tick(&mut self, now_ns: u64) {
        if now_ns < self.last_wall_ns + CHECK_EVERY_NS {
            return;
        }
        let cpu_ns = sys::thread_cpu_ns();
        let elapsed = now_ns - self.last_wall_ns;
        let used = cpu_ns.saturating_sub(self.last_cpu_ns);
        (self.last_wall_ns, self.last_cpu_ns) = (now_ns, cpu_ns);
        if !self.budget.update(elapsed, used) {
            return;
        }
        if self.budget.fifo {
            // Refused only if the thread lost the right to it meanwhile: stay normal then.
            self.budget.fifo = sys::try_realtime(self.priority);
            self.normal_ns += now_ns - self.since_ns;
        } else {
            sys::normal_class_first();
            self.demotions += 1;
        }
        self.since_ns = now_ns;
    }

    /// Closes the account at the end of the run.
    pub fn finish(&mut self, now_ns: u64) {
        if !self.budget.fifo {
            self.normal_ns += now_ns - self.since_ns;
            self.since_ns = now_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the budget for `total_ns` in 1 ms steps with the thread busy `busy_ppm` of the
    /// time; returns the real-time CPU of the worst 1 s window (any alignment, in 1 ms
    /// steps) and the number of class changes.
    fn simulate(busy_ppm: u64, total_ns: u64) -> (u64, usize) {
        let step = 1_000_000;
        let mut b = Budget::new();
        let mut fifo_cpu = Vec::new();
        let mut changes = 0;
        for _ in 0..total_ns / step {
            let used = step * busy_ppm / 1_000_000;
            fifo_cpu.push(if b.fifo { used } else { 0 });
            changes += usize::from(b.update(step, used));
        }
        let worst = fifo_cpu
            .windows(1000)
            .map(|w| w.iter().sum())
            .max()
            .unwrap();
        (worst, changes)
    }

    #[test]
    fn a_thread_within_its_share_keeps_the_realtime_class() {
        assert_eq!(simulate(800_000, 10_000_000_000), (800_000_000, 0));
    }

    #[test]
    fn a_busy_thread_stays_under_the_kernels_limit_in_every_second() {
        // sched_rt_runtime_us 950 000 of sched_rt_period_us 1 000 000.
        let (worst, changes) = simulate(1_000_000, 10_000_000_000);
        assert!(worst <= 900_000_000, "{worst}");
        assert!(worst >= 840_000_000, "{worst}");
        assert!(changes > 2);
    }

    #[test]
    fn the_normal_class_lasts_until_half_the_burst_is_back() {
        let mut b = Budget::new();
        // Busy: the bucket empties at 1 - SHARE, in 1 + 49 / 0.15 ms (the first
        // millisecond's earnings do not fit a full bucket).
        let mut t = 0;
        while b.fifo {
            b.update(1_000_000, 1_000_000);
            t += 1;
        }
        assert_eq!(t, 328);
        // Out of the class, it earns SHARE: half the burst takes 30 ms.
        let mut t = 0;
        while !b.fifo {
            b.update(1_000_000, 1_000_000);
            t += 1;
        }
        assert_eq!(t, 30);
    }
}
