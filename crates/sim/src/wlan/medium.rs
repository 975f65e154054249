//! One shared 802.11b channel: an access point and its stations, every one a DCF station
//! with its own transmit queue, contending for the air (IEEE 802.11-1999 §9.2, basic
//! access without RTS/CTS). Every station hears every other; there are no hidden nodes.
//!
//! The medium is either idle, with each contender's start time known from its backoff, or
//! busy with one exchange (a frame, SIFS and its ACK) or a collision. Only the instants
//! where that changes are events: the start of the earliest contender's transmission and
//! the end of the busy period; slots are counted arithmetically in between.

use super::dcf::{Dcf, Failure};
use super::phy::{Phy, ACK_BYTES, DIFS_NS, EIFS_NS, SIFS_NS};
use crate::engine::Nanos;
use crate::net::{ChannelStats, DropTail, ErrorProcess, Framing, PacketRef, Packets, Queued};
use crate::plan::QueuePlan;

/// What one direction of a wlan link carried, for the link's result row.
#[derive(Debug, Default, Clone, Copy)]
pub struct PathStats {
    /// Data frame attempts (`packets`, `wire_bytes`), frames discarded at the retry limit
    /// (`drops_error`), and the airtime of the data frames and link-layer ACKs sent this way
    /// (`busy_ns`).
    pub channel: ChannelStats,
    /// Attempts that failed and were tried again.
    pub retries: u64,
    /// Attempts that overlapped another station's.
    pub collisions: u64,
}

/// One direction of a wlan link: from the access point to a station, or back.
pub struct Path {
    pub from: usize,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub framing: Framing,
    pub errors: ErrorProcess,
    pub stats: PathStats,
}

/// A packet waiting in a station's queue, with the path it is to take.
pub struct Frame {
    pub packet: PacketRef,
    pub path: usize,
}

impl Queued for Frame {
    fn ip_bytes(&self) -> u64 {
        u64::from(self.packet.ip_bytes)
    }
}

/// The frame a station's DCF is trying to send.
struct Head {
    /// None once the receiver has it but its ACK was lost: the retransmission is a
    /// duplicate the receiver discards (§9.2.9), so it only costs air.
    packet: Option<PacketRef>,
    path: usize,
    bytes: u64,
    /// When it reached the head of the queue.
    since: Nanos,
    /// When its latest attempt ended.
    ended: Nanos,
}

pub struct Station {
    pub dcf: Dcf,
    queue: DropTail<Frame>,
    head: Option<Head>,
}

