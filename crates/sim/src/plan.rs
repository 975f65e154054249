//! The resolved scenario ("plan") the simulator runs. Python's `tcplab.plan` produces it
//! with every unit converted (ns, bit/s, bytes) and every named curve or link kind turned
//! into numbers; see docs/internals/plan-and-result.md. The simulator re-checks the ranges
//! it relies on so that a hand-written plan gets an error, never a panic.

use serde::Deserialize;

use crate::error::PlanError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub seed: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub trace_interval_ns: u64,
    pub hosts: Vec<HostPlan>,
    pub links: Vec<LinkPlan>,
    pub app: AppPlan,
    /// Packet captures; a plan without it captures nothing.
    pub trace: Option<TracePlan>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPlan {
    pub name: String,
    pub tcp: TcpPlan,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpPlan {
    pub cc: String,
    pub sndbuf: u64,
    pub rcvbuf: u64,
    pub mss: u32,
    pub initial_window: u32,
    pub window_scaling: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub abc: bool,
    pub hystart: bool,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    pub nagle: bool,
    pub fast_retransmit: bool,
    pub min_rto_ns: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkPlan {
    pub forward: ChannelPlan,
    pub reverse: ChannelPlan,
}

/// One direction of a full-duplex link.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelPlan {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueuePlan,
    pub error: ErrorPlan,
    pub framing: FramingPlan,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum QueuePlan {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum ErrorPlan {
    None,
    Loss {
        p: f64,
    },
    Ber {
        ber: f64,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FramingPlan {
    pub overhead_bytes: u32,
    pub min_payload_bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    Bulk,
    File,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppPlan {
    pub kind: AppKind,
    pub message_size: u64,
    pub bytes: Option<u64>,
}

/// Packet captures of link directions (docs/pcap.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracePlan {
    pub pcap: Vec<PcapPlan>,
    /// Bytes of each packet kept in a capture, as `tcpdump -s`.
    pub snaplen: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapPlan {
    pub link: usize,
    pub direction: CaptureDirection,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureDirection {
    Both,
    Forward,
    Reverse,
}

/// tcpdump's largest snapshot length (MAXIMUM_SNAPLEN); Wireshark reads no larger records.
pub const MAX_SNAPLEN: u32 = 262_144;

impl PcapPlan {
    /// The capture's name, spelled as in a scenario: `links.0`, `links.0.forward`.
    pub fn name(&self) -> String {
        match self.direction {
            CaptureDirection::Both => format!("links.{}", self.link),
            CaptureDirection::Forward => format!("links.{}.forward", self.link),
            CaptureDirection::Reverse => format!("links.{}.reverse", self.link),
        }
    }

    pub fn covers(&self, link: usize, forward: bool) -> bool {
        link == self.link
            && match self.direction {
                CaptureDirection::Both => true,
                CaptureDirection::Forward => forward,
                CaptureDirection::Reverse => !forward,
            }
    }
}

impl TracePlan {
    fn validate(&self, links: usize, duration_ns: u64) -> Result<(), PlanError> {
        if !(1..=MAX_SNAPLEN).contains(&self.snaplen) {
            return Err(PlanError::field(
                "trace.snaplen",
                format!("must be within 1..={MAX_SNAPLEN} bytes"),
            ));
        }
        for (i, p) in self.pcap.iter().enumerate() {
            if p.link >= links {
                return Err(PlanError::field(
                    format!("trace.pcap.{i}.link"),
                    format!("there is no link {}; the path has {links}", p.link),
                ));
            }
            if self.pcap[..i].contains(p) {
                return Err(PlanError::field(
                    format!("trace.pcap.{i}"),
                    format!("{} is captured twice", p.name()),
                ));
            }
        }
        // pcap records count seconds in 32 bits.
        if !self.pcap.is_empty() && duration_ns / crate::engine::NS_PER_S > u64::from(u32::MAX) {
            return Err(PlanError::field(
                "trace.pcap",
                "pcap timestamps end after 2^32 s (136 years); shorten duration_ns to capture",
            ));
        }
        Ok(())
    }
}

fn probability(field: &str, p: f64) -> Result<(), PlanError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(PlanError::field(
            field,
            format!("{p} is not a probability in [0, 1]"),
        ))
    }
}

fn positive(field: &str, v: u64) -> Result<(), PlanError> {
    if v > 0 {
        Ok(())
    } else {
        Err(PlanError::field(field, "must be greater than 0"))
    }
}

impl ErrorPlan {
    fn validate(&self, at: &str) -> Result<(), PlanError> {
        match *self {
            ErrorPlan::None => Ok(()),
            ErrorPlan::Loss { p } => probability(&format!("{at}.p"), p),
            ErrorPlan::Ber { ber } => probability(&format!("{at}.ber"), ber),
            ErrorPlan::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                probability(&format!("{at}.p_gb"), p_gb)?;
                probability(&format!("{at}.p_bg"), p_bg)?;
                probability(&format!("{at}.loss_good"), loss_good)?;
                probability(&format!("{at}.loss_bad"), loss_bad)
            }
        }
    }
}

impl Plan {
    pub fn from_json(json: &str) -> Result<Self, PlanError> {
        let plan: Plan = serde_json::from_str(json)?;
        plan.validate()?;
        Ok(plan)
    }

    pub fn validate(&self) -> Result<(), PlanError> {
        positive("duration_ns", self.duration_ns)?;
        positive("interval_ns", self.interval_ns)?;
        positive("trace_interval_ns", self.trace_interval_ns)?;
        if self.hosts.len() != 2 {
            return Err(PlanError::field(
                "hosts",
                format!(
                    "exactly 2 hosts are supported (sender, receiver), got {}",
                    self.hosts.len()
                ),
            ));
        }
        for (i, host) in self.hosts.iter().enumerate() {
            let at = format!("hosts.{i}.tcp");
            let tcp = &host.tcp;
            if !crate::tcp::cc::NAMES.contains(&tcp.cc.as_str()) {
                return Err(PlanError::field(
                    format!("{at}.cc"),
                    format!(
                        "unknown congestion control {:?}; accepted: {}",
                        tcp.cc,
                        crate::tcp::cc::NAMES.join(", ")
                    ),
                ));
            }
            if !(64..=65495).contains(&tcp.mss) {
                return Err(PlanError::field(
                    format!("{at}.mss"),
                    "must be within 64..=65495 bytes",
                ));
            }
            positive(&format!("{at}.sndbuf"), tcp.sndbuf)?;
            positive(&format!("{at}.rcvbuf"), tcp.rcvbuf)?;
            positive(
                &format!("{at}.initial_window"),
                u64::from(tcp.initial_window),
            )?;
            positive(&format!("{at}.delack_timeout_ns"), tcp.delack_timeout_ns)?;
        }
        if self.links.is_empty() {
            return Err(PlanError::field("links", "at least one link is required"));
        }
        for (i, link) in self.links.iter().enumerate() {
            for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                let at = format!("links.{i}.{dir}");
                positive(&format!("{at}.rate_bps"), ch.rate_bps)?;
                let limit = match ch.queue {
                    QueuePlan::Packets(n) | QueuePlan::Bytes(n) => n,
                };
                positive(&format!("{at}.queue"), limit)?;
                ch.error.validate(&format!("{at}.error"))?;
            }
        }
        if let Some(trace) = &self.trace {
            trace.validate(self.links.len(), self.duration_ns)?;
        }
        positive("app.message_size", self.app.message_size)?;
        match (self.app.kind, self.app.bytes) {
            (AppKind::File, None) => Err(PlanError::field(
                "app.bytes",
                "a file app needs its size in bytes",
            )),
            (AppKind::File, Some(0)) => {
                Err(PlanError::field("app.bytes", "must be greater than 0"))
            }
            (AppKind::Bulk, Some(_)) => Err(PlanError::field(
                "app.bytes",
                "a bulk app has no size; use kind = \"file\"",
            )),
            _ => Ok(()),
        }
    }
}
