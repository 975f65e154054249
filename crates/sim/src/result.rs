//! The run's result, serialized as documented in docs/internals/plan-and-result.md.

use schemars::JsonSchema;
use serde::Serialize;

use crate::columns::{direction_labels, Column, Table, Values};
use crate::media::StreamResult;
use crate::metrics::{LatencySummary, LimitShares, QueueSeries, SeriesOut, Trace};

#[derive(Debug, Serialize, JsonSchema)]
pub struct RunResult {
    pub summary: Summary,
    pub flows: Vec<FlowResult>,
    /// Each TCP connection of the flows a PEP splits; absent from the JSON without PEPs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<SegmentResult>,
    pub hosts: Vec<HostResult>,
    pub links: Vec<LinkResult>,
    /// Each media stream's messages; empty without a media app. tcplab.media turns them
    /// into the Python result's `media` and `messages` parts.
    pub streams: Vec<StreamResult>,
    pub series: SeriesOut,
    pub trace: Trace,
    /// Per ATM output port; absent when no link carries cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub atm_ports: Vec<AtmPortResult>,
    #[serde(skip_serializing_if = "AtmQueueSeries::is_empty")]
    pub atm_queue: AtmQueueSeries,
    /// Each ABR VC's allowed cell rate; absent without ABR VCs.
    #[serde(skip_serializing_if = "AbrAcrSeries::is_empty")]
    pub abr_acr: AbrAcrSeries,
    /// Each link direction's queue per interval (metrics/queue.rs); absent when no
    /// direction has a serializer of its own (all wlan or ATM).
    #[serde(skip_serializing_if = "QueueSeries::is_empty")]
    pub queue: QueueSeries,
    /// The packet captures the plan asked for; not part of the JSON.
    #[serde(skip)]
    pub captures: Vec<Capture>,
}

/// One of each part of a result with every value empty, serialized: the summary, a row
/// of each kind, the series and the trace, as JSON text whose objects hold the columns in
/// the order a result has them. Optional columns (a summary's `atm`, `wlan`, `rr`; a wlan
/// link row's `retries`, `collisions`) are left out. The Python backends that build
/// results themselves (model, emu) take their columns from it (tcplab.backends.rows).
#[derive(Default, Serialize, JsonSchema)]
struct Columns {
    summary: Summary,
    flows: FlowResult,
    segments: SegmentResult,
    hosts: HostResult,
    links: LinkResult,
    series: SeriesOut,
    trace: Trace,
}

/// The result's JSON Schema (draft 2020-12) as `run_json` writes it, generated from these
/// types. Exported to Python as `tcplab.shared.RESULT_SCHEMA`.
pub fn schema_json() -> String {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let schema = generator.into_root_schema_for::<RunResult>();
    serde_json::to_string(&schema).expect("a schema serializes")
}

pub fn columns_json() -> String {
    serde_json::to_string(&Columns::default()).expect("a result part serializes")
}

impl RunResult {
    /// The long parts (series, trace, and the ATM queue and ABR rate samples when the run
    /// has them) as columns, taken out of the result, which keeps empty ones.
    pub fn take_tables(&mut self) -> Vec<Table> {
        let mut tables = vec![
            std::mem::take(&mut self.series).table(),
            std::mem::take(&mut self.trace).table(),
        ];
        if !self.atm_queue.is_empty() {
            tables.push(std::mem::take(&mut self.atm_queue).table());
        }
        if !self.abr_acr.is_empty() {
            tables.push(std::mem::take(&mut self.abr_acr).table());
        }
        if !self.queue.is_empty() {
            tables.push(std::mem::take(&mut self.queue).table());
        }
        tables
    }
}