impl Station {
    pub fn new(dcf: Dcf, queue: QueuePlan) -> Self {
        Self {
            dcf,
            queue: DropTail::new(queue),
            head: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The frame and its ACK arrived.
    Acked,
    /// The frame or its ACK was corrupted.
    Lost,
    /// Two or more stations' backoffs ended in the same slot.
    Collision,
}

enum State {
    Idle,
    Busy { until: Nanos, outcome: Outcome },
}

/// A data frame the receiver got: the packet, when it arrives, and the path it took.
pub struct Delivery {
    pub packet: PacketRef,
    pub at: Nanos,
    pub path: usize,
}

pub struct Medium {
    phy: Phy,
    retry_limit: u32,
    /// Station 0 is the access point.
    stations: Vec<Station>,
    pub paths: Vec<Path>,
    state: State,
    /// The stations whose transmissions make up the current busy period.
    sending: Vec<usize>,
}

impl Medium {
    pub fn new(phy: Phy, retry_limit: u32, stations: Vec<Station>, paths: Vec<Path>) -> Self {
        let n = stations.len();
        Self {
            phy,
            retry_limit,
            stations,
            paths,
            state: State::Idle,
            sending: Vec::with_capacity(n),
        }
    }

    /// A packet to send along `path` reaches its sending station's MAC; one its queue
    /// drops goes back to `packets`.
    pub fn offer(&mut self, now: Nanos, path: usize, packet: PacketRef, packets: &mut Packets) {
        let from = self.paths[path].from;
        let busy = matches!(self.state, State::Busy { .. });
        let station = &mut self.stations[from];
        if station.head.is_none() {
            let bytes = self.paths[path]
                .framing
                .wire_bytes(u64::from(packet.ip_bytes));
            station.head = Some(Head {
                packet: Some(packet),
                path,
                bytes,
                since: now,
                ended: now,
            });
            if busy {
                station.dcf.found_busy();
            }
            return;
        }
        let stats = &mut self.paths[path].stats.channel;
        if let Err(dropped) = station.queue.push(Frame { packet, path }) {
            stats.drops_queue += 1;
            packets.remove(dropped.packet.id);
        }
        stats.max_queue_bytes = stats.max_queue_bytes.max(station.queue.bytes());
    }

    /// When something next happens on the medium: the busy period ends, or the earliest
    /// contender starts sending.
    pub fn deadline(&self) -> Option<Nanos> {
        match self.state {
            State::Busy { until, .. } => Some(until),
            State::Idle => self
                .stations
                .iter()
                .filter_map(|s| s.head.as_ref().map(|h| s.dcf.ready_at(h.since)))
                .min(),
        }
    }

    /// Carries out what is due at `now`; returns a data frame that reached its receiver.
    /// A frame dropped at the retry limit goes back to `packets`.
    pub fn advance(&mut self, now: Nanos, packets: &mut Packets) -> Option<Delivery> {
        match self.state {
            State::Busy { until, outcome } if until <= now => {
                self.finish(until, outcome, packets);
                None
            }
            State::Idle if self.deadline() == Some(now) => self.start(now),
            _ => None,
        }
    }

    /// Every station whose backoff ends now transmits; the rest freeze their counters.
    fn start(&mut self, now: Nanos) -> Option<Delivery> {
        self.sending.clear();
        for (i, s) in self.stations.iter_mut().enumerate() {
            match &s.head {
                Some(h) if s.dcf.ready_at(h.since) == now => {
                    s.dcf.transmit();
                    self.sending.push(i);
                }
                head => s.dcf.freeze(now, head.is_some()),
            }
        }
        if let [only] = self.sending[..] {
            return self.exchange(now, only);
        }
        let mut until = now;
        for k in 0..self.sending.len() {
            let (path, end) = self.send_head(now, self.sending[k]);
            self.paths[path].stats.collisions += 1;
            until = until.max(end);
        }
        self.state = State::Busy {
            until,
            outcome: Outcome::Collision,
        };
        None
    }

    /// One station alone sends its frame; the receiver answers SIFS later with an ACK
    /// (§9.2.8) unless the frame was corrupted.
    fn exchange(&mut self, now: Nanos, sender: usize) -> Option<Delivery> {
        self.send_head(now, sender);
        let head = self.stations[sender]
            .head
            .as_mut()
            .expect("senders have a frame");
        let path = &mut self.paths[head.path];
        if path.errors.corrupts(head.bytes) {
            self.state = State::Busy {
                until: head.ended,
                outcome: Outcome::Lost,
            };
            return None;
        }
        let delivery = head.packet.take().map(|packet| Delivery {
            packet,
            at: head.ended + path.delay_ns,
            path: head.path,
        });
        let ack_air = self.phy.ack_ns(path.rate_bps);
        // Paths come in pairs, so the ACK goes back along the partner path.
        let back = &mut self.paths[head.path ^ 1];
        back.stats.channel.busy_ns += ack_air;
        let outcome = if back.errors.corrupts(ACK_BYTES) {
            Outcome::Lost
        } else {
            Outcome::Acked
        };
        self.state = State::Busy {
            until: head.ended + SIFS_NS + ack_air,
            outcome,
        };
        delivery
    }

    /// Station `i`'s head frame goes on the air at `now`. Returns its path and when it ends.
    fn send_head(&mut self, now: Nanos, i: usize) -> (usize, Nanos) {
        let head = self.stations[i]
            .head
            .as_mut()
            .expect("senders have a frame");
        let path = &mut self.paths[head.path];
        let air = self.phy.frame_ns(head.bytes, path.rate_bps);
        record(&mut path.stats.channel, head.bytes, air);
        head.ended = now + air;
        (head.path, head.ended)
    }

    /// The busy period ends at `end`: senders learn their fate, and everyone waits DIFS
    /// before counting slots again, or EIFS after hearing a corrupted frame (§9.2.3.4).
    fn finish(&mut self, end: Nanos, outcome: Outcome, packets: &mut Packets) {
        self.state = State::Idle;
        let wait = if outcome == Outcome::Acked {
            DIFS_NS
        } else {
            EIFS_NS
        };
        for (i, s) in self.stations.iter_mut().enumerate() {
            if !self.sending.contains(&i) {
                s.dcf.resume(end + wait);
                continue;
            }
            let head = s.head.as_ref().expect("senders keep their frame until now");
            let path = &mut self.paths[head.path];
            let next = if outcome == Outcome::Acked {
                s.dcf.succeeded();
                s.dcf.resume(end + DIFS_NS);
                true
            } else {
                // The sender waits out its ACK timeout, then backs off (§9.2.5.2).
                let timeout = head.ended + self.phy.ack_timeout_ns(path.rate_bps);
                s.dcf.resume(timeout.max(end + DIFS_NS));
                match s.dcf.failed(self.retry_limit) {
                    Failure::Retry => {
                        path.stats.retries += 1;
                        false
                    }
                    Failure::Dropped => {
                        path.stats.channel.drops_error += 1;
                        if let Some(lost) = head.packet {
                            packets.remove(lost.id);
                        }
                        true
                    }
                }
            };
            if next {
                s.head = s.queue.pop().map(|f| Head {
                    bytes: self.paths[f.path]
                        .framing
                        .wire_bytes(u64::from(f.packet.ip_bytes)),
                    packet: Some(f.packet),
                    path: f.path,
                    since: end,
                    ended: end,
                });
            }
        }
        self.sending.clear();
    }
}

fn record(stats: &mut ChannelStats, bytes: u64, air: Nanos) {
    stats.packets += 1;
    stats.wire_bytes += bytes;
    stats.busy_ns += air;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStream;
    use crate::net::Packet;
    use crate::plan::{ErrorPlan, FramingPlan, Preamble};
    use crate::tcp::Segment;
    use crate::wlan::phy::{CW_MIN, SLOT_NS};

    const RATE: u64 = 11_000_000;
    /// A 1500-byte IP packet in a 1536-byte MPDU: 192 µs of PLCP + 1117.091 µs.
    const DATA_NS: Nanos = 1_309_091;
    const ACK_NS: Nanos = 248_000;

    /// An AP (station 0) and one station; path 0 goes down to it, path 1 up.
    fn medium(down: ErrorPlan, up: ErrorPlan) -> Medium {
        let station =
            |name: &str| Station::new(Dcf::new(RngStream::new(1, name)), QueuePlan::Packets(10));
        let path = |from, error, name: &str| Path {
            from,
            rate_bps: RATE,
            delay_ns: 1_000,
            framing: FramingPlan {
                overhead_bytes: 36,
                min_payload_bytes: 0,
            }
            .into(),
            errors: ErrorProcess::new(error, RngStream::new(1, name)),
            stats: PathStats::default(),
        };
        Medium::new(
            Phy::new(Preamble::Long, 2_000_000),
            7,
            vec![station("ap"), station("sta")],
            vec![path(0, down, "down"), path(1, up, "up")],
        )
    }

    fn packet(packets: &mut Packets) -> PacketRef {
        packets.insert(Packet {
            flow: 0,
            route: 0,
            hop: 0,
            segment: Segment::data(0, 1460, 0, 0),
            piggyback: None,
            udp: None,
        })
    }

    /// Runs the medium until nothing is due; returns the deliveries.
    fn drain(m: &mut Medium, packets: &mut Packets) -> Vec<Delivery> {
        let mut got = Vec::new();
        while let Some(at) = m.deadline() {
            got.extend(m.advance(at, packets));
        }
        got
    }

    #[test]
    fn a_frame_is_acknowledged_sifs_after_it_ends_and_the_next_waits_difs_and_a_backoff() {
        // IEEE 802.11-1999 §9.2.5.1: the medium has been idle for DIFS, so the frame goes at
        // once; §9.2.8: the ACK follows SIFS after it; §9.2.5.2: the sender then backs off.
        let mut m = medium(ErrorPlan::None, ErrorPlan::None);
        let mut pk = Packets::default();
        m.stations[1].dcf.resume(DIFS_NS);
        m.offer(1_000_000, 1, packet(&mut pk), &mut pk);
        m.offer(1_000_000, 1, packet(&mut pk), &mut pk);
        assert_eq!(m.deadline(), Some(1_000_000));
        let d = m.advance(1_000_000, &mut pk).expect("delivered");
        assert_eq!(d.at, 1_000_000 + DATA_NS + 1_000);
        let end = 1_000_000 + DATA_NS + SIFS_NS + ACK_NS;
        assert_eq!(m.deadline(), Some(end));
        assert!(m.advance(end, &mut pk).is_none());
        let next = m.deadline().unwrap();
        assert!(next >= end + DIFS_NS && next <= end + DIFS_NS + u64::from(CW_MIN) * SLOT_NS);
        assert_eq!((next - end - DIFS_NS) % SLOT_NS, 0, "whole idle slots");
        assert_eq!(m.paths[1].stats.channel.packets, 1);
        assert_eq!(
            m.paths[0].stats.channel.busy_ns, ACK_NS,
            "the ACK's airtime"
        );
    }

    #[test]
    fn backoffs_ending_in_the_same_slot_collide_and_both_windows_double() {
        // §9.2.5.2: two stations whose backoff reaches zero in the same slot both transmit;
        // neither gets an ACK, each doubles its CW and tries again.
        let mut m = medium(ErrorPlan::None, ErrorPlan::None);
        let mut pk = Packets::default();
        for s in &mut m.stations {
            s.dcf.set_backoff(3);
        }
        m.offer(0, 0, packet(&mut pk), &mut pk);
        m.offer(0, 1, packet(&mut pk), &mut pk);
        assert_eq!(m.deadline(), Some(3 * SLOT_NS));
        assert!(
            m.advance(3 * SLOT_NS, &mut pk).is_none(),
            "nothing is delivered"
        );
        let end = 3 * SLOT_NS + DATA_NS;
        assert_eq!(m.deadline(), Some(end));
        m.advance(end, &mut pk);
        for (s, path) in [(0, 0), (1, 1)] {
            assert_eq!(m.stations[s].dcf.cw(), 63);
            assert_eq!(m.paths[path].stats.collisions, 1);
            assert_eq!(m.paths[path].stats.retries, 1);
        }
        // Each sender waits out its ACK timeout before counting slots again.
        let timeout = end + SIFS_NS + ACK_NS + SLOT_NS;
        assert!(m.deadline().unwrap() >= timeout);
        assert_eq!(
            drain(&mut m, &mut pk).len(),
            2,
            "both frames get through in the end"
        );
    }

    #[test]
    fn a_frame_is_discarded_after_the_retry_limit() {
        // §9.2.4: a frame that fails dot11ShortRetryLimit (7) attempts is discarded.
        let mut m = medium(ErrorPlan::None, ErrorPlan::Loss { p: 1.0 });
        let mut pk = Packets::default();
        m.offer(0, 1, packet(&mut pk), &mut pk);
        assert!(drain(&mut m, &mut pk).is_empty());
        let stats = m.paths[1].stats;
        assert_eq!(stats.channel.packets, 7);
        assert_eq!(stats.retries, 6);
        assert_eq!(stats.channel.drops_error, 1);
        assert_eq!(pk.in_flight(), 0, "the discarded frame's packet is freed");
        assert_eq!(m.stations[1].dcf.cw(), CW_MIN, "reset for the next frame");
    }

    #[test]
    fn others_wait_eifs_after_a_corrupted_frame() {
        // §9.2.3.4: a station that received a frame in error waits EIFS, not DIFS, before
        // it counts its backoff down again.
        let mut m = medium(ErrorPlan::None, ErrorPlan::Loss { p: 1.0 });
        let mut pk = Packets::default();
        m.stations[0].dcf.set_backoff(5);
        m.offer(0, 1, packet(&mut pk), &mut pk);
        m.offer(0, 0, packet(&mut pk), &mut pk);
        assert_eq!(m.deadline(), Some(0), "the station goes at once");
        m.advance(0, &mut pk);
        m.advance(DATA_NS, &mut pk);
        // The AP counted nothing while the medium was busy and resumes EIFS after it.
        assert_eq!(
            m.stations[0].dcf.ready_at(0),
            DATA_NS + EIFS_NS + 5 * SLOT_NS
        );
    }

    #[test]
    fn a_frame_whose_ack_was_lost_is_sent_again_but_delivered_once() {
        // §9.2.8: without the ACK the sender retransmits; §9.2.9: the receiver discards the
        // duplicate (same sequence number), so the packet goes up once.
        let mut m = medium(ErrorPlan::Loss { p: 1.0 }, ErrorPlan::None);
        let mut pk = Packets::default();
        m.offer(0, 1, packet(&mut pk), &mut pk);
        assert_eq!(drain(&mut m, &mut pk).len(), 1);
        assert_eq!(m.paths[1].stats.channel.packets, 7);
        assert_eq!(m.paths[1].stats.channel.drops_error, 1);
    }

    #[test]
    fn the_access_point_queue_is_shared_and_drops_when_full() {
        let mut m = medium(ErrorPlan::None, ErrorPlan::None);
        let mut pk = Packets::default();
        // One frame at the head and ten queued fill the AP; the twelfth is dropped.
        for _ in 0..12 {
            m.offer(0, 0, packet(&mut pk), &mut pk);
        }
        assert_eq!(m.paths[0].stats.channel.drops_queue, 1);
        assert_eq!(pk.in_flight(), 11, "the dropped packet is freed");
        assert_eq!(drain(&mut m, &mut pk).len(), 11);
    }
}
