//! The plan's ABR parts (docs/models/abr.md): the source parameters every ABR VC uses, and
//! the feedback scheme of a switch's output ports. Rates are cells/s, times ns.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Plan;
use crate::atm::abr::{
    BinaryFeedback, BinarySwitch, EricaParams, EricaPlus, EricaPort, Feedback, SourceParams,
};
use crate::error::PlanError;

/// The ABR source parameters of every VC (TM 4.0 §5.10.2). With it, each connection's
/// VCs over ATM are ABR: their cells leave at ACR and carry RM cells.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AbrPlan {
    /// Peak cell rate; None: the cell rate of the VC's first link.
    #[serde(deserialize_with = "super::written")]
    pub pcr_cells_s: Option<f64>,
    pub mcr_cells_s: f64,
    /// Initial cell rate; None: PCR.
    #[serde(deserialize_with = "super::written")]
    pub icr_cells_s: Option<f64>,
    pub tcr_cells_s: f64,
    pub rif: f64,
    pub rdf: f64,
    pub cdf: f64,
    pub nrm: u32,
    pub mrm: u32,
    pub trm_ns: u64,
    pub adtf_ns: u64,
    pub tbe_cells: u64,
    /// Fixed round-trip time signalled at setup; 0: not signalled.
    pub frtt_ns: u64,
}

impl AbrPlan {
    /// The source parameters of a VC whose first link carries `line_cells_s` cells/s.
    pub fn source(&self, line_cells_s: f64) -> SourceParams {
        let pcr = self.pcr_cells_s.unwrap_or(line_cells_s);
        SourceParams {
            pcr,
            mcr: self.mcr_cells_s,
            icr: self.icr_cells_s.unwrap_or(pcr),
            tcr: self.tcr_cells_s,
            rif: self.rif,
            rdf: self.rdf,
            cdf: self.cdf,
            nrm: self.nrm,
            mrm: self.mrm,
            trm: self.trm_ns,
            adtf: self.adtf_ns,
            tbe: self.tbe_cells,
            frtt: self.frtt_ns,
        }
    }

    /// Checks the parameters as a VC on a line of `line_cells_s` would use them.
    pub fn validate(&self, line_cells_s: f64) -> Result<(), PlanError> {
        self.source(line_cells_s)
            .validate()
            .map_err(|(name, message)| {
                let field = match name {
                    "pcr" | "mcr" | "icr" | "tcr" => format!("abr.{name}_cells_s"),
                    "trm" | "adtf" | "frtt" => format!("abr.{name}_ns"),
                    "tbe" => "abr.tbe_cells".to_string(),
                    other => format!("abr.{other}"),
                };
                PlanError::field(field, message)
            })
    }
}

