//! The optional per-packet log: one record per packet and hop (arrival time, direction,
//! size, queue length on arrival, what became of it), kept in a buffer reserved before the
//! run so that logging allocates nothing per packet, and written out after the run as CSV
//! and in mahimahi's mm-link log format (`mahimahi/src/frontend/link_queue.cc`: `t + size`
//! arrival, `t - size delay` departure, `t d npkts nbytes` drop, `t # 1504` delivery
//! opportunity; integer milliseconds since the base timestamp) so that mm-throughput-graph
//! and Pantheon's analysis scripts read it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::link::{Fate, HopEvent};

#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub direction: u8,
    pub hop: u8,
    pub ip_bytes: u32,
    pub event: HopEvent,
}

pub struct PacketLog {
    records: Vec<Record>,
    limit: usize,
    pub truncated: bool,
}

/// mahimahi counts capacity in opportunities of one 1500-byte MTU plus its 4-byte TUN
/// header (`PACKET_SIZE` in link_queue.hh).
const MAHIMAHI_OPPORTUNITY_BYTES: u64 = 1504;
pub const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

impl PacketLog {
    pub fn new(limit: usize) -> Self {
        Self {
            records: Vec::with_capacity(limit),
            limit,
            truncated: false,
        }
    }

    pub fn push(&mut self, record: Record) {
        if self.records.len() < self.limit {
            self.records.push(record);
        } else {
            self.truncated = true;
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// One line per record, in order of arrival at the hop (a record is made when the
    /// hop's decision is, which for an AQM is when the packet leaves the queue); times in
    /// ns since `origin_ns` (the emulator's start).
    pub fn write_csv(&self, path: &Path, origin_ns: u64) -> io::Result<()> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(
            out,
            "t_ns,direction,link,ip_bytes,queue_packets,queue_bytes,fate,departure_ns"
        )?;
        let mut records: Vec<&Record> = self.records.iter().collect();
        records.sort_by_key(|r| r.event.arrival_ns);
        for r in records {
            let (fate, departure) = match r.event.fate {
                Fate::Sent { departure_ns, .. } => ("sent", departure_ns - origin_ns),
                Fate::DroppedByError { departure_ns } => ("error", departure_ns - origin_ns),
                Fate::DroppedByQueue => ("queue", 0),
            };
            writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                r.event.arrival_ns - origin_ns,
                DIRECTIONS[usize::from(r.direction)],
                r.hop,
                r.ip_bytes,
                r.event.queue_packets,
                r.event.queue_bytes,
                fate,
                departure
            )?;
        }
        out.flush()
    }

    /// One mahimahi log per hop and direction. `rate_bps` gives the delivery opportunities
    /// (`#` lines) of a constant-rate link; departure delays are queueing plus serialization,
    /// without propagation, as mahimahi's (its mm-delay is a separate shell).
    pub fn write_mahimahi(
        &self,
        path: &Path,
        direction: u8,
        hop: u8,
        rate_bps: u64,
        origin_ns: u64,
        end_ns: u64,
    ) -> io::Result<()> {
        let ms = |t_ns: u64| (t_ns.saturating_sub(origin_ns)) / 1_000_000;
        let mut lines: Vec<(u64, String)> = Vec::new();
        for r in self
            .records
            .iter()
            .filter(|r| r.direction == direction && r.hop == hop)
        {
            let arrival = r.event.arrival_ns;
            lines.push((ms(arrival), format!("+ {}", r.ip_bytes)));
            match r.event.fate {
                Fate::Sent { departure_ns, .. } => {
                    let delay_ms = (departure_ns - arrival) / 1_000_000;
                    lines.push((ms(departure_ns), format!("- {} {delay_ms}", r.ip_bytes)));
                }
                Fate::DroppedByQueue | Fate::DroppedByError { .. } => {
                    lines.push((ms(arrival), format!("d 1 {}", r.ip_bytes)));
                }
            }
        }
        let step_ns = MAHIMAHI_OPPORTUNITY_BYTES * 8 * 1_000_000_000 / rate_bps.max(1);
        let mut t = origin_ns + step_ns.max(1);
        while t <= end_ns {
            lines.push((ms(t), format!("# {MAHIMAHI_OPPORTUNITY_BYTES}")));
            t += step_ns.max(1);
        }
        lines.sort_by_key(|(t, _)| *t);
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(
            out,
            "# mahimahi mm-link log written by tcplab emu: link {hop} {}, {rate_bps} bit/s",
            DIRECTIONS[usize::from(direction)]
        )?;
        writeln!(out, "# init timestamp: 0")?;
        writeln!(out, "# base timestamp: 0")?;
        for (t, line) in lines {
            writeln!(out, "{t} {line}")?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(arrival_ns: u64, fate: Fate) -> Record {
        Record {
            direction: 0,
            hop: 0,
            ip_bytes: 1500,
            event: HopEvent {
                arrival_ns,
                queue_packets: 0,
                queue_bytes: 0,
                fate,
            },
        }
    }

    #[test]
    fn the_log_keeps_at_most_its_limit() {
        let mut log = PacketLog::new(1);
        log.push(record(0, Fate::DroppedByQueue));
        log.push(record(1, Fate::DroppedByQueue));
        assert_eq!(log.len(), 1);
        assert!(log.truncated);
    }

    #[test]
    fn mahimahi_lines_are_time_ordered_milliseconds() {
        let mut log = PacketLog::new(10);
        log.push(record(
            1_000_000,
            Fate::Sent {
                departure_ns: 13_000_000,
                reaches_ns: 23_000_000,
            },
        ));
        log.push(record(2_000_000, Fate::DroppedByQueue));
        let dir = std::env::temp_dir().join(format!("tcplab-emu-log-test-{}", std::process::id()));
        log.write_mahimahi(&dir, 0, 0, 1_504_000, 0, 10_000_000)
            .unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let events: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        // 1504 bytes at 1.504 Mb/s: one opportunity every 8 ms.
        assert_eq!(
            events,
            [
                "1 + 1500",
                "2 + 1500",
                "2 d 1 1500",
                "8 # 1504",
                "13 - 1500 12"
            ]
        );
    }
}
