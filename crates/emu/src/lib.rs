//! tcplab's link emulator: the real Linux TCP stack in two network namespaces, joined by
//! a TUN device in each, with this crate moving the IP packets between the two devices
//! through the simulator's link model (rate, delay, queue discipline, error models).
//!
//! Python (`tcplab.emu`) creates the namespaces, calls [`run_json`] on a thread of its own,
//! configures addresses and routes once the devices exist (the `ready_fd` byte), runs the
//! TCP endpoints, and ends the run through `stop_fd`. See docs/emu.md.

mod ip;
mod link;
mod log;
mod realtime;
mod shuttle;
mod sys;
mod timing;
mod tso;
mod vnet;

use std::os::fd::RawFd;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tcplab_sim::engine::RngStream;
use tcplab_sim::plan::{ChannelPlan, QueuePlan};

pub use link::{Exit, Fate, Hop, HopEvent, HopStats, Packet, Path, Sinks};
pub use timing::TimingReport;

#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("invalid emulator config: {0}")]
    Config(String),
    #[error("{context}: {source}")]
    Os {
        context: String,
        source: std::io::Error,
    },
}

fn os(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmuError {
    let context = context.into();
    move |source| EmuError::Os { context, source }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketLogConfig {
    /// CSV file with one line per packet and hop.
    pub csv: PathBuf,
    /// Prefix of the mahimahi logs, one per hop and direction: PREFIX.link0.forward.log.
    pub mahimahi_prefix: Option<PathBuf>,
    pub max_records: usize,
}

/// A link of the emulated path, sender side first: a plan link's two directions. The
/// emulator runs its links in a row, so they name no nodes, and it has no 802.11 medium
/// (the emu backend refuses `wlan` links).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuLink {
    pub forward: ChannelPlan,
    pub reverse: ChannelPlan,
}

/// What Python hands the emulator (JSON; unknown fields are refused).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuConfig {
    /// Seeds the error models' named streams, as in the simulator.
    pub seed: u64,
    /// The plan's links, sender side first (docs/internals/plan-and-result.md).
    pub links: Vec<EmuLink>,
    /// The plan's index of `links[0]`: an emulator that carries a later segment of a path
    /// split by a PEP names its links' random streams, report rows and logs as the plan does.
    #[serde(default)]
    pub first_link: usize,
    /// Network namespace files (/run/netns/NAME) of the sender and of the receiver.
    pub netns: [String; 2],
    /// Name of the TUN device created in each namespace.
    pub tun_name: String,
    /// Largest IP packet the devices carry (their MTU).
    pub mtu: usize,
    /// Hard bound on the run, whatever happens to the caller.
    pub max_duration_ns: u64,
    /// One byte is written here once both devices exist.
    pub ready_fd: RawFd,
    /// The run ends when this descriptor becomes readable.
    pub stop_fd: RawFd,
    /// The schedules' time 0 is written here (crate::shuttle); none: they start with the loop.
    #[serde(default)]
    pub clock_fd: Option<RawFd>,
    /// Ask for SCHED_FIFO for the emulator thread (kept within the kernel's real-time
    /// budget, crate::realtime).
    pub realtime: bool,
    /// The DSCP that marks the measurement's control connection: the hops carry its
    /// packets but no error model draws for them, so that the n-th frame of the test meets
    /// the n-th draw of the link's stream, as in the simulator, which has no control
    /// connection.
    #[serde(default)]
    pub control_dscp: Option<u8>,
    /// A CPU for the emulator thread alone: the thread binds itself to it (the caller keeps
    /// the endpoints off it), so that out of SCHED_FIFO it does not share its CPU with them.
    #[serde(default)]
    pub cpu: Option<usize>,
    pub packet_log: Option<PacketLogConfig>,
}

#[derive(Debug, Serialize)]
pub struct LinkReport {
    pub link: usize,
    pub direction: &'static str,
    #[serde(flatten)]
    pub stats: HopStats,
}

#[derive(Debug, Serialize)]
pub struct EmuReport {
    /// CLOCK_MONOTONIC at the start and end of the packet loop, ns.
    pub start_monotonic_ns: u64,
    pub end_monotonic_ns: u64,
    pub links: Vec<LinkReport>,
    pub directions: [shuttle::DirectionStats; 2],
    /// Delivery time actually achieved minus the scheduled one, per packet written.
    pub timing_error: TimingReport,
    pub packet_buffers: usize,
    /// CPU time of the emulator thread over the run (CLOCK_THREAD_CPUTIME_ID), seconds.
    pub cpu_s: f64,
    /// The thread had SCHED_FIFO.
    pub realtime: bool,
    /// The CPU the thread was bound to, if it was.
    pub cpu: Option<usize>,
    /// Times it left SCHED_FIFO to stay within the kernel's real-time budget, and the
    /// seconds it then ran in the normal class.
    pub realtime_demotions: u32,
    pub realtime_off_s: f64,
    pub stopped_by: &'static str,
    pub log_records: usize,
    pub log_truncated: bool,
}

fn validate(config: &EmuConfig) -> Result<(), EmuError> {
    let bad = |m: String| Err(EmuError::Config(m));
    if config.links.is_empty() {
        return bad("links: at least one link is required".into());
    }
    if config.links.len() > 255 {
        return bad("links: at most 255 links".into());
    }
    for (i, link) in config.links.iter().enumerate() {
        for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
            if ch.rate_bps == 0 {
                return bad(format!("links.{i}.{dir}.rate_bps: must be greater than 0"));
            }
            let (QueuePlan::Packets(limit) | QueuePlan::Bytes(limit)) = ch.queue;
            if limit == 0 {
                return bad(format!("links.{i}.{dir}.queue: must be greater than 0"));
            }
            if let Some(schedule) = &ch.schedule {
                schedule
                    .validate(&format!("links.{i}.{dir}.schedule"))
                    .map_err(|e| EmuError::Config(e.to_string()))?;
            }
        }
    }
    if !(68..=65535).contains(&config.mtu) {
        return bad(format!("mtu: {} is outside 68..=65535", config.mtu));
    }
    if config.max_duration_ns == 0 {
        return bad("max_duration_ns: must be greater than 0".into());
    }
    Ok(())
}

