//! Active queue management of a link direction (docs/models/aqm.md): which discipline
//! replaces drop-tail in front of the serializer, with its parameters resolved to numbers.
//! A channel without one keeps its drop-tail queue.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{positive, probability, within_clock};
use crate::error::PlanError;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum AqmPlan {
    /// Random Early Detection (Floyd & Jacobson 1993; RFC 2309). Thresholds count in the
    /// unit of the queue's limit (packets or IP bytes).
    Red {
        min_th: u64,
        max_th: u64,
        max_p: f64,
        w_q: f64,
        /// Floyd's gentle variant: the probability rises from max_p to 1 between max_th
        /// and 2·max_th instead of jumping to 1 at max_th.
        gentle: bool,
        /// IP bytes of the typical packet whose transmission time counts the idle periods.
        mean_packet_bytes: u64,
        ecn: bool,
    },
    /// CoDel (RFC 8289).
    Codel {
        target_ns: u64,
        interval_ns: u64,
        ecn: bool,
    },
    /// FQ-CoDel (RFC 8290): CoDel per flow queue, deficit round robin between them.
    FqCodel {
        target_ns: u64,
        interval_ns: u64,
        flows: u32,
        quantum: u32,
        ecn: bool,
    },
    /// PIE (RFC 8033).
    Pie {
        target_ns: u64,
        t_update_ns: u64,
        alpha: f64,
        beta: f64,
        max_burst_ns: u64,
        ecn: bool,
    },
}

/// The most flow queues FQ-CoDel may have (Linux's limit, 65536).
pub const MAX_FLOWS: u32 = 65_536;

impl AqmPlan {
    pub(super) fn validate(&self, at: &str) -> Result<(), PlanError> {
        let field = |name: &str| format!("{at}.{name}");
        let time = |name: &str, ns: u64| -> Result<(), PlanError> {
            positive(&field(name), ns)?;
            within_clock(&field(name), ns)
        };
        match *self {
            AqmPlan::Red {
                min_th,
                max_th,
                max_p,
                w_q,
                mean_packet_bytes,
                ..
            } => {
                if min_th >= max_th {
                    return Err(PlanError::field(
                        field("max_th"),
                        format!("{max_th} must be greater than min_th ({min_th})"),
                    ));
                }
                probability(&field("max_p"), max_p)?;
                if !(w_q > 0.0 && w_q <= 1.0) {
                    return Err(PlanError::field(
                        field("w_q"),
                        format!("{w_q}; accepted: 0 < w_q <= 1"),
                    ));
                }
                positive(&field("mean_packet_bytes"), mean_packet_bytes)
            }
            AqmPlan::Codel {
                target_ns,
                interval_ns,
                ..
            } => {
                time("target_ns", target_ns)?;
                time("interval_ns", interval_ns)
            }
            AqmPlan::FqCodel {
                target_ns,
                interval_ns,
                flows,
                quantum,
                ..
            } => {
                time("target_ns", target_ns)?;
                time("interval_ns", interval_ns)?;
                if !(1..=MAX_FLOWS).contains(&flows) {
                    return Err(PlanError::field(
                        field("flows"),
                        format!("{flows}; accepted: 1..={MAX_FLOWS}"),
                    ));
                }
                positive(&field("quantum"), u64::from(quantum))
            }
            AqmPlan::Pie {
                target_ns,
                t_update_ns,
                alpha,
                beta,
                max_burst_ns,
                ..
            } => {
                time("target_ns", target_ns)?;
                time("t_update_ns", t_update_ns)?;
                within_clock(&field("max_burst_ns"), max_burst_ns)?;
                for (name, v) in [("alpha", alpha), ("beta", beta)] {
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(PlanError::field(
                            field(name),
                            format!("{v}; accepted: a finite number >= 0"),
                        ));
                    }
                }
                Ok(())
            }
        }
    }
}
