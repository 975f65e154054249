//! What a link direction does to a frame once its queue lets it go: serialization at
//! `rate` (wire bytes · 8 / rate, framing included), `delay` of propagation, and the error
//! model drawn as the frame leaves the line; or, with a schedule, what the schedule says at
//! the time (net/schedule.rs). The simulator's channel and the emulator's hop both run it.

use super::{ErrorProcess, Framing, Schedule};
use crate::engine::{serialization_ns, Nanos, RngStream};
use crate::plan::{ChannelPlan, ErrorPlan};

pub struct Line {
    rate_bps: u64,
    delay_ns: Nanos,
    framing: Framing,
    /// None on a lossless line without a schedule, which never draws; boxed, so that such a
    /// line is 48 bytes and a channel's pass reads one cache line of it (net/channel.rs).
    errors: Option<Box<ErrorProcess>>,
    /// Boxed: a line without a schedule pays only a pointer for the possibility.
    schedule: Option<Box<Schedule>>,
}

impl Line {
    /// `rng` draws the error model's losses (`links.{i}.{dir}.errors`).
    pub fn new(plan: &ChannelPlan, rng: RngStream) -> Self {
        let schedule = Schedule::new(plan).map(Box::new);
        let draws = schedule.is_some() || !matches!(plan.error, ErrorPlan::None);
        Self {
            rate_bps: plan.rate_bps,
            delay_ns: plan.delay_ns,
            framing: plan.framing.into(),
            errors: draws.then(|| Box::new(ErrorProcess::new(plan.error, rng))),
            schedule,
        }
    }

    /// Puts the schedule's time 0, if there is one, at `origin` (u64::MAX: not yet, the
    /// values of time 0 hold).
    pub fn start_clock(&mut self, origin: Nanos) {
        if let Some(schedule) = &mut self.schedule {
            schedule.start_at(origin);
        }
    }

    pub fn wire_bytes(&self, ip_bytes: u64) -> u64 {
        self.framing.wire_bytes(ip_bytes)
    }

    /// A frame of `wire` bytes starts onto the line at `now`: when its last bit leaves.
    pub fn finish(&mut self, now: Nanos, wire: u64) -> Nanos {
        match &mut self.schedule {
            None => now + serialization_ns(wire, self.rate_bps),
            Some(schedule) => schedule.finish(now, wire),
        }
    }

    /// A frame left the line at `now`: when it reaches the far end, and the error model the
    /// schedule gives that moment (None: the line's own).
    fn reach(&mut self, now: Nanos) -> (Nanos, Option<ErrorPlan>) {
        match &mut self.schedule {
            None => (now + self.delay_ns, None),
            Some(schedule) => {
                let (at, model) = schedule.depart(now);
                (at, Some(model))
            }
        }
    }

    /// A frame the error model does not apply to (the emulator's own control traffic, which
    /// no simulated path carries) left the line at `now`: when it reaches the far end. No
    /// draw is taken, so the frames after it meet the draws they would without it.
    pub fn pass(&mut self, now: Nanos) -> Nanos {
        self.reach(now).0
    }

    /// The frame of `wire` bytes left the line at `now`: when it reaches the far end, or
    /// None if the error model destroyed it.
    pub fn depart(&mut self, now: Nanos, wire: u64) -> Option<Nanos> {
        let (at, model) = self.reach(now);
        let corrupted = match model {
            None => self.errors.as_mut().is_some_and(|e| e.corrupts(wire)),
            Some(model) => self
                .errors
                .as_mut()
                .expect("a scheduled line has its errors")
                .corrupts_under(model, wire),
        };
        (!corrupted).then_some(at)
    }
}