/// One packet capture: its name (`links.0`, `links.0.forward`) and its pcap file's bytes.
#[derive(Debug)]
pub struct Capture {
    pub name: String,
    pub pcap: Vec<u8>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Summary {
    pub goodput_bps: f64,
    pub elapsed_s: f64,
    pub bytes_delivered: u64,
    pub bytes_written: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Zero-window probes of the persist timer.
    pub persist_probes: u64,
    pub completed: bool,
    pub events: u64,
    pub limited_by: LimitShares,
    /// Jain's index of the flows' goodputs; None when no flow delivered anything.
    pub fairness: Option<f64>,
    /// The busiest host's CPU utilisation, and the goodput per unit of it.
    pub cpu_utilisation: f64,
    pub goodput_per_cpu_bps: Option<f64>,
    pub window_updates: u64,
    pub ring_drops: u64,
    /// Cells on the ATM links; absent when no link carries cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atm: Option<AtmSummary>,
    /// Frames on the 802.11 media; absent when no link is a wlan link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wlan: Option<WlanSummary>,
    /// Request/response flows' transactions; absent without such flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rr: Option<LatencySummary>,
}

/// The 802.11 media's frames in the run's summary, all stations and the APs together
/// (docs/models/wlan.md).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct WlanSummary {
    /// Data frame transmission attempts.
    pub frames: u64,
    /// Attempts that failed and were tried again.
    pub retries: u64,
    /// Attempts that overlapped another station's (a collision of two counts twice).
    pub collisions: u64,
    /// Frames discarded at the retry limit: losses TCP sees.
    pub retry_drops: u64,
    /// Packets dropped by full station or AP queues.
    pub queue_drops: u64,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct FlowResult {
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub persist_probes: u64,
    pub srtt_s: f64,
    pub min_rtt_s: f64,
    pub final_cwnd_bytes: u64,
    pub window_updates: u64,
    /// When the receiver had the whole file or message; None for an unsized or unfinished flow.
    pub completed_s: Option<f64>,
}

/// One connection of a flow split by a PEP: segment 0 leaves the flow's source, the last
/// reaches its destination; its row holds that connection's own counts.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct SegmentResult {
    pub segment: usize,
    /// The most the PEP's relay at this segment's end held; None for the last segment.
    pub relay_peak_bytes: Option<u64>,
    #[serde(flatten)]
    pub connection: FlowResult,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct HostResult {
    pub host: String,
    pub cpu_utilisation: f64,
    /// Goodput of the flows the host takes part in, per unit of its CPU utilisation
    /// (seed 002's "transfer rate per CPU usage": 17 Mb/s at 34 % is 50 Mb/s).
    pub goodput_per_cpu_bps: Option<f64>,
    pub packets: u64,
    pub calls: u64,
    pub ring_drops: u64,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct LinkResult {
    pub link: usize,
    pub direction: &'static str,
    pub packets: u64,
    pub bytes: u64,
    pub drops_queue: u64,
    pub drops_error: u64,
    pub max_queue_bytes: u64,
    pub utilisation: f64,
    /// A wlan direction's attempts that failed and were tried again; absent on other links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<u64>,
    /// A wlan direction's attempts that overlapped another station's; absent on other links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collisions: Option<u64>,
}

/// The ATM links' cells in the run's summary (docs/models/atm.md).
#[derive(Debug, Serialize, JsonSchema)]
pub struct AtmSummary {
    /// Seed 001's efficiency: the run's total TCP goodput (bytes delivered to the
    /// applications · 8 / elapsed time) over `max_goodput_bps`. None when some flow
    /// crosses no ATM link, or a PEP splits a flow into several connections.
    pub efficiency: Option<f64>,
    /// The largest total TCP goodput the ATM links allow after the cell tax.
    pub max_goodput_bps: Option<f64>,
    /// Cells made by segmentation where packets enter ATM links.
    pub cells_sent: u64,
    /// ABR resource-management cells the end systems sent (docs/models/abr.md).
    pub rm_cells: u64,
    /// Cells switch buffers discarded (full, EPD, PPD).
    pub cells_dropped: u64,
    /// Cells receivers discarded (header errors, or the link's cell loss ratio).
    pub cells_lost: u64,
    /// (cells_dropped + cells_lost) / (cells_sent + rm_cells).
    pub cell_loss_ratio: f64,
    /// Cells that crossed their whole ATM path for nothing: reassembled into frames that
    /// failed, or still being reassembled at the end (Romanow & Floyd's "dead" cells).
    pub cells_dead: u64,
    /// AAL5 frames reassembled and passed on, and frames lost (a cell dropped, lost or
    /// errored, or merged with a frame whose end-of-frame cell was lost).
    pub frames_delivered: u64,
    pub frames_lost: u64,
}

/// One output port: the direction of an ATM link that a node sends on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AtmPortResult {
    pub link: usize,
    pub direction: &'static str,
    /// The host, router or switch the port belongs to.
    pub node: String,
    pub cells: u64,
    pub drops_full: u64,
    pub drops_epd: u64,
    pub drops_ppd: u64,
    pub cells_lost: u64,
    pub cells_errored: u64,
    pub max_queue_cells: u64,
    pub utilisation: f64,
}

/// Cells waiting at each ATM port, sampled every trace interval: one row per port and
/// sample, as columns.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct AtmQueueSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<usize>,
    pub direction: Vec<&'static str>,
    pub cells: Vec<u64>,
}

impl AtmQueueSeries {
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }

    fn table(self) -> Table {
        let link = self.link.into_iter().map(|l| l as u64).collect();
        Table {
            name: "atm_queue",
            columns: vec![
                Column::new("t_s", Values::F64(self.t_s)),
                Column::new("link", Values::U64(link)),
                Column::new("direction", direction_labels(&self.direction)),
                Column::new("cells", Values::U64(self.cells)),
            ],
        }
    }
}

/// Each ABR VC's allowed cell rate (ACR, cells/s), sampled every trace interval: one row
/// per VC and sample, as columns.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct AbrAcrSeries {
    pub t_s: Vec<f64>,
    pub flow: Vec<usize>,
    /// `forward` for the VC from the flow's client, `reverse` for the one back.
    pub direction: Vec<&'static str>,
    pub acr_cells_s: Vec<f64>,
}

impl AbrAcrSeries {
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }

    fn table(self) -> Table {
        let flow = self.flow.into_iter().map(|f| f as u64).collect();
        Table {
            name: "abr_acr",
            columns: vec![
                Column::new("t_s", Values::F64(self.t_s)),
                Column::new("flow", Values::U64(flow)),
                Column::new("direction", direction_labels(&self.direction)),
                Column::new("acr_cells_s", Values::F64(self.acr_cells_s)),
            ],
        }
    }
}
