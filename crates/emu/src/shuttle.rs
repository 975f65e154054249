//! The packet loop: one thread moves packets both ways between the two TUN devices.
//!
//! A read from a TUN is stamped with CLOCK_MONOTONIC and cut into wire-size packets (a
//! super-packet into its segments, crate::tso), each offered at that time to the path of
//! its direction (crate::link), which runs its hops' events up to that time first. The next
//! wake-up is the earliest event of the two paths (a frame leaving a line, or reaching the
//! next node or the far device), and a timerfd armed at that absolute time wakes the loop,
//! which then runs the paths up to the clock and writes what they deliver, one packet per
//! write, each at its own time. Packet buffers come from a pool that only grows, so the
//! steady state allocates nothing per packet, and reads are drained in batches per wake-up;
//! before each read the other direction's path runs up to the read's time, so that what it
//! has due is written then rather than after the batch.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use serde::Serialize;

use crate::ip;
use crate::link::{Exit, HopEvent, HopStats, Packet, Path, Sinks};
use crate::log::{PacketLog, Record};
use crate::realtime::Realtime;
use crate::sys::{self, Epoll, Timer};
use crate::timing::{LatenessHistogram, TimingReport};
use crate::tso::Segments;
use crate::vnet;

/// Packets (a super-packet's segments each) read per device per wake-up before the loop
/// looks at due deliveries again, so that a flood in one direction cannot delay the
/// other's deliveries by more than a batch.
const READ_BATCH: u64 = 64;
const TOKEN_TUN: [u64; 2] = [0, 1];
const TOKEN_TIMER: u64 = 2;
const TOKEN_STOP: u64 = 3;
const TOKEN_CLOCK: u64 = 4;
/// The largest read: a virtio-net header and an IPv4 packet of up to 64 KiB.
const READ_BUFFER: usize = vnet::LEN + 65_535 + 1;

/// Buffers of a virtio-net header and one packet of at most the MTU, as written.
struct Pool {
    buffers: Vec<Box<[u8]>>,
    free: Vec<u32>,
    size: usize,
}

impl Pool {
    fn take(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.buffers.push(vec![0u8; self.size].into_boxed_slice());
            (self.buffers.len() - 1) as u32
        })
    }
}

#[derive(Debug, Default, Serialize)]
pub struct DirectionStats {
    /// Reads from the device: a packet or a super-packet each.
    pub reads: u64,
    /// Wire-size packets offered to the path.
    pub packets_in: u64,
    pub packets_out: u64,
    pub write_errors: u64,
    /// Reads that could not be cut into packets (crate::tso::Refusal), dropped.
    pub refused: u64,
}

/// Cuts what one read returned (a virtio-net header and a packet) into wire-size packets
/// in pool buffers, each with the virtio-net header it will be written with, and hands
/// each buffer and its IP length to `offer`; false if the read is refused.
fn intake(read: &[u8], pool: &mut Pool, mut offer: impl FnMut(&mut Pool, u32, u32)) -> bool {
    let Some((header, packet)) = read.split_first_chunk::<{ vnet::LEN }>() else {
        return false;
    };
    let header = vnet::Header::read(header);
    let room = pool.size - vnet::LEN;
    if header.gso_type == vnet::GSO_NONE {
        if packet.len() > room {
            return false;
        }
        let buffer = pool.take();
        let b = &mut pool.buffers[buffer as usize];
        header.single().write(b);
        b[vnet::LEN..vnet::LEN + packet.len()].copy_from_slice(packet);
        offer(pool, buffer, packet.len() as u32);
        return true;
    }
    if header.gso_type & !vnet::GSO_ECN != vnet::GSO_TCPV4 {
        return false;
    }
    let Ok(segments) = Segments::new(packet, usize::from(header.gso_size), room) else {
        return false;
    };
    let written = vnet::Header::partial_tcp(usize::from(packet[0] & 0x0f) * 4);
    for i in 0..segments.count() {
        let buffer = pool.take();
        let b = &mut pool.buffers[buffer as usize];
        written.write(b);
        let len = segments.write(i, &mut b[vnet::LEN..]);
        offer(pool, buffer, len as u32);
    }
    true
}

