//! The resolved scenario ("plan") the simulator runs. Python's `tcplab.plan` produces it
//! with every unit converted (ns, bit/s, bytes) and every named curve or link kind turned
//! into numbers; see docs/internals/plan-and-result.md. The simulator re-checks the ranges
//! it relies on so that a hand-written plan gets an error, never a panic.
//!
//! A plan names each link's two nodes (hosts first, then routers) and lists its flows, each
//! with its own app. A scenario written as a path (two hosts, links in order, one `[app]`)
//! reaches the simulator in this same form: `tcplab.plan.topology_form` converts it.

mod abr;
mod aqm;
mod atm;
mod flows;
mod media;
mod peps;
mod schedule;
mod wlan;

pub use abr::{AbrPlan, EricaPlusPlan, FairSharePlan, FeedbackPlan, MarkPlan};
pub use aqm::{AqmPlan, MAX_FLOWS};
pub use atm::{AtmPlan, DiscardPlan, SwitchPlan, TCP_IP_HEADER_BYTES};
pub use flows::{FlowPlan, RouterPlan};
pub use media::{StreamPlan, Transport, MAX_UDP_MESSAGE};
pub use peps::PepPlan;
pub use schedule::{DeliveryTracePlan, SchedulePlan, SeriesPlan};
pub use wlan::{Preamble, WlanPlan};

use schemars::transform::Transform;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::PlanError;
use crate::tcp::cc::{CubicVariant, RenoVariant};
use crate::tcp::{
    BufferSize, EcnMode, HyStartVariant, LossRecovery, NagleVariant, RtoForm, SndbufAccounting,
};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub seed: u64,
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub trace_interval_ns: u64,
    pub hosts: Vec<HostPlan>,
    /// Store-and-forward nodes; node ids count hosts first.
    pub routers: Vec<RouterPlan>,
    pub links: Vec<LinkPlan>,
    pub flows: Vec<FlowPlan>,
    /// Packet captures; null captures nothing.
    #[serde(deserialize_with = "written")]
    pub trace: Option<TracePlan>,
    /// Split-connection proxies at router nodes; empty for none.
    pub peps: Vec<PepPlan>,
    /// ABR source parameters of the VCs that cross a switch with ABR feedback.
    #[serde(deserialize_with = "written")]
    pub abr: Option<AbrPlan>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostPlan {
    pub name: String,
    pub tcp: TcpPlan,
    /// Processing costs; null for a host that does its work in no time.
    #[serde(deserialize_with = "written")]
    pub cpu: Option<CpuPlan>,
}

/// What the host's one CPU spends on each kind of work (docs/models/hosts.md).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuPlan {
    /// Protocol processing of each packet sent or received.
    pub per_packet_ns: u64,
    /// Copying each byte between the application and the socket, in read() and write().
    pub per_byte_ns: u64,
    /// Each system call (read, write, and the storage write of a storing receiver).
    pub per_call_ns: u64,
    /// Writing each received byte to storage; 0 for a receiver that keeps nothing.
    pub storage_per_byte_ns: u64,
    /// Received packets the NIC holds while they wait for the CPU.
    pub ring_packets: u64,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpPlan {
    pub cc: String,
    /// Which CUBIC `cc = "cubic"` runs.
    pub cubic_variant: CubicVariant,
    /// Which window arithmetic `cc = "reno"` and `"newreno"` run.
    pub reno_variant: RenoVariant,
    /// Bytes, or "auto": Linux's send-buffer autotuning (Linux accounting only).
    pub sndbuf: BufferSize,
    /// What sndbuf limits: the payload, or Linux's skb memory against twice it.
    pub sndbuf_accounting: SndbufAccounting,
    /// Bytes (the largest window offered), or "auto": Linux's receive-buffer autotuning.
    pub rcvbuf: BufferSize,
    pub mss: u32,
    pub initial_window: u32,
    pub window_scaling: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub abc: bool,
    pub hystart: bool,
    /// Which HyStart `hystart` turns on.
    pub hystart_variant: HyStartVariant,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    /// Linux's quick-ACK mode at the receiver.
    pub quickack: bool,
    /// Linux's receive-window growth from this many segments; null offers the whole
    /// buffer at once.
    #[serde(deserialize_with = "written")]
    pub initial_rwnd: Option<u64>,
    pub nagle: bool,
    /// How Nagle holds back a small segment: RFC 896's or Minshall's.
    pub nagle_variant: NagleVariant,
    pub fast_retransmit: bool,
    pub min_rto_ns: u64,
    /// Where min_rto applies: RFC 6298's whole-RTO floor or Linux's variance term.
    pub rto_form: RtoForm,
    /// Grow cwnd only while it limits the sender (RFC 7661, Linux's
    /// `tcp_is_cwnd_limited`); false for stacks older than RFC 2861.
    pub cwnd_validation: bool,
    /// Open connections with the three-way handshake; false starts a connection this host
    /// opens already established, its options agreed at setup (as simulators without
    /// connection setup do: YATS, ns-2's one-way agents).
    pub handshake: bool,
    /// How a SACK connection finds and repairs losses (`LossRecovery`).
    pub loss_recovery: LossRecovery,
    /// The receiver reports duplicates in D-SACK blocks (RFC 2883).
    pub dsack: bool,
    /// cwnd restarts after an idle spell longer than the RTO (Linux
    /// `tcp_slow_start_after_idle`, RFC 5681 §4.1).
    pub slow_start_after_idle: bool,
    /// F-RTO (RFC 5682) after a retransmission timeout, with RACK-TLP.
    pub frto: bool,
    /// Linux's undo of spurious window reductions (D-SACK, timestamps, F-RTO), with
    /// RACK-TLP.
    pub undo: bool,
    /// Linux's GSO buffers and their deferral (tcp/sender/tso.rs).
    pub gso: bool,
    /// ECN (RFC 3168), as Linux's net.ipv4.tcp_ecn.
    pub ecn: EcnMode,
}

