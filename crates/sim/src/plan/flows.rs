//! The plan's flows and the nodes they run between: each link names its two nodes, hosts
//! first and then routers, and each flow its two hosts.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{AppKind, AppPlan, Plan, Transport};
use crate::error::PlanError;
use crate::topology::Network;

/// A store-and-forward node.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouterPlan {
    pub name: String,
    /// An ATM switch: cells cross it one by one into per-output-port cell buffers.
    #[serde(deserialize_with = "super::written")]
    pub switch: Option<super::SwitchPlan>,
}

/// One TCP connection: the host that opens it (`src`, the client), the host it connects to
/// (`dst`), and the application running over it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowPlan {
    pub src: usize,
    pub dst: usize,
    pub app: AppPlan,
    /// When the client opens the connection.
    pub start_ns: u64,
    /// The connection opens at a time drawn uniformly from [start, start + this), from
    /// the random stream `flows.<k>.start_jitter`, so that sources which would start
    /// together are desynchronised and repetitions with different seeds differ.
    pub start_jitter_ns: u64,
    /// Open only once this earlier flow's receiver holds its whole file or message, as a
    /// store-and-forward server does before passing a message on.
    #[serde(deserialize_with = "super::written")]
    pub after: Option<usize>,
}

impl Plan {
    /// Hosts, then routers.
    pub fn node_count(&self) -> usize {
        self.hosts.len() + self.routers.len()
    }

    /// Each link's two nodes; the forward direction leaves the first.
    pub fn link_nodes(&self) -> Vec<[usize; 2]> {
        self.links.iter().map(|l| l.nodes).collect()
    }

    /// Each node's name: the hosts', then the routers'.
    pub fn node_names(&self) -> Vec<String> {
        let hosts = self.hosts.iter().map(|h| h.name.clone());
        hosts
            .chain(self.routers.iter().map(|r| r.name.clone()))
            .collect()
    }

    pub fn network(&self) -> Network {
        Network::new(self.hosts.len(), self.node_count(), self.link_nodes())
    }

    pub(super) fn validate_flows(&self) -> Result<(), PlanError> {
        if self.links.is_empty() {
            return Err(PlanError::field("links", "at least one link is required"));
        }
        if self.hosts.len() < 2 {
            return Err(PlanError::field(
                "hosts",
                format!("at least 2 hosts, got {}", self.hosts.len()),
            ));
        }
        if self.flows.is_empty() {
            return Err(PlanError::field("flows", "at least one flow is required"));
        }
        let nodes = self.node_count();
        for (i, link) in self.links.iter().enumerate() {
            match link.nodes {
                [a, b] if a >= nodes || b >= nodes => {
                    return Err(PlanError::field(
                        format!("links.{i}.nodes"),
                        format!("node ids go up to {} (hosts, then routers)", nodes - 1),
                    ))
                }
                [a, b] if a == b => {
                    return Err(PlanError::field(
                        format!("links.{i}.nodes"),
                        "a link joins two different nodes",
                    ))
                }
                _ => {}
            }
        }
        let network = self.network();
        let hosts = self.hosts.len();
        for (i, flow) in self.flows.iter().enumerate() {
            let at = format!("flows.{i}");
            for (name, host) in [("src", flow.src), ("dst", flow.dst)] {
                if host >= hosts {
                    return Err(PlanError::field(
                        format!("{at}.{name}"),
                        format!("flows run between hosts, numbered 0 to {}", hosts - 1),
                    ));
                }
            }
            if flow.src == flow.dst {
                return Err(PlanError::field(
                    format!("{at}.dst"),
                    "a flow joins two different hosts",
                ));
            }
            flow.app.validate(&format!("{at}.app"))?;
            if flow.app.kind == AppKind::Media {
                let streams = &flow.app.streams;
                let shared = flow.app.shared_connection
                    && streams.iter().all(|s| s.transport == Transport::Tcp);
                if streams.len() != 1 && !shared {
                    return Err(PlanError::field(
                        format!("{at}.app.streams"),
                        "a flow carries one media stream, or TCP streams that share its \
                         connection, from src to dst; give each other stream its own flow",
                    ));
                }
            }
            for (j, stream) in flow.app.streams.iter().enumerate() {
                let earlier = self.flows[..i].iter().flat_map(|f| &f.app.streams);
                if earlier.map(|s| &s.name).any(|name| *name == stream.name) {
                    return Err(PlanError::field(
                        format!("{at}.app.streams.{j}.name"),
                        format!("stream name {:?} is used by an earlier flow", stream.name),
                    ));
                }
            }
            if flow.after.is_some() && flow.start_jitter_ns > 0 {
                return Err(PlanError::field(
                    format!("{at}.start_jitter_ns"),
                    "a flow that opens `after` another has no start time to jitter",
                ));
            }
            if let Some(k) = flow.after {
                let sized = self.flows[..i]
                    .get(k)
                    .is_some_and(|f| matches!(f.app.kind, AppKind::File | AppKind::Message));
                if !sized {
                    return Err(PlanError::field(
                        format!("{at}.after"),
                        "must name an earlier file or message flow, which completes",
                    ));
                }
            }
            if network.route(flow.src, flow.dst).is_none() {
                return Err(PlanError::field(
                    at,
                    format!(
                        "no path from host {} to host {} through routers",
                        flow.src, flow.dst
                    ),
                ));
            }
        }
        Ok(())
    }
}