/// The hops of both directions: forward crosses links 0..n, reverse crosses them back.
fn paths(config: &EmuConfig) -> [Path; 2] {
    let hop = |i: usize, dir: &str, plan| {
        let i = config.first_link + i;
        let stream = |what| RngStream::new(config.seed, &format!("links.{i}.{dir}.{what}"));
        link::Hop::new(plan, stream("errors"), stream("queue"))
    };
    let forward = config
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| hop(i, "forward", &l.forward))
        .collect();
    let reverse = config
        .links
        .iter()
        .enumerate()
        .rev()
        .map(|(i, l)| hop(i, "reverse", &l.reverse))
        .collect();
    [Path { hops: forward }, Path { hops: reverse }]
}

/// Runs the emulator on a thread of its own (which alone enters the namespaces and may
/// take a real-time class) and returns its report.
pub fn run(config: EmuConfig) -> Result<EmuReport, EmuError> {
    validate(&config)?;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("tcplab-emu".into())
            .spawn_scoped(scope, || run_here(&config))
            .map_err(os("cannot start the emulator thread"))?
            .join()
            .map_err(|_| EmuError::Config("the emulator thread panicked".into()))?
    })
}

fn run_here(config: &EmuConfig) -> Result<EmuReport, EmuError> {
    let open = |i: usize| {
        let path = &config.netns[i];
        sys::in_netns(path, || sys::open_tun(&config.tun_name)).map_err(os(format!(
            "cannot create TUN {} in {path}",
            config.tun_name
        )))
    };
    let tuns = [open(0)?, open(1)?];
    sys::minimal_timer_slack();
    let cpu = config.cpu.filter(|&cpu| sys::bind_to_cpu(cpu));
    let realtime = if config.realtime {
        realtime::Realtime::start(10, sys::now_ns())
    } else {
        None
    };
    sys::write(config.ready_fd, b"r").map_err(os("cannot signal readiness"))?;

    let mut log = config
        .packet_log
        .as_ref()
        .map(|c| log::PacketLog::new(c.max_records));
    let outcome = shuttle::Shuttle {
        tuns,
        paths: paths(config),
        mtu: config.mtu,
        realtime,
        stop_fd: config.stop_fd,
        clock_fd: config.clock_fd,
        max_duration_ns: config.max_duration_ns,
        control_dscp: config.control_dscp,
    }
    .run(&mut log)
    .map_err(os("emulator loop"))?;
    let cpu_s = sys::thread_cpu_ns() as f64 / 1e9;

    if let (Some(log), Some(c)) = (&log, &config.packet_log) {
        log.write_csv(&c.csv, outcome.start_ns)
            .map_err(os(format!("cannot write {}", c.csv.display())))?;
        if let Some(prefix) = &c.mahimahi_prefix {
            for (i, link) in config.links.iter().enumerate() {
                for (d, plan) in [(0u8, &link.forward), (1, &link.reverse)] {
                    let name = format!(
                        "{}.link{}.{}.log",
                        prefix.display(),
                        config.first_link + i,
                        log::DIRECTIONS[usize::from(d)]
                    );
                    // The log numbers hops along each direction; reverse runs backwards.
                    let hop = if d == 0 {
                        i
                    } else {
                        config.links.len() - 1 - i
                    };
                    log.write_mahimahi(
                        name.as_ref(),
                        d,
                        hop as u8,
                        plan.rate_bps,
                        outcome.start_ns,
                        outcome.end_ns,
                    )
                    .map_err(os(format!("cannot write {name}")))?;
                }
            }
        }
    }

    let n = config.links.len();
    let mut links = Vec::with_capacity(2 * n);
    for i in 0..n {
        links.push(LinkReport {
            link: config.first_link + i,
            direction: "forward",
            stats: outcome.hops[0][i],
        });
        links.push(LinkReport {
            link: config.first_link + i,
            direction: "reverse",
            stats: outcome.hops[1][n - 1 - i],
        });
    }
    Ok(EmuReport {
        start_monotonic_ns: outcome.start_ns,
        end_monotonic_ns: outcome.end_ns,
        links,
        directions: outcome.directions,
        timing_error: outcome.timing,
        packet_buffers: outcome.buffers,
        cpu_s,
        realtime: outcome.realtime.is_some(),
        cpu,
        realtime_demotions: outcome.realtime.as_ref().map_or(0, |r| r.demotions),
        realtime_off_s: outcome
            .realtime
            .as_ref()
            .map_or(0.0, |r| r.normal_ns as f64 / 1e9),
        stopped_by: outcome.stopped_by,
        log_records: log.as_ref().map_or(0, |l| l.len()),
        log_truncated: log.as_ref().is_some_and(|l| l.truncated),
    })
}

/// Parses a config given as JSON, runs the emulator, and returns its report as JSON.
pub fn run_json(config_json: &str) -> Result<String, EmuError> {
    let config: EmuConfig =
        serde_json::from_str(config_json).map_err(|e| EmuError::Config(e.to_string()))?;
    let report = run(config)?;
    serde_json::to_string(&report).map_err(|e| EmuError::Config(e.to_string()))
}
