//! The plan's flows and the nodes they run between. The path form has one flow from the
//! first host to the second (two for a message sent both ways); the topology form lists
//! its flows and names each link's nodes, hosts first and then routers.

use serde::Deserialize;

use super::{AppKind, AppPlan, Direction, Plan, Transport};
use crate::error::PlanError;
use crate::topology::Network;

/// A store-and-forward node of the topology form.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterPlan {
    pub name: String,
    /// An ATM switch: cells cross it one by one into per-output-port cell buffers.
    #[serde(default)]
    pub switch: Option<super::SwitchPlan>,
}

/// One TCP connection: the host that opens it (`src`, the client), the host it connects to
/// (`dst`), and the application running over it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPlan {
    pub src: usize,
    pub dst: usize,
    pub app: AppPlan,
    /// When the client opens the connection.
    #[serde(default)]
    pub start_ns: u64,
    /// The connection opens at a time drawn uniformly from [start, start + this), from
    /// the random stream `flows.<k>.start_jitter`, so that sources which would start
    /// together are desynchronised and repetitions with different seeds differ.
    #[serde(default)]
    pub start_jitter_ns: u64,
    /// Open only once this earlier flow's receiver holds its whole file or message, as a
    /// store-and-forward server does before passing a message on.
    #[serde(default)]
    pub after: Option<usize>,
}

/// The path form's media flows: each stream its own, except that TCP streams of one
/// direction share one when the app says so (in the order their first stream is listed).
fn media_flows(app: &AppPlan) -> Vec<FlowPlan> {
    let mut flows: Vec<FlowPlan> = Vec::new();
    for stream in &app.streams {
        let (src, dst) = match stream.direction {
            Direction::Downstream => (1, 0),
            _ => (0, 1),
        };
        let shared = app.shared_connection && stream.transport == Transport::Tcp;
        let joined = flows
            .iter_mut()
            .find(|f| shared && f.src == src && f.app.streams[0].transport == Transport::Tcp);
        match joined {
            Some(flow) => flow.app.streams.push(stream.clone()),
            None => flows.push(FlowPlan {
                src,
                dst,
                app: AppPlan {
                    streams: vec![stream.clone()],
                    ..app.clone()
                },
                start_ns: 0,
                start_jitter_ns: 0,
                after: None,
            }),
        }
    }
    flows
}

impl Plan {
    /// Hosts, then routers: in the path form, the routers between consecutive links.
    pub fn node_count(&self) -> usize {
        if self.flows.is_empty() {
            self.links.len() + 1
        } else {
            self.hosts.len() + self.routers.len()
        }
    }

    /// Each link's two nodes; the forward direction leaves the first. In the path form
    /// host 0 is node 0, host 1 is node 1, and the router after link k is node k + 2.
    pub fn link_nodes(&self) -> Vec<[usize; 2]> {
        if !self.flows.is_empty() {
            return self.links.iter().filter_map(|l| l.nodes).collect();
        }
        let n = self.links.len();
        let node = |k: usize| match k {
            0 => 0,
            k if k == n => 1,
            k => k + 1,
        };
        (0..n).map(|i| [node(i), node(i + 1)]).collect()
    }

    /// Each node's name: the hosts', then the routers'. The path form's routers are
    /// named after the link they follow: `after-links.0`.
    pub fn node_names(&self) -> Vec<String> {
        let hosts = self.hosts.iter().map(|h| h.name.clone());
        if self.flows.is_empty() {
            let routers =
                (0..self.links.len().saturating_sub(1)).map(|k| format!("after-links.{k}"));
            hosts.chain(routers).collect()
        } else {
            hosts
                .chain(self.routers.iter().map(|r| r.name.clone()))
                .collect()
        }
    }

    pub fn network(&self) -> Network {
        Network::new(self.hosts.len(), self.node_count(), self.link_nodes())
    }

    /// The flows the simulation runs. The path form's message app becomes one flow per leg,
    /// its media app one flow per stream (a TCP connection or a UDP datagram flow each).
    pub fn resolved_flows(&self) -> Vec<FlowPlan> {
        let Some(app) = self.app.clone().filter(|_| self.flows.is_empty()) else {
            return self.flows.clone();
        };
        if app.kind == AppKind::Media {
            return media_flows(&app);
        }
        let leg = |src, dst, after| FlowPlan {
            src,
            dst,
            app: AppPlan {
                direction: Direction::Upstream,
                ..app.clone()
            },
            start_ns: 0,
            start_jitter_ns: 0,
            after,
        };
        match (app.kind, app.direction) {
            (AppKind::Message, Direction::Downstream) => vec![leg(1, 0, None)],
            (AppKind::Message, Direction::Both) => vec![leg(0, 1, None), leg(1, 0, Some(0))],
            _ => vec![leg(0, 1, None)],
        }
    }

    pub(super) fn validate_flows(&self) -> Result<(), PlanError> {
        if self.links.is_empty() {
            return Err(PlanError::field("links", "at least one link is required"));
        }
        if self.flows.is_empty() {
            return self.validate_path_form();
        }
        if self.app.is_some() {
            return Err(PlanError::field(
                "app",
                "a plan with flows gives each flow its app; leave app out",
            ));
        }
        let nodes = self.node_count();
        for (i, link) in self.links.iter().enumerate() {
            match link.nodes {
                None => {
                    return Err(PlanError::field(
                        format!("links.{i}.nodes"),
                        "a plan with flows names both nodes of every link",
                    ))
                }
                Some([a, b]) if a >= nodes || b >= nodes => {
                    return Err(PlanError::field(
                        format!("links.{i}.nodes"),
                        format!("node ids go up to {} (hosts, then routers)", nodes - 1),
                    ))
                }
                Some([a, b]) if a == b => {
                    return Err(PlanError::field(
                        format!("links.{i}.nodes"),
                        "a link joins two different nodes",
                    ))
                }
                Some(_) => {}
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
            if flow.app.direction != Direction::Upstream {
                return Err(PlanError::field(
                    format!("{at}.app.direction"),
                    "a flow's message goes from src to dst; give each leg its own flow",
                ));
            }
            if flow.app.kind == AppKind::Media
                && (flow.app.streams.len() != 1
                    || flow.app.streams[0].direction != Direction::Upstream)
            {
                return Err(PlanError::field(
                    format!("{at}.app.streams"),
                    "a flow carries one media stream, from src to dst; give each its own flow",
                ));
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

    fn validate_path_form(&self) -> Result<(), PlanError> {
        if self.hosts.len() != 2 {
            return Err(PlanError::field(
                "hosts",
                format!(
                    "a plan without flows has exactly 2 hosts (sender, receiver), got {}",
                    self.hosts.len()
                ),
            ));
        }
        if !self.routers.is_empty() {
            return Err(PlanError::field(
                "routers",
                "a plan without flows places its routers between consecutive links",
            ));
        }
        if let Some(i) = self.links.iter().position(|l| l.nodes.is_some()) {
            return Err(PlanError::field(
                format!("links.{i}.nodes"),
                "only a plan with flows names link nodes",
            ));
        }
        let Some(app) = &self.app else {
            return Err(PlanError::field(
                "app",
                "a plan without flows needs its app",
            ));
        };
        app.validate("app")
    }
}