/// An `Option` the plan must still write (null for none): serde otherwise reads a missing
/// `Option` field as None, a default the plan would then not show. Every `Option` field of
/// the plan is read through it.
fn written<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(deserializer)
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkPlan {
    /// The node the forward direction leaves and the node it reaches.
    pub nodes: [usize; 2],
    pub forward: ChannelPlan,
    pub reverse: ChannelPlan,
    /// An 802.11b link: both directions take turns on a shared medium (plan/wlan.rs).
    #[serde(deserialize_with = "written")]
    pub wlan: Option<WlanPlan>,
}

/// One direction of a full-duplex link.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelPlan {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueuePlan,
    pub error: ErrorPlan,
    pub framing: FramingPlan,
    /// An ATM link direction carries cells (docs/models/atm.md); `framing` and `queue`
    /// then play no part, and `error` applies to each cell.
    #[serde(deserialize_with = "written")]
    pub atm: Option<AtmPlan>,
    /// What changes over the run (plan/schedule.rs); null: the fields above throughout.
    #[serde(deserialize_with = "written")]
    pub schedule: Option<SchedulePlan>,
    /// The discipline that replaces drop-tail in front of the serializer; null keeps
    /// drop-tail. `queue` stays its limit.
    #[serde(deserialize_with = "written")]
    pub aqm: Option<AqmPlan>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum QueuePlan {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FramingPlan {
    pub overhead_bytes: u32,
    pub min_payload_bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    Bulk,
    File,
    /// One message of `bytes`, received when its last byte is.
    Message,
    /// Request/response transactions, like netperf TCP_RR.
    Rr,
    /// Real-time streams of timestamped messages (`streams`), each its own flow.
    Media,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppPlan {
    pub kind: AppKind,
    /// Bytes per write() call.
    pub message_size: u64,
    #[serde(deserialize_with = "written")]
    pub bytes: Option<u64>,
    /// Sleep after each complete write() call before the next (seed 003's inter-packet delay).
    pub write_delay_ns: u64,
    /// Bytes per read() call; none: whatever the socket holds.
    #[serde(deserialize_with = "written")]
    pub read_size: Option<u64>,
    /// Sleep after each read() call (and its storage write) before the next: the receiving
    /// end of seed 003's inter-packet delay.
    pub read_delay_ns: u64,
    #[serde(deserialize_with = "written")]
    pub request_size: Option<u64>,
    #[serde(deserialize_with = "written")]
    pub response_size: Option<u64>,
    /// A media app's streams.
    pub streams: Vec<StreamPlan>,
    /// A media flow's streams share its one TCP connection (else the flow has one stream).
    pub shared_connection: bool,
}

/// Packet captures of link directions (docs/pcap.md).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TracePlan {
    pub pcap: Vec<PcapPlan>,
    /// Bytes of each packet kept in a capture, as `tcpdump -s`.
    pub snaplen: u32,
}

/// What a capture records (docs/pcap.md): a link's directions, each at its sending end, or
/// everything a host sends and receives, at its interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PcapPlan {
    Link(LinkCapture),
    Host(HostCapture),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCapture {
    pub link: usize,
    pub direction: CaptureDirection,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCapture {
    /// The host's index in the plan's hosts.
    pub host: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptureDirection {
    Both,
    Forward,
    Reverse,
}

/// The largest `min_rto_ns`: the RTO's ceiling, tcp/rto.rs's MAX_RTO_NS (60 s).
pub const MAX_MIN_RTO_NS: u64 = 60 * crate::engine::NS_PER_S;

/// The largest socket buffer (Linux caps SO_SNDBUF/SO_RCVBUF at INT_MAX / 2, socket(7)); a
/// bulk writer filling a larger one would not return.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// tcpdump's largest snapshot length (MAXIMUM_SNAPLEN); Wireshark reads no larger records.
pub const MAX_SNAPLEN: u32 = 262_144;

impl PcapPlan {
    /// The capture's name, spelled as in a scenario: `links.0`, `links.0.forward`, or the
    /// host's name (`host_name` gives a host index's).
    pub fn name<'a>(&self, host_name: impl FnOnce(usize) -> &'a str) -> String {
        match self {
            PcapPlan::Link(link) => link.name(),
            PcapPlan::Host(host) => host_name(host.host).to_owned(),
        }
    }
}

impl LinkCapture {
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
    fn validate(
        &self,
        links: usize,
        hosts: &[HostPlan],
        duration_ns: u64,
    ) -> Result<(), PlanError> {
        if !(1..=MAX_SNAPLEN).contains(&self.snaplen) {
            return Err(PlanError::field(
                "trace.snaplen",
                format!("must be within 1..={MAX_SNAPLEN} bytes"),
            ));
        }
        for (i, p) in self.pcap.iter().enumerate() {
            match p {
                PcapPlan::Link(c) if c.link >= links => {
                    return Err(PlanError::field(
                        format!("trace.pcap.{i}.link"),
                        format!("there is no link {}; the path has {links}", c.link),
                    ));
                }
                PcapPlan::Host(c) if c.host >= hosts.len() => {
                    return Err(PlanError::field(
                        format!("trace.pcap.{i}.host"),
                        format!("there is no host {}; the plan has {}", c.host, hosts.len()),
                    ));
                }
                _ => {}
            }
            if self.pcap[..i].contains(p) {
                return Err(PlanError::field(
                    format!("trace.pcap.{i}"),
                    format!("{} is captured twice", p.name(|h| &hosts[h].name)),
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

/// The longest time a plan may name, 2^62 ns (146 years): a clock reading plus any such
/// span stays within u64 (an interval of 2^64 - 1 ns wrapped the sampling clock and grew
/// the trace without end).
pub const MAX_TIME_NS: u64 = 1 << 62;

fn within_clock(field: &str, ns: u64) -> Result<(), PlanError> {
    if ns <= MAX_TIME_NS {
        Ok(())
    } else {
        Err(PlanError::field(
            field,
            format!("{ns} ns; accepted: at most {MAX_TIME_NS} ns (146 years)"),
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

/// The plan's JSON Schema (draft 2020-12), generated from these types: every plan
/// `Plan::from_json` reads is valid against it (its ranges and cross-field rules are
/// checked by `validate`). Exported to Python as `tcplab.shared.PLAN_SCHEMA`.
///
/// Every property is required: no plan field has a serde default, and an `Option` is
/// read through [`written`], so null must be written (schemars, following serde's
/// default, would leave an `Option` out of `required`).
pub fn schema_json() -> String {
    let mut schema = schemars::schema_for!(Plan);
    schemars::transform::RecursiveTransform(every_property_required).transform(&mut schema);
    serde_json::to_string(&schema).expect("a schema serializes")
}

fn every_property_required(schema: &mut schemars::Schema) {
    let Some(names) = schema.get("properties").and_then(|p| p.as_object()) else {
        return;
    };
    let names: Vec<serde_json::Value> = names.keys().cloned().map(Into::into).collect();
    schema.insert("required".into(), names.into());
}

impl Plan {
    pub fn from_json(json: &str) -> Result<Self, PlanError> {
        let plan: Plan = serde_json::from_str(json)?;
        plan.validate()?;
        Ok(plan)
    }

    pub fn validate(&self) -> Result<(), PlanError> {
        for (field, ns) in [
            ("duration_ns", self.duration_ns),
            ("interval_ns", self.interval_ns),
            ("trace_interval_ns", self.trace_interval_ns),
        ] {
            positive(field, ns)?;
            within_clock(field, ns)?;
        }
        for (i, host) in self.hosts.iter().enumerate() {
            host.tcp.validate(&format!("hosts.{i}.tcp"))?;
            if let Some(cpu) = &host.cpu {
                positive(&format!("hosts.{i}.cpu.ring_packets"), cpu.ring_packets)?;
            }
        }
        for (i, link) in self.links.iter().enumerate() {
            for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                let at = format!("links.{i}.{dir}");
                positive(&format!("{at}.rate_bps"), ch.rate_bps)?;
                within_clock(&format!("{at}.delay_ns"), ch.delay_ns)?;
                let limit = match ch.queue {
                    QueuePlan::Packets(n) | QueuePlan::Bytes(n) => n,
                };
                positive(&format!("{at}.queue"), limit)?;
                if let Some(aqm) = &ch.aqm {
                    aqm.validate(&format!("{at}.aqm"))?;
                }
                ch.error.validate(&format!("{at}.error"))?;
                if let Some(schedule) = &ch.schedule {
                    if link.wlan.is_some() || ch.atm.is_some() {
                        return Err(PlanError::field(
                            format!("{at}.schedule"),
                            "only a point-to-point line has a schedule; an 802.11b or ATM link has none",
                        ));
                    }
                    schedule.validate(&format!("{at}.schedule"))?;
                }
            }
        }
        if let Some(trace) = &self.trace {
            trace.validate(self.links.len(), &self.hosts, self.duration_ns)?;
        }
        self.validate_flows()?;
        self.validate_wlan()?;
        self.validate_peps()?;
        media::refuse_udp_captures(self)?;
        self.validate_atm()?;
        self.validate_result_size()
    }

    /// A run whose series and traces would take more than the budget is refused before it
    /// starts, naming the interval that sets their size (crate::columns).
    fn validate_result_size(&self) -> Result<(), PlanError> {
        let (bytes, part) = crate::columns::estimate_bytes(self);
        if bytes <= crate::columns::BUDGET_BYTES {
            return Ok(());
        }
        let (field, every) = match part {
            "trace_interval" => ("trace_interval_ns", self.trace_interval_ns),
            "streams" => {
                // Named on the stream that sends most often: its interval is the first to raise.
                let field = self
                    .flows
                    .iter()
                    .enumerate()
                    .flat_map(|(i, f)| {
                        f.app
                            .streams
                            .iter()
                            .enumerate()
                            .map(move |(j, s)| (i, j, s))
                    })
                    .min_by_key(|(_, _, s)| s.interval_ns)
                    .map_or_else(
                        || "duration_ns".to_owned(),
                        |(i, j, _)| format!("flows.{i}.app.streams.{j}.interval_ns"),
                    );
                return Err(PlanError::field(
                    field,
                    format!(
                        "the media streams' messages would take {:.1} MiB, above the {} MiB \
                         budget in {} s; raise the streams' interval or shorten duration",
                        bytes as f64 / (1u64 << 20) as f64,
                        crate::columns::BUDGET_BYTES >> 20,
                        self.duration_ns as f64 / 1e9,
                    ),
                ));
            }
            _ => ("interval_ns", self.interval_ns),
        };
        Err(PlanError::field(
            field,
            format!(
                "the result's series and traces would take {:.1} MiB, above the {} MiB \
                 budget: sampling every {} ms for {} s; raise {part} or shorten duration",
                bytes as f64 / (1u64 << 20) as f64,
                crate::columns::BUDGET_BYTES >> 20,
                every as f64 / 1e6,
                self.duration_ns as f64 / 1e9,
            ),
        ))
    }
}

impl TcpPlan {
    fn validate(&self, at: &str) -> Result<(), PlanError> {
        if !crate::tcp::cc::NAMES.contains(&self.cc.as_str()) {
            return Err(PlanError::field(
                format!("{at}.cc"),
                format!(
                    "unknown congestion control {:?}; accepted: {}",
                    self.cc,
                    crate::tcp::cc::NAMES.join(", ")
                ),
            ));
        }
        if !(64..=65495).contains(&self.mss) {
            return Err(PlanError::field(
                format!("{at}.mss"),
                "must be within 64..=65495 bytes",
            ));
        }
        if self.min_rto_ns > MAX_MIN_RTO_NS {
            // The RTO is kept within [min_rto, 60 s] (tcp/rto.rs, RFC 6298 §2.5's upper
            // bound); a floor above the ceiling leaves no RTO to choose.
            return Err(PlanError::field(
                format!("{at}.min_rto_ns"),
                format!(
                    "{} ns is above the largest RTO; accepted: 0..={MAX_MIN_RTO_NS} ns (60 s)",
                    self.min_rto_ns
                ),
            ));
        }
        for (name, size) in [("sndbuf", self.sndbuf), ("rcvbuf", self.rcvbuf)] {
            match size {
                BufferSize::Bytes(size) if !(1..=MAX_BUFFER_BYTES).contains(&size) => {
                    return Err(PlanError::field(
                        format!("{at}.{name}"),
                        format!("{size} bytes; accepted: 1..={MAX_BUFFER_BYTES} or \"auto\""),
                    ));
                }
                _ => {}
            }
        }
        if self.sndbuf.is_auto() && self.sndbuf_accounting != SndbufAccounting::Linux {
            // Autotuning sizes Linux's skb memory (sender/sndbuf.rs).
            return Err(PlanError::field(
                format!("{at}.sndbuf"),
                "\"auto\" (Linux's send-buffer autotuning) needs sndbuf_accounting \"linux\"",
            ));
        }
        positive(
            &format!("{at}.initial_window"),
            u64::from(self.initial_window),
        )?;
        positive(&format!("{at}.delack_timeout_ns"), self.delack_timeout_ns)
    }
}

impl AppPlan {
    fn validate(&self, at: &str) -> Result<(), PlanError> {
        positive(&format!("{at}.message_size"), self.message_size)?;
        if let Some(n) = self.read_size {
            positive(&format!("{at}.read_size"), n)?;
        }
        let sized = matches!(self.kind, AppKind::File | AppKind::Message);
        match self.bytes {
            None if sized => {
                return Err(PlanError::field(
                    format!("{at}.bytes"),
                    "a file or message app needs its size in bytes",
                ))
            }
            Some(0) => {
                return Err(PlanError::field(
                    format!("{at}.bytes"),
                    "must be greater than 0",
                ))
            }
            Some(_) if !sized => {
                return Err(PlanError::field(
                    format!("{at}.bytes"),
                    "only a file or message app has a size; bulk and rr run for the duration",
                ))
            }
            _ => {}
        }
        for (name, size) in [
            ("request_size", self.request_size),
            ("response_size", self.response_size),
        ] {
            match (self.kind, size) {
                (AppKind::Rr, None) => {
                    return Err(PlanError::field(
                        format!("{at}.{name}"),
                        "an rr app needs request and response sizes",
                    ))
                }
                (AppKind::Rr, Some(n)) => positive(&format!("{at}.{name}"), n)?,
                (_, Some(_)) => {
                    return Err(PlanError::field(
                        format!("{at}.{name}"),
                        "only an rr app has request and response sizes",
                    ))
                }
                (_, None) => {}
            }
        }
        if self.read_delay_ns > 0 && matches!(self.kind, AppKind::Rr | AppKind::Media) {
            return Err(PlanError::field(
                format!("{at}.read_delay_ns"),
                "only a bulk, file or message app's reader pauses between reads",
            ));
        }
        if self.shared_connection && self.kind != AppKind::Media {
            return Err(PlanError::field(
                format!("{at}.shared_connection"),
                "only a media app's streams share a connection",
            ));
        }
        match (self.kind, self.streams.is_empty()) {
            (AppKind::Media, _) => media::validate_streams(&self.streams, at)?,
            (_, false) => {
                return Err(PlanError::field(
                    format!("{at}.streams"),
                    "only a media app has streams",
                ))
            }
            (_, true) => {}
        }
        Ok(())
    }
}
