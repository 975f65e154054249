//! The result of a finished run: summary, per-flow, per-host and per-link rows.

use super::Simulation;
use crate::engine::Nanos;
use crate::metrics::{jain_index, LatencySummary, LimitClock};
use crate::result::{FlowResult, HostResult, LinkResult, RunResult, Summary};

fn rate_bps(bytes: u64, span: Nanos) -> f64 {
    if span > 0 {
        bytes as f64 * 8.0 / Simulation::seconds(span)
    } else {
        0.0
    }
}

impl Simulation {
    pub(super) fn finish(self, stop: Nanos) -> RunResult {
        let seconds = |t: Option<Nanos>| t.map_or(0.0, Simulation::seconds);
        let name = |h: usize| self.plan.hosts[h].name.clone();
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(f, flow)| {
                // A flow's goodput counts from when it opened to when it completed.
                let start = flow.started_at.unwrap_or(stop);
                let end = flow.done_at.unwrap_or(stop);
                // A UDP media flow has no TCP state to report.
                let tx = flow.tcp();
                FlowResult {
                    flow: f,
                    src: name(flow.hosts[0]),
                    dst: name(flow.hosts[1]),
                    goodput_bps: rate_bps(flow.delivered, end.saturating_sub(start)),
                    bytes_delivered: flow.delivered,
                    retransmits: flow.senders().map(|t| t.stats.retransmits).sum(),
                    timeouts: flow.senders().map(|t| t.stats.timeouts).sum(),
                    srtt_s: seconds(tx.and_then(|t| t.rto().srtt())),
                    min_rtt_s: seconds(tx.and_then(|t| t.rto().min_rtt())),
                    final_cwnd_bytes: tx.map_or(0, |t| t.cwnd()),
                    window_updates: flow.receivers().map(|r| r.stats.window_updates).sum(),
                    completed_s: flow.done_at.map(Simulation::seconds),
                }
            })
            .collect();
        let delivered: u64 = self.flows.iter().map(|f| f.delivered).sum();
        let goodput_bps = rate_bps(delivered, stop);
        let hosts: Vec<HostResult> = self
            .cpus
            .iter()
            .enumerate()
            .map(|(h, cpu)| {
                let utilisation = cpu.as_ref().map_or(0.0, |c| {
                    Simulation::seconds(c.busy_until(stop)) / Simulation::seconds(stop.max(1))
                });
                let own: f64 = self
                    .flows
                    .iter()
                    .zip(&flows)
                    .filter(|(flow, _)| flow.hosts.contains(&h))
                    .map(|(_, row)| row.goodput_bps)
                    .sum();
                let stats = cpu.as_ref().map(|c| c.stats).unwrap_or_default();
                HostResult {
                    host: name(h),
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
        for flow in &self.flows {
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
        let streams = self
            .flows
            .iter()
            .enumerate()
            .filter_map(|(f, flow)| {
                let stream = flow.media.as_ref()?;
                Some(stream.result(f, name(flow.hosts[0]), name(flow.hosts[1])))
            })
            .collect();
        let (atm_ports, atm_queue) = self
            .atm
            .as_ref()
            .map(|a| a.ports(stop, &self.plan))
            .unwrap_or_default();
        RunResult {
            summary: Summary {
                goodput_bps,
                elapsed_s: Simulation::seconds(stop),
                bytes_delivered: delivered,
                bytes_written: self.flows.iter().map(|f| f.written()).sum(),
                segments_sent: sum(|s| s.segments_sent),
                retransmits: sum(|s| s.retransmits),
                fast_retransmits: sum(|s| s.fast_retransmits),
                timeouts: sum(|s| s.timeouts),
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
                rr: if has_rr {
                    LatencySummary::of(latencies, stop)
                } else {
                    None
                },
            },
            flows,
            hosts,
            links,
            streams,
            series: self.series.finish(stop),
            trace: self.trace,
            atm_ports,
            atm_queue,
            captures: self.taps.finish(),
        }
    }
}