pub struct Outcome {
    pub start_ns: u64,
    pub end_ns: u64,
    pub hops: [Vec<HopStats>; 2],
    pub directions: [DirectionStats; 2],
    pub timing: TimingReport,
    pub buffers: usize,
    pub stopped_by: &'static str,
    pub realtime: Option<Realtime>,
}

pub struct Shuttle {
    pub tuns: [OwnedFd; 2],
    pub paths: [Path; 2],
    /// The largest IP packet the devices carry.
    pub mtu: usize,
    /// The thread's real-time class, if it has one, kept within the kernel's budget.
    pub realtime: Option<Realtime>,
    pub stop_fd: RawFd,
    /// Where the schedules' time 0 arrives (8 bytes, CLOCK_MONOTONIC ns, little-endian);
    /// until then, a scheduled hop holds its values of time 0.
    pub clock_fd: Option<RawFd>,
    pub max_duration_ns: u64,
    /// Packets with this DSCP are the measurement's control traffic (`Packet::control`).
    pub control_dscp: Option<u8>,
}

impl Shuttle {
    /// Runs until `stop_fd` is readable or `max_duration_ns` has passed.
    pub fn run(mut self, log: &mut Option<PacketLog>) -> io::Result<Outcome> {
        let control_dscp = self.control_dscp;
        let epoll = Epoll::new()?;
        let timer = Timer::new()?;
        for (dir, tun) in self.tuns.iter().enumerate() {
            epoll.add(tun.as_raw_fd(), TOKEN_TUN[dir])?;
        }
        epoll.add(timer.fd(), TOKEN_TIMER)?;
        epoll.add(self.stop_fd, TOKEN_STOP)?;
        if let Some(fd) = self.clock_fd {
            epoll.add(fd, TOKEN_CLOCK)?;
        }
        let fds = [self.tuns[0].as_raw_fd(), self.tuns[1].as_raw_fd()];

        let mut pool = Pool {
            buffers: Vec::new(),
            free: Vec::new(),
            size: vnet::LEN + self.mtu,
        };
        let mut read_buffer = vec![0u8; READ_BUFFER];
        let mut directions = [DirectionStats::default(), DirectionStats::default()];
        let mut lateness = LatenessHistogram::default();
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];

        // What a path hands back: a packet to write now (at or after its time), or a
        // buffer to free. The log notes each hop's decision.
        let mut outcome = |dir: usize, o: Exit, pool: &mut Pool, stats: &mut DirectionStats| {
            match o {
                Exit::Delivered { at_ns, packet } => {
                    let end = vnet::LEN + packet.len as usize;
                    let buffer = &mut pool.buffers[packet.buffer as usize][..end];
                    if packet.ce {
                        ip::mark_ce(&mut buffer[vnet::LEN..]);
                    }
                    match sys::write(fds[1 - dir], buffer) {
                        Ok(_) => stats.packets_out += 1,
                        // A device that is down or a packet the stack refuses is lost, as
                        // on a real link; it is counted, not fatal.
                        Err(_) => stats.write_errors += 1,
                    }
                    lateness.record(sys::now_ns().saturating_sub(at_ns));
                    pool.free.push(packet.buffer);
                }
                Exit::Dropped(packet) => pool.free.push(packet.buffer),
            }
        };
        let mut note = |dir: usize, hop: usize, event: &HopEvent, len: u32| {
            if let Some(log) = log.as_mut() {
                log.push(Record {
                    direction: dir as u8,
                    hop: hop as u8,
                    ip_bytes: len,
                    event: *event,
                });
            }
        };

        // Runs one direction's path up to a time, writing what it delivers by then.
        macro_rules! advance {
            ($dir:expr, $until:expr) => {{
                let dir: usize = $dir;
                let stats = &mut directions[dir];
                self.paths[dir].advance(
                    $until,
                    &mut Sinks {
                        log: &mut |hop, e, len| note(dir, hop, e, len),
                        out: &mut |o| outcome(dir, o, &mut pool, stats),
                    },
                );
            }};
        }

