//! The event loop's side of media streams (docs/models/media.md): messages fall due on the
//! stream's schedule; over TCP the application writes each into the connection, over UDP
//! it goes out at once as one datagram (fragmented to the sending host's MTU), and a lost
//! fragment loses the message.

use super::{Event, Simulation};
use crate::engine::Nanos;
use crate::media::{fragments, Message};
use crate::net::{Packet, Udp};
use crate::plan::Transport;
use crate::tcp::Segment;

/// IPv4 and TCP headers without options: the host's MTU is its MSS plus these
/// (RFC 9293 §3.7.1).
const TCP_IP_HEADERS: u32 = 40;

impl Simulation {
    /// A UDP media flow starts: no handshake, its stream can send at once.
    pub(super) fn media_start(&mut self, f: usize) {
        let now = self.now;
        for k in 0..self.flows[f].media.len() {
            if let Some(at) = self.flows[f].media[k].start(now) {
                self.media_due(f, k, at);
            }
        }
    }

    /// Stream `k` of flow `f` has its next message due at `at`, if that is within the run.
    pub(super) fn media_due(&mut self, f: usize, k: usize, at: Nanos) {
        if at < self.plan.duration_ns {
            self.events
                .schedule(at, Event::MediaSend(f as u32, k as u32));
        }
    }

    /// A message of stream `k` of flow `f` falls due: the application sends it (or, blocked
    /// and skipping, drops it). Over a shared connection a stream is blocked by whatever
    /// any stream left unwritten.
    pub(super) fn media_send(&mut self, f: usize, k: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let blocked = flow.sides[0].writer.as_ref().is_some_and(|w| w.has_more());
        let stream = &mut flow.media[k];
        let message = stream.fall_due(now, blocked);
        let (transport, next) = (stream.transport, stream.next_due());
        if let Some(at) = next {
            self.media_due(f, k, at);
        }
        let Some(message) = message else {
            return;
        };
        match transport {
            Transport::Tcp => {
                let flow = &mut self.flows[f];
                if let Some(writer) = &mut flow.sides[0].writer {
                    let end = writer.release_message(message.bytes);
                    flow.media[k].written_to(end);
                }
                self.activity(f, 0, Vec::new());
            }
            Transport::Udp => self.media_datagram(f, k, message),
        }
    }

    /// Stream `k` of flow `f` sends its message as one UDP datagram, in fragments above
    /// the MTU.
    fn media_datagram(&mut self, f: usize, k: usize, message: Message) {
        let host = self.flows[f].sides[0].host;
        let mtu = self.plan.hosts[host].tcp.mss + TCP_IP_HEADERS;
        let pieces = fragments(message.bytes, mtu);
        self.flows[f].media[k].sent_as(message.seq, pieces.len() as u32);
        for len in pieces {
            let udp = Udp {
                message: message.seq,
                len,
            };
            let packet = Packet {
                flow: f,
                route: 0,
                hop: 0,
                segment: Segment::default(),
                piggyback: None,
                udp: Some(udp),
            };
            self.send_packet(host, packet);
        }
    }

    /// A UDP fragment of flow `f` reached its receiving host; the message it completes is
    /// delivered to the application. A UDP flow carries one stream.
    pub(super) fn media_fragment(&mut self, f: usize, udp: Udp) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let Some(stream) = flow.media.first_mut() else {
            return;
        };
        if let Some(bytes) = stream.fragment_arrived(udp.message, now) {
            flow.delivered += bytes;
            self.series.add(now, bytes);
        }
    }
}
