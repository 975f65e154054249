//! Split-connection Performance Enhancing Proxies (RFC 3135 §2.4; docs/models/pep.md).
//!
//! A flow whose route crosses a PEP becomes one TCP connection per segment of the route:
//! the source's connection ends at the PEP, whose relay application reads it and writes
//! into a second connection from the PEP onwards. Each PEP-side endpoint runs the PEP's
//! TCP settings for that side: `client_side` for the connection it accepts, `server_side`
//! for the one it opens. The PEP opens its connection when the first connection's SYN
//! reaches it, as a transparent PEP answers the SYN itself and connects onwards.

mod relay;

pub use relay::Relay;

use crate::flow::Flow;
use crate::host::Writer;
use crate::plan::{AppPlan, FlowPlan, Plan, TcpPlan};
use crate::topology::{self, reached};

/// The TCP settings of the endpoint at `node`: a host's own, or the PEP's for the side that
/// accepts (`accepting`) or opens the connection.
fn tcp_at(plan: &Plan, node: usize, accepting: bool) -> &TcpPlan {
    match plan.pep_at(node) {
        Some(pep) if accepting => &pep.client_side,
        Some(pep) => &pep.server_side,
        None => &plan.hosts[node].tcp,
    }
}

/// The connections the simulation runs (a flow that crosses no PEP is one), in flow order,
/// with the relays that join consecutive segments of a split flow.
pub fn connections(plan: &Plan) -> (Vec<Flow>, Vec<Relay>) {
    let network = plan.network();
    let link_nodes = plan.link_nodes();
    let mut flows: Vec<Flow> = Vec::new();
    let mut relays = Vec::new();
    // Per scenario flow, the connection that delivers it, which a later flow's `after` waits on.
    let mut delivering = Vec::new();
    for (k, f) in plan.flows.iter().enumerate() {
        let route = network
            .route(f.src, f.dst)
            .expect("validation checks that every flow has a route");
        // The route cut after every channel that reaches a PEP.
        let mut legs = Vec::new();
        let (mut from, mut first) = (f.src, 0);
        for (i, &channel) in route.iter().enumerate() {
            let node = reached(&link_nodes, channel);
            if node == f.dst || plan.pep_at(node).is_some() {
                legs.push((from, node, &route[first..=i]));
                (from, first) = (node, i + 1);
            }
        }
        let last = legs.len() - 1;
        for (segment, &(src, dst, channels)) in legs.iter().enumerate() {
            let fed_by = (segment > 0).then(|| relays.len() - 1);
            let buffer = plan.pep_at(src).map(|p| p.buffer);
            let leg = FlowPlan {
                src,
                dst,
                app: AppPlan {
                    // The relay reads whatever its buffer has room for.
                    read_size: f.app.read_size.filter(|_| segment == last),
                    ..f.app.clone()
                },
                start_ns: f.start_ns,
                start_jitter_ns: f.start_jitter_ns,
                after: f.after.map(|a| delivering[a]),
            };
            let tcp = [tcp_at(plan, src, false), tcp_at(plan, dst, true)];
            let routes = [channels.to_vec(), topology::reverse(channels)];
            let mut flow = Flow::new(k, segment, &leg, tcp, routes, plan.seed);
            if let (Some(r), Some(buffer)) = (fed_by, buffer) {
                // The relay writes what it has read, up to a buffer at a time, with no pause.
                flow.sides[0].writer = Some(Writer::new(buffer, Some(0), 0));
                flow.fed_by = Some(r);
                flow.after = None;
            }
            if segment < last {
                let capacity = plan.pep_at(dst).map_or(0, |p| p.buffer);
                flow.feeds = Some(relays.len());
                relays.push(Relay::new(flows.len(), flows.len() + 1, capacity));
            }
            flows.push(flow);
        }
        delivering.push(flows.len() - 1);
    }
    (flows, relays)
}