/// How a switch's output ports steer ABR sources.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum FeedbackPlan {
    /// None: the port only queues and discards (UBR).
    None,
    /// Binary feedback above a queue threshold, with hysteresis.
    Efci {
        /// `efci`: the EFCI bit of data cells; `relative_rate`: CI in RM cells.
        mark: MarkPlan,
        q_hi_cells: u32,
        q_lo_cells: u32,
        /// Relative rate only: NI in RM cells above this queue.
        #[serde(deserialize_with = "super::written")]
        q_ni_cells: Option<u32>,
    },
    /// Explicit rate by ERICA (or ERICA+ with `plus`).
    Erica {
        target_utilization: f64,
        delta: f64,
        interval_ns: u64,
        #[serde(deserialize_with = "super::written")]
        interval_cells: Option<u64>,
        #[serde(deserialize_with = "super::written")]
        plus: Option<EricaPlusPlan>,
        /// Whom FairShare divides the target among.
        fair_share: FairSharePlan,
        /// VCShare from each VC's rate measured at the port, not its RM cells' CCR.
        measure_ccr: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FairSharePlan {
    /// The VCs that sent a cell in the averaging interval (Jain et al.).
    Active,
    /// The VCs set up through the port (YATS's default).
    Established,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarkPlan {
    Efci,
    RelativeRate,
}

impl MarkPlan {
    fn mode(self) -> BinaryFeedback {
        match self {
            MarkPlan::Efci => BinaryFeedback::Efci,
            MarkPlan::RelativeRate => BinaryFeedback::RelativeRate,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EricaPlusPlan {
    pub t0_ns: u64,
    pub qdlf: f64,
    pub a: f64,
    pub b: f64,
}

impl FeedbackPlan {
    pub fn is_none(&self) -> bool {
        matches!(self, FeedbackPlan::None)
    }

    /// ERICA's parameters for a port of `cells_s` cells/s that `vcs` VCs are set up through.
    fn erica(&self, cells_s: f64, vcs: usize) -> Option<EricaParams> {
        let FeedbackPlan::Erica {
            target_utilization,
            delta,
            interval_ns,
            interval_cells,
            plus,
            fair_share,
            measure_ccr,
        } = *self
        else {
            return None;
        };
        Some(EricaParams {
            link_cell_rate: cells_s,
            target_utilization,
            delta,
            interval: interval_ns,
            interval_cells,
            plus: plus.map(|p| EricaPlus {
                t0: p.t0_ns,
                qdlf: p.qdlf,
                a: p.a,
                b: p.b,
            }),
            established_vcs: (fair_share == FairSharePlan::Established).then_some(vcs),
            measure_ccr,
        })
    }

    /// The state machine for one output port of `cells_s` cells/s that `vcs` VCs are set
    /// up through; None for no feedback. The plan must have passed [`Self::validate`].
    pub fn port(&self, cells_s: f64, vcs: usize) -> Option<Feedback> {
        match *self {
            FeedbackPlan::None => None,
            FeedbackPlan::Efci {
                mark,
                q_hi_cells,
                q_lo_cells,
                q_ni_cells,
            } => {
                let sw = BinarySwitch::new(mark.mode(), q_hi_cells, q_lo_cells)
                    .expect("validated: q_lo_cells <= q_hi_cells");
                Some(Feedback::Binary(match q_ni_cells {
                    Some(q) => sw.with_no_increase_above(q),
                    None => sw,
                }))
            }
            FeedbackPlan::Erica { .. } => {
                let params = self.erica(cells_s, vcs).expect("an ERICA plan");
                Some(Feedback::Erica(Box::new(EricaPort::new(params, 0))))
            }
        }
    }

    /// Checks the scheme's parameters; `at` is the field path of this plan, e.g.
    /// `routers.0.switch.feedback`.
    pub fn validate(&self, at: &str) -> Result<(), PlanError> {
        match *self {
            FeedbackPlan::None => Ok(()),
            FeedbackPlan::Efci {
                mark,
                q_hi_cells,
                q_lo_cells,
                q_ni_cells,
            } => {
                BinarySwitch::new(mark.mode(), q_hi_cells, q_lo_cells).map_err(
                    |(name, message)| PlanError::field(format!("{at}.{name}_cells"), message),
                )?;
                if q_ni_cells.is_some() && mark != MarkPlan::RelativeRate {
                    return Err(PlanError::field(
                        format!("{at}.q_ni_cells"),
                        "NI is set in RM cells: only with mark = \"relative_rate\"",
                    ));
                }
                Ok(())
            }
            FeedbackPlan::Erica { .. } => {
                let params = self.erica(1.0, 1).expect("an ERICA plan");
                params.validate().map_err(|(name, message)| {
                    let field = match name {
                        "interval" => "interval_ns".to_string(),
                        "t0" => "plus.t0_ns".to_string(),
                        "qdlf" | "a" => format!("plus.{name}"),
                        other => other.to_string(),
                    };
                    PlanError::field(format!("{at}.{field}"), message)
                })
            }
        }
    }
}

impl Plan {
    /// The switches' feedback and the ABR source parameters fit together: a switch with
    /// feedback needs ABR sources, the parameters must suit the ATM links, and an ABR
    /// connection keeps to one run of ATM links, whose two ends are its end systems.
    pub(super) fn validate_abr(&self) -> Result<(), PlanError> {
        let feedback = |node: usize| {
            node.checked_sub(self.hosts.len())
                .and_then(|r| self.routers.get(r))
                .and_then(|r| r.switch.as_ref())
                .is_some_and(|s| !s.feedback.is_none())
        };
        let nodes = self.node_count();
        let Some(first) = (0..nodes).find(|&n| feedback(n)) else {
            return Ok(());
        };
        let Some(abr) = &self.abr else {
            return Err(PlanError::field(
                "abr",
                format!(
                    "routers.{}.switch gives ABR feedback, so the plan needs the ABR source \
                     parameters",
                    first - self.hosts.len()
                ),
            ));
        };
        let cells_s = |ch: &super::ChannelPlan| {
            ch.atm
                .map(|a| ch.rate_bps as f64 / (8.0 * f64::from(a.slot_octets)))
        };
        let slowest = self
            .links
            .iter()
            .flat_map(|l| [cells_s(&l.forward), cells_s(&l.reverse)])
            .flatten()
            .fold(f64::INFINITY, f64::min);
        abr.validate(slowest)?;
        let network = self.network();
        let link_nodes = self.link_nodes();
        for (f, flow) in self.flows.iter().enumerate() {
            let Some(route) = network.route(flow.src, flow.dst) else {
                continue;
            };
            let atm: Vec<bool> = route
                .iter()
                .map(|&ch| self.links[ch / 2].forward.atm.is_some())
                .collect();
            let runs = atm.windows(2).filter(|w| !w[0] && w[1]).count() + usize::from(atm[0]);
            // The node each channel reaches.
            let reaches = |ch: usize| link_nodes[ch / 2][1 - ch % 2];
            if runs > 1 && route.iter().any(|&ch| feedback(reaches(ch))) {
                return Err(PlanError::field(
                    format!("flows.{f}"),
                    "crosses a switch with ABR feedback but leaves ATM and enters it again; an \
                     ABR connection needs one run of ATM links between its end systems",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
impl AbrPlan {
    /// TM 4.0's defaults, PCR and ICR left to the line rate.
    pub fn tm4_defaults() -> Self {
        let p = SourceParams::tm4_defaults(1.0);
        AbrPlan {
            pcr_cells_s: None,
            mcr_cells_s: p.mcr,
            icr_cells_s: None,
            tcr_cells_s: p.tcr,
            rif: p.rif,
            rdf: p.rdf,
            cdf: p.cdf,
            nrm: p.nrm,
            mrm: p.mrm,
            trm_ns: p.trm,
            adtf_ns: p.adtf,
            tbe_cells: p.tbe,
            frtt_ns: p.frtt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abr() -> AbrPlan {
        AbrPlan::tm4_defaults()
    }

    #[test]
    fn pcr_and_icr_default_to_the_line_rate() {
        let p = abr().source(353_773.6);
        assert_eq!((p.pcr, p.icr), (353_773.6, 353_773.6));
        let mut plan = abr();
        plan.icr_cells_s = Some(1000.0);
        assert_eq!(plan.source(5000.0).icr, 1000.0);
    }

    #[test]
    fn errors_name_the_plan_field() {
        let mut plan = abr();
        plan.rif = 2.0;
        assert!(plan
            .validate(1e5)
            .unwrap_err()
            .to_string()
            .starts_with("abr.rif:"));
        let mut plan = abr();
        plan.icr_cells_s = Some(1e9);
        assert!(plan
            .validate(1e5)
            .unwrap_err()
            .to_string()
            .starts_with("abr.icr_cells_s:"));
        let erica: FeedbackPlan = serde_json::from_str(
            r#"{"kind": "erica", "target_utilization": 0.9, "delta": 0.1, "interval_ns": 0,
                "interval_cells": null, "plus": null, "fair_share": "active", "measure_ccr": false}"#,
        )
        .unwrap();
        let err = erica.validate("routers.0.switch.feedback").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("routers.0.switch.feedback.interval_ns:"));
        let efci: FeedbackPlan = serde_json::from_str(
            r#"{"kind": "efci", "mark": "efci", "q_hi_cells": 10, "q_lo_cells": 20, "q_ni_cells": null}"#,
        )
        .unwrap();
        assert!(efci
            .validate("f")
            .unwrap_err()
            .to_string()
            .starts_with("f.q_lo_cells:"));
    }

    #[test]
    fn unknown_fields_and_kinds_are_refused() {
        assert!(serde_json::from_str::<FeedbackPlan>(r#"{"kind": "phantom"}"#).is_err());
        assert!(serde_json::from_str::<FeedbackPlan>(
            r#"{"kind": "efci", "mark": "efci", "q_hi_cells": 1, "q_lo_cells": 1, "q_ni_cells": null, "x": 1}"#
        )
        .is_err());
    }
}
