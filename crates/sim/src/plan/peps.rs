//! The plan's split-connection PEPs (docs/models/pep.md): router nodes that terminate the
//! TCP connections of the flows crossing them, each side with its own TCP settings.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{AppKind, Plan, TcpPlan};
use crate::error::PlanError;

/// A Performance Enhancing Proxy at a router node (RFC 3135 §2.4, split connection).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PepPlan {
    pub name: String,
    /// The router node it sits at.
    pub node: usize,
    /// Bytes the relay holds between reading one connection and writing the other.
    pub buffer: u64,
    /// TCP of the connection the PEP accepts from a flow's `src`.
    pub client_side: TcpPlan,
    /// TCP of the connection the PEP opens towards the flow's `dst`.
    pub server_side: TcpPlan,
}

impl Plan {
    /// The PEP at `node`, if one sits there.
    pub fn pep_at(&self, node: usize) -> Option<&PepPlan> {
        self.peps.iter().find(|p| p.node == node)
    }

    /// The name of a node that ends a TCP connection: a host, or a PEP.
    pub fn endpoint_name(&self, node: usize) -> &str {
        match self.hosts.get(node) {
            Some(host) => &host.name,
            None => self.pep_at(node).map_or("", |p| p.name.as_str()),
        }
    }

    pub(super) fn validate_peps(&self) -> Result<(), PlanError> {
        let routers = self.hosts.len()..self.node_count();
        for (i, pep) in self.peps.iter().enumerate() {
            let at = format!("peps.{i}");
            if !routers.contains(&pep.node) {
                return Err(PlanError::field(
                    format!("{at}.node"),
                    format!(
                        "a PEP sits at a router node, {} to {}; {} is not one",
                        routers.start,
                        routers.end.saturating_sub(1),
                        pep.node
                    ),
                ));
            }
            if self.peps[..i].iter().any(|p| p.node == pep.node) {
                return Err(PlanError::field(
                    format!("{at}.node"),
                    format!("node {} already has a PEP", pep.node),
                ));
            }
            super::positive(&format!("{at}.buffer"), pep.buffer)?;
            pep.client_side.validate(&format!("{at}.client_side"))?;
            pep.server_side.validate(&format!("{at}.server_side"))?;
        }
        if self.peps.is_empty() {
            return Ok(());
        }
        let network = self.network();
        let link_nodes = self.link_nodes();
        for (i, flow) in self.flows.iter().enumerate() {
            let route = network.route(flow.src, flow.dst).unwrap_or_default();
            let crosses = route.iter().any(|&c| {
                self.pep_at(crate::topology::reached(&link_nodes, c))
                    .is_some()
            });
            // A request/response flow carries data both ways, and a media flow's messages
            // are timed at its destination's receiver: neither runs through the relay.
            if crosses && matches!(flow.app.kind, AppKind::Rr | AppKind::Media) {
                return Err(PlanError::field(
                    format!("flows.{i}.app.kind"),
                    "a PEP relays one-way transfers (bulk, file, message); this flow crosses one",
                ));
            }
        }
        Ok(())
    }
}
