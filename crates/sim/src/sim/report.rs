//! The result of a finished run: summary, per-flow, per-host and per-link rows.

use super::{Carrier, Simulation};
use crate::atm::AtmNet;
use crate::engine::Nanos;
use crate::flow::Flow;
use crate::metrics::{jain_index, LatencySummary, LimitClock, QueueSeries};
use crate::result::{FlowResult, HostResult, LinkResult, RunResult, SegmentResult, Summary};

fn rate_bps(bytes: u64, span: Nanos) -> f64 {
    if span > 0 {
        bytes as f64 * 8.0 / Simulation::seconds(span)
    } else {
        0.0
    }
}

impl Simulation {
    /// The row of a flow carried by `connections` (one, or a split flow's segments in
    /// order): goodput at the last one's receiver, from the first one's opening to the
    /// last one's completion; the first one's sender's state; counts of them all.
    fn flow_row(&self, connections: &[Flow], stop: Nanos) -> FlowResult {
        let (first, last) = (&connections[0], &connections[connections.len() - 1]);
        let start = first.started_at.unwrap_or(stop);
        let end = last.done_at.unwrap_or(stop);
        // A UDP media flow has no TCP state to report.
        let tx = first.tcp();
        let seconds = |t: Option<Nanos>| t.map_or(0.0, Simulation::seconds);
        FlowResult {
            flow: first.flow,
            src: self.plan.endpoint_name(first.hosts[0]).to_owned(),
            dst: self.plan.endpoint_name(last.hosts[1]).to_owned(),
            goodput_bps: rate_bps(last.delivered, end.saturating_sub(start)),
            bytes_delivered: last.delivered,
            retransmits: connections
                .iter()
                .flat_map(Flow::senders)
                .map(|t| t.stats.retransmits)
                .sum(),
            timeouts: connections
                .iter()
                .flat_map(Flow::senders)
                .map(|t| t.stats.timeouts)
                .sum(),
            persist_probes: connections
                .iter()
                .flat_map(Flow::senders)
                .map(|t| t.stats.persist_probes)
                .sum(),
            srtt_s: seconds(tx.and_then(|t| t.rto().srtt())),
            min_rtt_s: seconds(tx.and_then(|t| t.rto().min_rtt())),
            final_cwnd_bytes: tx.map_or(0, |t| t.cwnd()),
            window_updates: connections
                .iter()
                .flat_map(Flow::receivers)
                .map(|r| r.stats.window_updates)
                .sum(),
            completed_s: last.done_at.map(Simulation::seconds),
        }
    }

