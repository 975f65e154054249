//! The plan of an IEEE 802.11b link (docs/models/wlan.md): a link whose two directions are
//! not lines of their own but turns on one shared DCF channel, the medium, which the access
//! point and every station associated with it contend for.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{positive, LinkPlan, Plan, QueuePlan};
use crate::error::PlanError;

/// The HR/DSSS data rates (IEEE 802.11b §18.1): DBPSK, DQPSK, CCK 5.5 and 11 Mb/s.
pub const DATA_RATES_BPS: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];
/// The basic rate set, in which control frames (the link-layer ACK) are sent.
pub const BASIC_RATES_BPS: [u64; 2] = [1_000_000, 2_000_000];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Preamble {
    /// 144-bit preamble and 48-bit header at 1 Mb/s: 192 µs.
    Long,
    /// 72-bit preamble at 1 Mb/s and header at 2 Mb/s: 96 µs (802.11b option).
    Short,
}

/// A wlan link joins an access point to one station; links on the same medium share it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WlanPlan {
    /// Which of the link's two nodes is the access point: 0 for the node the forward
    /// direction leaves, 1 for the other.
    pub ap_end: usize,
    /// Links that name the same medium share one channel; without a name, one medium per
    /// access point node.
    #[serde(deserialize_with = "super::written")]
    pub medium: Option<String>,
    /// The rate of the link-layer ACK, capped at the rate of the frame it acknowledges.
    pub ack_rate_bps: u64,
    pub preamble: Preamble,
    /// Transmission attempts of a frame before it is discarded (dot11ShortRetryLimit).
    pub retry_limit: u32,
    /// The access point's one transmit queue, shared by the frames to all its stations.
    pub ap_queue: QueuePlan,
}

/// Settings of the whole medium, which every link on it must give alike.
fn shared(w: &WlanPlan) -> (u64, Preamble, u32, u64, bool) {
    let (limit, packets) = match w.ap_queue {
        QueuePlan::Packets(n) => (n, true),
        QueuePlan::Bytes(n) => (n, false),
    };
    (w.ack_rate_bps, w.preamble, w.retry_limit, limit, packets)
}

impl Plan {
    /// Each wlan link's medium, numbered in order of first appearance, with its access
    /// point's node: links naming one medium share it; unnamed links share their AP's.
    pub fn wlan_media(&self) -> Vec<Option<usize>> {
        let nodes = self.link_nodes();
        let mut keys: BTreeMap<(Option<&str>, usize), usize> = BTreeMap::new();
        self.links
            .iter()
            .zip(&nodes)
            .map(|(link, ends)| {
                let w = link.wlan.as_ref()?;
                let key = match &w.medium {
                    Some(name) => (Some(name.as_str()), 0),
                    None => (None, ends[w.ap_end]),
                };
                let next = keys.len();
                Some(*keys.entry(key).or_insert(next))
            })
            .collect()
    }

    pub(super) fn validate_wlan(&self) -> Result<(), PlanError> {
        for (i, link) in self.links.iter().enumerate() {
            if let Some(w) = &link.wlan {
                w.validate(&format!("links.{i}.wlan"), link)?;
            }
        }
        let nodes = self.link_nodes();
        let media = self.wlan_media();
        // Per medium: the first link on it and its access point node.
        let mut first: BTreeMap<usize, usize> = BTreeMap::new();
        for (i, link) in self.links.iter().enumerate() {
            let (Some(w), Some(m)) = (&link.wlan, media[i]) else {
                continue;
            };
            let ap = nodes[i][w.ap_end];
            let Some(&j) = first.get(&m) else {
                first.insert(m, i);
                continue;
            };
            let other = self.links[j]
                .wlan
                .as_ref()
                .expect("media hold wlan links only");
            if nodes[j][other.ap_end] != ap {
                return Err(PlanError::field(
                    format!("links.{i}.wlan.medium"),
                    format!(
                        "medium {:?} already has the access point of links.{j}; a medium has one",
                        w.medium.as_deref().unwrap_or_default()
                    ),
                ));
            }
            if shared(w) != shared(other) {
                return Err(PlanError::field(
                    format!("links.{i}.wlan"),
                    format!(
                        "ack_rate_bps, preamble, retry_limit and ap_queue belong to the medium \
                         and must equal those of links.{j}, which shares it"
                    ),
                ));
            }
            if nodes[i][1 - w.ap_end] == nodes[j][1 - other.ap_end] {
                return Err(PlanError::field(
                    format!("links.{i}"),
                    format!(
                        "the station is already associated with this access point by links.{j}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl WlanPlan {
    fn validate(&self, at: &str, link: &LinkPlan) -> Result<(), PlanError> {
        if self.ap_end > 1 {
            return Err(PlanError::field(
                format!("{at}.ap_end"),
                "must be 0 (the node the forward direction leaves) or 1",
            ));
        }
        for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
            if !DATA_RATES_BPS.contains(&ch.rate_bps) {
                return Err(PlanError::field(
                    format!("{}.{dir}.rate_bps", at.trim_end_matches(".wlan")),
                    format!(
                        "{} is not an 802.11b data rate; accepted: 1000000, 2000000, 5500000, \
                         11000000",
                        ch.rate_bps
                    ),
                ));
            }
        }
        if !BASIC_RATES_BPS.contains(&self.ack_rate_bps) {
            return Err(PlanError::field(
                format!("{at}.ack_rate_bps"),
                "an ACK goes at a basic rate; accepted: 1000000, 2000000",
            ));
        }
        positive(&format!("{at}.retry_limit"), u64::from(self.retry_limit))?;
        let limit = match self.ap_queue {
            QueuePlan::Packets(n) | QueuePlan::Bytes(n) => n,
        };
        positive(&format!("{at}.ap_queue"), limit)
    }
}