        let start_ns = sys::now_ns();
        if self.clock_fd.is_none() {
            for hop in self.paths.iter_mut().flat_map(|p| p.hops.iter_mut()) {
                hop.start_clock(start_ns);
            }
        }
        let deadline_ns = start_ns + self.max_duration_ns;
        let mut armed_ns = u64::MAX;
        let stopped_by = 'run: loop {
            // Run both paths up to now, writing what is due.
            let now = sys::now_ns();
            if let Some(realtime) = self.realtime.as_mut() {
                realtime.tick(now);
            }
            for dir in 0..2 {
                advance!(dir, now);
            }
            if now >= deadline_ns {
                break 'run "max_duration";
            }
            let next = self
                .paths
                .iter()
                .filter_map(Path::next_event_ns)
                .min()
                .unwrap_or(deadline_ns)
                .min(deadline_ns);
            // A near deadline is polled for (sys::Epoll::wait_until), not armed.
            if next != armed_ns && next > now + sys::SPIN_NS {
                timer.arm_at(next)?;
                armed_ns = next;
            }
            for ev in epoll.wait_until(&mut events, next)? {
                match ev.u64 {
                    TOKEN_STOP => break 'run "stop",
                    TOKEN_CLOCK => {
                        let fd = self.clock_fd.expect("only a clock_fd is registered so");
                        let mut origin = [0u8; 8];
                        // A short read (the writer gone) leaves the schedules unstarted.
                        if sys::read(fd, &mut origin)? == Some(origin.len()) {
                            let origin_ns = u64::from_le_bytes(origin);
                            for hop in self.paths.iter_mut().flat_map(|p| p.hops.iter_mut()) {
                                hop.start_clock(origin_ns);
                            }
                        }
                        epoll.remove(fd)?;
                    }
                    TOKEN_TIMER => {
                        timer.clear();
                        armed_ns = u64::MAX;
                    }
                    token => {
                        let dir = token as usize;
                        let batch_end = directions[dir].packets_in + READ_BATCH;
                        for _ in 0..READ_BATCH {
                            if directions[dir].packets_in >= batch_end {
                                break;
                            }
                            let Some(len) = sys::read(fds[dir], &mut read_buffer)? else {
                                break;
                            };
                            let arrival = sys::now_ns();
                            // The other direction's deliveries due by now go out first:
                            // a batch of reads one way (super-packets cut into segments,
                            // each offered and its own direction's writes made, or 64 ACKs)
                            // would otherwise hold up every write the other way.
                            advance!(1 - dir, arrival);
                            let stats = &mut directions[dir];
                            stats.reads += 1;
                            let path = &mut self.paths[dir];
                            let admitted =
                                intake(&read_buffer[..len], &mut pool, |pool, b, len| {
                                    stats.packets_in += 1;
                                    let ip_packet = &pool.buffers[b as usize][vnet::LEN..];
                                    let ip_packet = &ip_packet[..len as usize];
                                    let mut packet = Packet::new(b, len, ip::classify(ip_packet));
                                    packet.control = control_dscp.is_some()
                                        && ip::dscp(ip_packet) == control_dscp;
                                    path.offer(
                                        arrival,
                                        packet,
                                        &mut Sinks {
                                            log: &mut |hop, e, len| note(dir, hop, e, len),
                                            out: &mut |o| outcome(dir, o, pool, stats),
                                        },
                                    );
                                });
                            stats.refused += u64::from(!admitted);
                        }
                    }
                }
            }
        };
        let end_ns = sys::now_ns();
        if let Some(realtime) = self.realtime.as_mut() {
            realtime.finish(end_ns);
        }
        let [forward, reverse] = self.paths;
        Ok(Outcome {
            start_ns,
            end_ns,
            hops: [
                forward.hops.iter().map(|h| h.stats).collect(),
                reverse.hops.iter().map(|h| h.stats).collect(),
            ],
            directions,
            timing: lateness.report(),
            buffers: pool.buffers.len(),
            stopped_by,
            realtime: self.realtime,
        })
    }
}
