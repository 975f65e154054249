//! A link direction whose properties change over time (docs/models/schedules.md): its rate,
//! delay, error model and up/down state as tables of (time, value), or its rate as a
//! recorded delivery trace. Times count from the run's start.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{positive, within_clock, ErrorPlan};
use crate::error::PlanError;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchedulePlan {
    /// The line's rate; null: the direction's `rate_bps` throughout.
    #[serde(deserialize_with = "super::written")]
    pub rate_bps: Option<SeriesPlan>,
    /// One-way propagation delay; null: the direction's `delay_ns` throughout.
    #[serde(deserialize_with = "super::written")]
    pub delay_ns: Option<SeriesPlan>,
    /// The error model from each time on; empty: the direction's `error` throughout.
    pub error: Vec<(u64, ErrorPlan)>,
    /// Whether the line carries anything, from each time on; empty: always up.
    pub up: Vec<(u64, bool)>,
    /// The line's rate as delivery opportunities instead of `rate_bps`; null: none.
    #[serde(deserialize_with = "super::written")]
    pub trace: Option<DeliveryTracePlan>,
}

/// Values at times, the first at 0; between two times the value holds (step) or changes
/// linearly. Two points at one time make a step in a linear series.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeriesPlan {
    pub linear: bool,
    pub points: Vec<(u64, u64)>,
}

/// mahimahi's packet-delivery trace: at each opportunity the line may deliver
/// `bytes_per_opportunity`; the opportunities repeat every `period_ns`, the last one's time.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryTracePlan {
    /// Times within the first period, in order; the last is the period.
    pub opportunities_ns: Vec<u64>,
    pub bytes_per_opportunity: u64,
}

/// The times of a table: from 0, in order (equal times allowed), within the clock.
fn times(at: &str, times: impl Iterator<Item = u64>) -> Result<(), PlanError> {
    let mut last = None;
    for (i, t) in times.enumerate() {
        let field = format!("{at}.{i}");
        within_clock(&field, t)?;
        match last {
            None if t != 0 => {
                return Err(PlanError::field(field, "the first entry must be at time 0"));
            }
            Some(before) if t < before => {
                return Err(PlanError::field(
                    field,
                    format!("{t} ns comes before the previous entry's {before} ns"),
                ));
            }
            _ => last = Some(t),
        }
    }
    if last.is_none() {
        return Err(PlanError::field(at, "at least one entry is required"));
    }
    Ok(())
}

impl SchedulePlan {
    pub fn validate(&self, at: &str) -> Result<(), PlanError> {
        if let Some(rate) = &self.rate_bps {
            let field = format!("{at}.rate_bps.points");
            times(&field, rate.points.iter().map(|p| p.0))?;
            for (i, &(_, bps)) in rate.points.iter().enumerate() {
                positive(&format!("{field}.{i}"), bps)?;
            }
        }
        if let Some(delay) = &self.delay_ns {
            let field = format!("{at}.delay_ns.points");
            times(&field, delay.points.iter().map(|p| p.0))?;
            for (i, &(_, ns)) in delay.points.iter().enumerate() {
                within_clock(&format!("{field}.{i}"), ns)?;
            }
        }
        if !self.error.is_empty() {
            times(&format!("{at}.error"), self.error.iter().map(|e| e.0))?;
            for (i, (_, model)) in self.error.iter().enumerate() {
                model.validate(&format!("{at}.error.{i}"))?;
            }
        }
        if !self.up.is_empty() {
            times(&format!("{at}.up"), self.up.iter().map(|u| u.0))?;
        }
        if let Some(trace) = &self.trace {
            let field = format!("{at}.trace");
            if self.rate_bps.is_some() || !self.up.is_empty() {
                return Err(PlanError::field(
                    field,
                    "a delivery trace is the line's rate and state; give no rate_bps or up beside it",
                ));
            }
            positive(
                &format!("{field}.bytes_per_opportunity"),
                trace.bytes_per_opportunity,
            )?;
            let opportunities = &trace.opportunities_ns;
            let sorted = opportunities.windows(2).all(|w| w[0] <= w[1]);
            match opportunities.last() {
                Some(&period) if sorted && period > 0 => within_clock(&field, period)?,
                _ => {
                    return Err(PlanError::field(
                        format!("{field}.opportunities_ns"),
                        "at least one opportunity, in time order, the last after 0",
                    ))
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(plan: SchedulePlan) -> String {
        plan.validate("links.0.forward.schedule")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn tables_start_at_zero_and_go_forward_in_time() {
        let late = SchedulePlan {
            up: vec![(5, true)],
            ..Default::default()
        };
        assert_eq!(
            error(late),
            "links.0.forward.schedule.up.0: the first entry must be at time 0"
        );
        let backwards = SchedulePlan {
            delay_ns: Some(SeriesPlan {
                linear: false,
                points: vec![(0, 1), (10, 1), (9, 1)],
            }),
            ..Default::default()
        };
        assert_eq!(
            error(backwards),
            "links.0.forward.schedule.delay_ns.points.2: 9 ns comes before the previous entry's 10 ns"
        );
        let zero_rate = SchedulePlan {
            rate_bps: Some(SeriesPlan {
                linear: true,
                points: vec![(0, 1), (10, 0)],
            }),
            ..Default::default()
        };
        assert!(error(zero_rate).starts_with("links.0.forward.schedule.rate_bps.points.1:"));
    }

    #[test]
    fn a_trace_is_the_rate_and_needs_opportunities() {
        let trace = |opportunities_ns: Vec<u64>| DeliveryTracePlan {
            opportunities_ns,
            bytes_per_opportunity: 1500,
        };
        let with_rate = SchedulePlan {
            rate_bps: Some(SeriesPlan {
                linear: false,
                points: vec![(0, 1)],
            }),
            trace: Some(trace(vec![1])),
            ..Default::default()
        };
        assert!(error(with_rate).contains("give no rate_bps or up beside it"));
        for bad in [vec![], vec![0], vec![2, 1]] {
            let plan = SchedulePlan {
                trace: Some(trace(bad)),
                ..Default::default()
            };
            assert!(error(plan).starts_with("links.0.forward.schedule.trace.opportunities_ns"));
        }
        let good = SchedulePlan {
            trace: Some(trace(vec![0, 1, 1])),
            ..Default::default()
        };
        assert!(good.validate("x").is_ok());
    }
}
