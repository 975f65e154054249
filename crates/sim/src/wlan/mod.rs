//! IEEE 802.11b media (docs/models/wlan.md). A wlan link joins an access point (AP) to one
//! station; every wlan link with the same AP (or naming the same medium) is on one shared
//! DCF channel, where the AP and each station contend for the air with TCP data and TCP
//! ACKs alike. The AP is one DCF station with one transmit queue for the frames to all its
//! stations, as a real AP has; each station sends from its own queue.
//!
//! The simulation hands the medium the packets that enter a wlan link's direction and
//! wakes it when it asks to be woken; the medium says which packets reach the far end.

mod dcf;
mod medium;
pub mod phy;

use crate::engine::{Nanos, RngStream};
use crate::flow::Wake;
use crate::net::{ErrorProcess, PacketRef, Packets};
use crate::plan::Plan;
use crate::result::WlanSummary;
use dcf::Dcf;
pub use medium::PathStats;
use medium::{Medium, Path, Station};
use phy::Phy;

pub struct Wlan {
    media: Vec<Medium>,
    wakes: Vec<Wake>,
    /// Per channel of the plan: its medium and path there, if it is a wlan direction.
    paths: Vec<Option<(usize, usize)>>,
    /// Per medium, per path: the plan's channel.
    channels: Vec<Vec<usize>>,
}

/// A packet the medium delivered: it arrives at the end of `channel` at `at`.
pub struct Arrival {
    pub packet: PacketRef,
    pub at: Nanos,
    pub channel: usize,
    /// When the transmission that delivered it started.
    pub sent: Nanos,
}

impl Wlan {
    pub fn new(plan: &Plan) -> Self {
        let media_of = plan.wlan_media();
        let count = media_of.iter().flatten().max().map_or(0, |m| m + 1);
        let mut paths = vec![None; plan.links.len() * 2];
        let mut channels = vec![Vec::new(); count];
        let mut media = Vec::with_capacity(count);
        for (m, medium_channels) in channels.iter_mut().enumerate() {
            let on_it: Vec<usize> = (0..plan.links.len())
                .filter(|&i| media_of[i] == Some(m))
                .collect();
            let first = &plan.links[on_it[0]];
            let w = first.wlan.as_ref().expect("media hold wlan links only");
            let ap = Dcf::new(RngStream::new(plan.seed, &format!("wlan.{m}.ap.backoff")));
            let mut stations = vec![Station::new(ap, w.ap_queue)];
            let mut medium_paths = Vec::new();
            for i in on_it {
                let link = &plan.links[i];
                let ap_end = link.wlan.as_ref().expect("a wlan link").ap_end;
                let rng = RngStream::new(plan.seed, &format!("links.{i}.wlan.backoff"));
                let direction = |ch: usize| match ch % 2 {
                    0 => (&link.forward, "forward"),
                    _ => (&link.reverse, "reverse"),
                };
                // Path 2k goes from the AP to station k + 1, path 2k + 1 back.
                let down = 2 * i + ap_end;
                let station = stations.len();
                // The station sends from the queue of its direction towards the AP.
                let up_queue = direction(down ^ 1).0.queue;
                stations.push(Station::new(Dcf::new(rng), up_queue));
                for (ch, from) in [(down, 0), (down ^ 1, station)] {
                    let (plan_ch, dir) = direction(ch);
                    let errors = RngStream::new(plan.seed, &format!("links.{i}.{dir}.errors"));
                    paths[ch] = Some((m, medium_paths.len()));
                    medium_channels.push(ch);
                    medium_paths.push(Path {
                        from,
                        rate_bps: plan_ch.rate_bps,
                        delay_ns: plan_ch.delay_ns,
                        framing: plan_ch.framing.into(),
                        errors: ErrorProcess::new(plan_ch.error, errors),
                        stats: PathStats::default(),
                    });
                }
            }
            let phy = Phy::new(w.preamble, w.ack_rate_bps);
            media.push(Medium::new(phy, w.retry_limit, stations, medium_paths));
        }
        Self {
            wakes: (0..media.len()).map(|_| Wake::default()).collect(),
            media,
            paths,
            channels,
        }
    }

    pub fn carries(&self, channel: usize) -> bool {
        self.paths[channel].is_some()
    }

    /// A packet enters a wlan direction (one its queue drops goes back to `packets`).
    /// Returns the medium to wake and when, if it needs a wake-up it does not have yet.
    pub fn offer(
        &mut self,
        now: Nanos,
        channel: usize,
        packet: PacketRef,
        packets: &mut Packets,
    ) -> Option<(usize, Nanos)> {
        let (m, path) = self.paths[channel].expect("only wlan channels are offered here");
        self.media[m].offer(now, path, packet, packets);
        self.wake_for(m)
    }

    /// Medium `m`'s wake-up fired at `now`: it does what is due. Returns the packet it
    /// delivered, if any, and when it next needs waking, if it needs a new wake-up; a
    /// frame dropped at the retry limit goes back to `packets`.
    pub fn wake(
        &mut self,
        now: Nanos,
        m: usize,
        packets: &mut Packets,
    ) -> (Option<Arrival>, Option<Nanos>) {
        self.wakes[m].fired(now);
        let arrival = self.media[m].advance(now, packets).map(|d| Arrival {
            packet: d.packet,
            at: d.at,
            channel: self.channels[m][d.path],
            sent: now,
        });
        (arrival, self.wake_for(m).map(|(_, at)| at))
    }

    fn wake_for(&mut self, m: usize) -> Option<(usize, Nanos)> {
        self.wakes[m]
            .needs(self.media[m].deadline())
            .map(|at| (m, at))
    }

    /// The summary of every medium's frames; None when the plan has no wlan link.
    pub fn summary(&self) -> Option<WlanSummary> {
        let paths: Vec<&PathStats> = self
            .media
            .iter()
            .flat_map(|m| m.paths.iter().map(|p| &p.stats))
            .collect();
        (!paths.is_empty()).then(|| WlanSummary {
            frames: paths.iter().map(|p| p.channel.packets).sum(),
            retries: paths.iter().map(|p| p.retries).sum(),
            collisions: paths.iter().map(|p| p.collisions).sum(),
            retry_drops: paths.iter().map(|p| p.channel.drops_error).sum(),
            queue_drops: paths.iter().map(|p| p.channel.drops_queue).sum(),
        })
    }

    /// What a wlan direction carried; None for a channel of another link kind.
    pub fn stats(&self, channel: usize) -> Option<PathStats> {
        let (m, path) = self.paths[channel]?;
        Some(self.media[m].paths[path].stats)
    }
}
