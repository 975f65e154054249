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
        if let Some(at) = self.flows[f].media.as_mut().and_then(|m| m.start(now)) {
            self.media_due(f, at);
        }
    }

    /// Flow `f`'s next message falls due at `at`, if that is within the run.
    pub(super) fn media_due(&mut self, f: usize, at: Nanos) {
        if at < self.plan.duration_ns {
            self.events.schedule(at, Event::MediaSend(f));
        }
    }

    /// A message of flow `f` falls due: the application sends it (or, blocked and skipping,
    /// drops it).
    pub(super) fn media_send(&mut self, f: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let blocked = flow.sides[0].writer.as_ref().is_some_and(|w| w.has_more());
        let Some(stream) = &mut flow.media else {
            return;
        };
        let message = stream.fall_due(now, blocked);
        let (transport, next) = (stream.transport, stream.next_due());
        if let Some(at) = next {
            self.media_due(f, at);
        }
        let Some(message) = message else {
            return;
        };
        match transport {
            Transport::Tcp => {
                if let Some(writer) = &mut self.flows[f].sides[0].writer {
                    writer.release_message(message.bytes);
                }
                self.activity(f, 0, Vec::new());
            }
            Transport::Udp => self.media_datagram(f, message),
        }
    }

    /// Flow `f`'s message goes out as one UDP datagram, in fragments above the MTU.
    fn media_datagram(&mut self, f: usize, message: Message) {
        let host = self.flows[f].sides[0].host;
        let mtu = self.plan.hosts[host].tcp.mss + TCP_IP_HEADERS;
        let pieces = fragments(message.bytes, mtu);
        if let Some(stream) = &mut self.flows[f].media {
            stream.sent_as(message.seq, pieces.len() as u32);
        }
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
            self.send(host, packet);
        }
    }

    /// A UDP fragment of flow `f` reached its receiving host; the message it completes is
    /// delivered to the application.
    pub(super) fn media_fragment(&mut self, f: usize, udp: Udp) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let Some(stream) = &mut flow.media else {
            return;
        };
        if let Some(bytes) = stream.fragment_arrived(udp.message, now) {
            flow.delivered += bytes;
            self.series.add(now, bytes);
        }
    }
}
