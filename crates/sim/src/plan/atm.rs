//! The plan's ATM parts: cell links and switches (docs/models/atm.md), and the checks that
//! they fit together and fit the hosts' segments.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ErrorPlan, FeedbackPlan, PcapPlan, Plan};
use crate::error::PlanError;

/// One direction of an ATM link. Its `rate_bps` is the rate of the cell slots.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtmPlan {
    /// Octets per cell slot: 53, or 54 where the PHY sends a command octet before each
    /// cell (ATM25, af-phy-0040.000).
    pub slot_octets: u32,
    /// Bytes the encapsulation puts before the IP datagram in the AAL5 SDU (RFC 2684
    /// LLC/SNAP 8, VC-multiplexed 0, LANE 16).
    pub encapsulation_bytes: u32,
    /// The largest IP datagram the encapsulation carries.
    pub mtu: u32,
}

/// The most an AAL5 frame carries (ITU-T I.363.5): encapsulation and IP datagram together.
pub const MAX_AAL5_SDU: u64 = 65_535;

/// An ATM switch's output ports: a cell buffer each, and how it discards.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchPlan {
    pub buffer_cells: u64,
    pub discard: DiscardPlan,
    /// EPD refuses a frame whose first cell finds at least this many cells waiting.
    pub epd_threshold_cells: u64,
    /// How the ports steer ABR sources (docs/models/abr.md); `{"kind": "none"}` for none.
    pub feedback: FeedbackPlan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscardPlan {
    /// Plain UBR: a cell that finds the buffer full is lost, nothing more.
    DropTail,
    /// Partial Packet Discard.
    Ppd,
    /// Early Packet Discard, with PPD once the buffer is full.
    Epd,
}

/// Bytes of TCP and IP headers in a full segment's datagram (option bytes come out of
/// the payload, RFC 6691 §2).
pub const TCP_IP_HEADER_BYTES: u32 = 40;

impl Plan {
    pub(super) fn validate_atm(&self) -> Result<(), PlanError> {
        for (i, link) in self.links.iter().enumerate() {
            if link.forward.atm.is_some() != link.reverse.atm.is_some() {
                return Err(PlanError::field(
                    format!("links.{i}"),
                    "both directions of a link carry cells, or neither",
                ));
            }
            for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                let Some(atm) = &ch.atm else { continue };
                let at = format!("links.{i}.{dir}");
                if atm.slot_octets < 53 {
                    return Err(PlanError::field(
                        format!("{at}.atm.slot_octets"),
                        "a cell slot holds at least the 53-byte cell",
                    ));
                }
                if atm.mtu <= TCP_IP_HEADER_BYTES {
                    return Err(PlanError::field(
                        format!("{at}.atm.mtu"),
                        "must exceed the 40 bytes of TCP/IP headers",
                    ));
                }
                if u64::from(atm.encapsulation_bytes) + u64::from(atm.mtu) > MAX_AAL5_SDU {
                    // ITU-T I.363.5: an AAL5 CPCS-PDU carries at most 65535 octets.
                    return Err(PlanError::field(
                        format!("{at}.atm.encapsulation_bytes"),
                        format!(
                            "{} + an MTU of {} is more than an AAL5 frame carries \
                             ({MAX_AAL5_SDU} bytes)",
                            atm.encapsulation_bytes, atm.mtu
                        ),
                    ));
                }
                if matches!(ch.error, ErrorPlan::GilbertElliott { .. }) {
                    return Err(PlanError::field(
                        format!("{at}.error"),
                        "an ATM link takes a bit error rate or a cell loss ratio (loss)",
                    ));
                }
            }
        }
        let is_atm = |link: usize| self.links[link].forward.atm.is_some();
        if let Some(trace) = &self.trace {
            // A host capture records what crosses the host's interface, which on a plan
            // with ATM links may be cells: refused there too.
            let carries_cells = |p: &PcapPlan| match p {
                PcapPlan::Link(c) => is_atm(c.link),
                PcapPlan::Host(_) => (0..self.links.len()).any(is_atm),
            };
            if let Some(i) = trace.pcap.iter().position(carries_cells) {
                return Err(PlanError::field(
                    format!("trace.pcap.{i}"),
                    "links carrying ATM cells are not captured; capture a packet link",
                ));
            }
        }
        self.validate_switches(is_atm)?;
        self.validate_mtus()?;
        self.validate_abr()
    }

    fn validate_switches(&self, is_atm: impl Fn(usize) -> bool) -> Result<(), PlanError> {
        let hosts = self.hosts.len();
        let nodes = self.link_nodes();
        for (r, router) in self.routers.iter().enumerate() {
            let Some(switch) = &router.switch else {
                continue;
            };
            let at = format!("routers.{r}.switch");
            switch.feedback.validate(&format!("{at}.feedback"))?;
            if switch.buffer_cells == 0 {
                return Err(PlanError::field(
                    format!("{at}.buffer_cells"),
                    "must be greater than 0",
                ));
            }
            if switch.epd_threshold_cells > switch.buffer_cells {
                return Err(PlanError::field(
                    format!("{at}.epd_threshold_cells"),
                    format!("must not exceed buffer_cells ({})", switch.buffer_cells),
                ));
            }
            let node = hosts + r;
            if let Some(i) = (0..nodes.len()).find(|&i| nodes[i].contains(&node) && !is_atm(i)) {
                return Err(PlanError::field(
                    format!("links.{i}"),
                    format!(
                        "joins ATM switch {:?}, so it must be an ATM link",
                        router.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every flow's segments must fit the MTU of each ATM link on its path.
    fn validate_mtus(&self) -> Result<(), PlanError> {
        let network = self.network();
        for flow in &self.flows {
            let Some(route) = network.route(flow.src, flow.dst) else {
                continue;
            };
            let (src, dst) = (&self.hosts[flow.src].tcp, &self.hosts[flow.dst].tcp);
            // The sender uses the smaller of the two MSS (RFC 9293 §3.7.1).
            let host = if dst.mss < src.mss {
                flow.dst
            } else {
                flow.src
            };
            let mss = self.hosts[host].tcp.mss;
            for ch in route {
                let link = ch / 2;
                let Some(atm) = &self.links[link].forward.atm else {
                    continue;
                };
                if mss + TCP_IP_HEADER_BYTES > atm.mtu {
                    return Err(PlanError::field(
                        format!("hosts.{host}.tcp.mss"),
                        format!(
                            "{mss} + 40 bytes of TCP/IP headers exceed the {}-byte MTU of \
                             links.{link} (ATM, on the path from host {} to host {}); at most {}",
                            atm.mtu,
                            flow.src,
                            flow.dst,
                            atm.mtu - TCP_IP_HEADER_BYTES
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