    pub(super) fn finish(mut self, stop: Nanos) -> RunResult {
        // Each scenario flow's connections: one, or the segments a PEP split it into.
        let flows_connections: Vec<&[Flow]> =
            self.flows.chunk_by(|a, b| a.flow == b.flow).collect();
        let flows: Vec<FlowResult> = flows_connections
            .iter()
            .map(|connections| self.flow_row(connections, stop))
            .collect();
        let segments: Vec<SegmentResult> = flows_connections
            .iter()
            .filter(|connections| connections.len() > 1)
            .flat_map(|connections| connections.iter())
            .map(|c| SegmentResult {
                segment: c.segment,
                relay_peak_bytes: c.feeds.map(|r| self.relays[r].peak()),
                connection: self.flow_row(std::slice::from_ref(c), stop),
            })
            .collect();
        let delivered: u64 = flows.iter().map(|f| f.bytes_delivered).sum();
        let goodput_bps = rate_bps(delivered, stop);
        // Each host's flows' goodput, summed in flow order: one pass, not one per host. (A
        // flow's ends are hosts; the nodes past them, PEPs, have no row here.)
        let mut own = vec![0.0; self.plan.hosts.len()];
        for (c, row) in flows_connections.iter().zip(&flows) {
            let (src, dst) = (c[0].hosts[0], c[c.len() - 1].hosts[1]);
            let mut add = |end: usize| {
                if let Some(sum) = own.get_mut(end) {
                    *sum += row.goodput_bps;
                }
            };
            add(src);
            if dst != src {
                add(dst);
            }
        }
        let hosts: Vec<HostResult> = self
            .cpus
            .iter()
            .take(self.plan.hosts.len())
            .enumerate()
            .map(|(h, cpu)| {
                let utilisation = cpu.as_ref().map_or(0.0, |c| {
                    Simulation::seconds(c.busy_until(stop)) / Simulation::seconds(stop.max(1))
                });
                let own = own[h];
                let stats = cpu.as_ref().map(|c| c.stats).unwrap_or_default();
                HostResult {
                    host: self.plan.hosts[h].name.clone(),
                    cpu_utilisation: utilisation,
                    goodput_per_cpu_bps: (utilisation > 0.0).then(|| own / utilisation),
                    packets: stats.packets,
                    calls: stats.calls,
                    ring_drops: stats.ring_drops,
                }
            })
            .collect();
        let cpu_utilisation = hosts.iter().map(|h| h.cpu_utilisation).fold(0.0, f64::max);
        let mut limits = LimitClock::default();
        for flow in self.flows.iter().filter(|f| f.segment == 0) {
            limits.absorb(&flow.limits);
        }
        let latencies: Vec<Nanos> = self
            .flows
            .iter()
            .filter_map(|f| f.rr.as_ref())
            .flat_map(|t| t.latencies.iter().copied())
            .collect();
        let has_rr = self.flows.iter().any(|f| f.rr.is_some());
        let sum = |g: fn(&crate::tcp::SenderStats) -> u64| -> u64 {
            self.flows
                .iter()
                .flat_map(|f| f.senders())
                .map(|t| g(&t.stats))
                .sum()
        };
        let links = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, ch)| {
                if let Some(row) = self.atm.as_ref().and_then(|a| a.link_row(i, stop)) {
                    return row;
                }
                // A wlan direction's frames went over its medium, not the channel.
                let wlan = self.wlan.stats(i);
                let stats = wlan.map_or(ch.stats, |w| w.channel);
                LinkResult {
                    link: i / 2,
                    direction: if i % 2 == 0 { "forward" } else { "reverse" },
                    packets: stats.packets,
                    bytes: stats.wire_bytes,
                    drops_queue: stats.drops_queue,
                    drops_error: stats.drops_error,
                    max_queue_bytes: stats.max_queue_bytes,
                    utilisation: if stop > 0 {
                        stats.busy_ns.min(stop) as f64 / stop as f64
                    } else {
                        0.0
                    },
                    retries: wlan.map(|w| w.retries),
                    collisions: wlan.map(|w| w.collisions),
                }
            })
            .collect();
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        let name = |node: usize| self.plan.endpoint_name(node).to_owned();
        let streams = self
            .flows
            .iter()
            .flat_map(|flow| {
                flow.media
                    .iter()
                    .map(|s| s.result(flow.flow, name(flow.hosts[0]), name(flow.hosts[1])))
            })
            .collect();
        let (atm_ports, atm_queue) = self
            .atm
            .as_ref()
            .map(|a| a.ports(stop, &self.plan))
            .unwrap_or_default();
        let abr_acr = self.atm.as_mut().map(AtmNet::take_acr).unwrap_or_default();
        // The queues of the directions with a serializer of their own (wlan and ATM
        // directions queue elsewhere).
        let mut queue = QueueSeries::default();
        for (i, ch) in self.channels.iter_mut().enumerate() {
            if matches!(self.carriers[i], Carrier::Wire) {
                let direction = if i % 2 == 0 { "forward" } else { "reverse" };
                ch.queue_series(stop, i / 2, direction, &mut queue);
            }
        }
        RunResult {
            summary: Summary {
                goodput_bps,
                elapsed_s: Simulation::seconds(stop),
                bytes_delivered: delivered,
                bytes_written: flows_connections.iter().map(|c| c[0].written()).sum(),
                segments_sent: sum(|s| s.segments_sent),
                retransmits: sum(|s| s.retransmits),
                fast_retransmits: sum(|s| s.fast_retransmits),
                timeouts: sum(|s| s.timeouts),
                persist_probes: sum(|s| s.persist_probes),
                completed: self
                    .flows
                    .iter()
                    .all(|f| f.bytes.is_none() || f.done_at.is_some()),
                events: self.events.popped(),
                limited_by: limits.shares(),
                fairness: jain_index(&goodputs),
                cpu_utilisation,
                goodput_per_cpu_bps: (cpu_utilisation > 0.0).then(|| goodput_bps / cpu_utilisation),
                window_updates: flows.iter().map(|f| f.window_updates).sum(),
                ring_drops: hosts.iter().map(|h| h.ring_drops).sum(),
                atm: self.atm.as_ref().map(|a| a.summary(goodput_bps)),
                wlan: self.wlan.summary(),
                rr: if has_rr {
                    LatencySummary::of(latencies, stop)
                } else {
                    None
                },
            },
            flows,
            segments,
            hosts,
            links,
            streams,
            series: self.series.finish(stop),
            trace: self.trace,
            atm_ports,
            atm_queue,
            abr_acr,
            queue,
            captures: self.taps.finish(),
        }
    }
}
