//! A flow: one TCP connection between two hosts and the application running over it. A
//! flow a PEP splits runs as several of these, one per segment, whose ends at the PEP are
//! its relay (crate::pep).
//!
//! Side 0 is the client, which opens the connection; side 1 the server. A one-way transfer
//! (bulk, file, message) has a sender and a writing application at the client and a
//! receiver and a reading application at the server. A request/response flow carries data
//! both ways, so each side has both, and each side's data segments carry its receiver's
//! acknowledgements (piggybacking).

use crate::engine::{Nanos, RngStream};
use crate::host::{Reader, Writer};
use crate::media::MediaStream;
use crate::metrics::LimitClock;
use crate::plan::{AppKind, FlowPlan, TcpPlan, Transport};
use crate::tcp::{Receiver, ReceiverConfig, Sender, SenderConfig};

/// Wake-up bookkeeping for a timer: stale wake-ups are harmless (the owner checks its own
/// deadline), so an event is scheduled only when the deadline moves earlier.
#[derive(Default)]
pub struct Wake(Option<Nanos>);

impl Wake {
    pub fn needs(&mut self, deadline: Option<Nanos>) -> Option<Nanos> {
        let d = deadline?;
        if self.0.is_some_and(|w| w <= d) {
            return None;
        }
        self.0 = Some(d);
        Some(d)
    }

    pub fn fired(&mut self, now: Nanos) {
        if self.0 == Some(now) {
            self.0 = None;
        }
    }
}

pub struct Side {
    pub host: usize,
    /// Boxed, as is the receiver: a side's own fields, which every turn reads, then share
    /// a few lines, and the flow table stays small (a thousand connections' kilobytes of
    /// TCP state between them pushed the sides' fields out of the caches).
    pub tx: Option<Box<Sender>>,
    pub rx: Option<Box<Receiver>>,
    pub writer: Option<Writer>,
    pub reader: Option<Reader>,
    /// The sender has sent its SYN.
    pub connected: bool,
    /// A system call of the writing (reading) application is queued or running.
    pub writing: bool,
    pub reading: bool,
    pub tx_wake: Wake,
    pub rx_wake: Wake,
    pub app_wake: Wake,
}

impl Side {
    /// The reading application's call (with its storage write, if any) returned.
    pub fn read_returned(&mut self, now: Nanos) {
        self.reading = false;
        if let Some(reader) = &mut self.reader {
            reader.returned(now);
        }
    }
}

/// Request/response bookkeeping (netperf TCP_RR): the client writes a request, the server
/// answers once it has read all of it, and a transaction ends when the client has read
/// the whole response.
pub struct Transactions {
    pub request: u64,
    pub response: u64,
    pub served: u64,
    /// When the transaction under way began: the first when the connection opened, as
    /// netperf times only what follows its connect(); each next one when the last ended.
    pub began: Option<Nanos>,
    pub latencies: Vec<Nanos>,
}

pub struct Flow {
    /// The scenario's flow this connection carries: a PEP splits one flow into several
    /// connections (segments), numbered from the flow's source.
    pub flow: usize,
    pub segment: usize,
    /// The PEP relay this connection's receiving application writes into (it ends at a
    /// PEP), and the one that writes into its sender (it starts at a PEP).
    pub feeds: Option<usize>,
    pub fed_by: Option<usize>,
    pub kind: AppKind,
    pub hosts: [usize; 2],
    /// Channels from side 0 to side 1, and back.
    pub routes: [Vec<usize>; 2],
    pub sides: [Side; 2],
    pub start_ns: Nanos,
    pub after: Option<usize>,
    pub started_at: Option<Nanos>,
    /// The file or message size: the flow is done when its receiver has all of it.
    pub bytes: Option<u64>,
    /// Application bytes the receiving side is done with (read, and stored if it stores).
    pub delivered: u64,
    pub done_at: Option<Nanos>,
    pub limits: LimitClock,
    pub rr: Option<Transactions>,
    /// The media stream a media flow carries; over UDP the flow has no TCP at all.
    pub media: Vec<MediaStream>,
    /// The client opens with the three-way handshake (its `tcp.handshake`).
    pub handshake: bool,
}

/// The sending side of connection `name` ("flows.F.S.client" or ".server": flow F's
/// segment S), with its own random stream.
fn sender(tcp: &TcpPlan, seed: u64, name: &str) -> Box<Sender> {
    Box::new(Sender::new(SenderConfig {
        cc: tcp.cc.clone(),
        cubic_variant: tcp.cubic_variant,
        reno_variant: tcp.reno_variant,
        mss: tcp.mss,
        sndbuf: tcp.sndbuf,
        sndbuf_accounting: tcp.sndbuf_accounting,
        rcvbuf: tcp.rcvbuf,
        initial_window: tcp.initial_window,
        window_scaling: tcp.window_scaling,
        sack: tcp.sack,
        timestamps: tcp.timestamps,
        abc: tcp.abc,
        hystart: tcp.hystart,
        hystart_variant: tcp.hystart_variant,
        nagle: tcp.nagle,
        nagle_variant: tcp.nagle_variant,
        fast_retransmit: tcp.fast_retransmit,
        min_rto_ns: tcp.min_rto_ns,
        rto_form: tcp.rto_form,
        cwnd_validation: tcp.cwnd_validation,
        loss_recovery: tcp.loss_recovery,
        slow_start_after_idle: tcp.slow_start_after_idle,
        frto: tcp.frto,
        undo: tcp.undo,
        gso: tcp.gso,
        ecn: tcp.ecn,
        rng: RngStream::new(seed, &format!("{name}.cc")),
    }))
}

fn receiver(tcp: &TcpPlan) -> Box<Receiver> {
    Box::new(Receiver::new(ReceiverConfig {
        mss: tcp.mss,
        rcvbuf: tcp.rcvbuf,
        window_scaling: tcp.window_scaling,
        sack: tcp.sack,
        timestamps: tcp.timestamps,
        delayed_ack: tcp.delayed_ack,
        delack_timeout_ns: tcp.delack_timeout_ns,
        quickack: tcp.quickack,
        dsack: tcp.dsack,
        initial_rwnd: tcp.initial_rwnd,
        ecn: tcp.ecn,
    }))
}

/// When scenario flow `flow` opens (unless it waits `after` another): its start plus a
/// draw from [0, `start_jitter_ns`) from the stream `flows.<flow>.start_jitter`.
pub(crate) fn opening_ns(flow: usize, plan: &FlowPlan, seed: u64) -> Nanos {
    let jitter = plan.start_jitter_ns;
    if jitter == 0 {
        return plan.start_ns;
    }
    let mut rng = RngStream::new(seed, &format!("flows.{flow}.start_jitter"));
    plan.start_ns + ((rng.uniform() * jitter as f64) as Nanos).min(jitter - 1)
}

/// `from`'s sender and `to`'s receiver agree on their options as `Flow::open_established`
/// says; a direction without data (no sender there) stays closed.
fn open_direction(from: &mut Side, to: &mut Side, now: Nanos) {
    if let (Some(tx), Some(rx)) = (&mut from.tx, &mut to.rx) {
        from.connected = true;
        rx.on_segment(now, &tx.syn(now));
        tx.open_established(&rx.hand_over_syn_ack(now));
    }
}

fn side(host: usize) -> Side {
    Side {
        host,
        tx: None,
        rx: None,
        writer: None,
        reader: None,
        connected: false,
        writing: false,
        reading: false,
        tx_wake: Wake::default(),
        rx_wake: Wake::default(),
        app_wake: Wake::default(),
    }
}

impl Flow {
    /// Flow `flow` of the scenario, or one segment of it, between `plan.src` and `plan.dst`
    /// whose TCP settings are `tcp`.
    pub fn new(
        flow: usize,
        segment: usize,
        plan: &FlowPlan,
        tcp: [&TcpPlan; 2],
        routes: [Vec<usize>; 2],
        seed: u64,
    ) -> Self {
        let app = &plan.app;
        let (mut client, mut server) = (side(plan.src), side(plan.dst));
        let media: Vec<MediaStream> = match app.kind {
            AppKind::Media => app
                .streams
                .iter()
                .map(|s| MediaStream::new(s, seed))
                .collect(),
            _ => Vec::new(),
        };
        if media.iter().all(|m| m.transport == Transport::Tcp) {
            client.tx = Some(sender(
                tcp[0],
                seed,
                &format!("flows.{flow}.{segment}.client"),
            ));
            server.rx = Some(receiver(tcp[1]));
            server.reader = Some(Reader::new(app.read_size, app.read_delay_ns));
        }
        let mut rr = None;
        match app.kind {
            AppKind::Rr => {
                let request = app.request_size.unwrap_or(1);
                let response = app.response_size.unwrap_or(1);
                client.writer = Some(Writer::new(request, Some(request), 0));
                client.rx = Some(receiver(tcp[0]));
                client.reader = Some(Reader::new(app.read_size, 0));
                server.tx = Some(sender(
                    tcp[1],
                    seed,
                    &format!("flows.{flow}.{segment}.server"),
                ));
                server.writer = Some(Writer::new(response, Some(0), 0));
                rr = Some(Transactions {
                    request,
                    response,
                    served: 0,
                    began: None,
                    latencies: Vec::new(),
                });
            }
            AppKind::Media => {
                if client.tx.is_some() {
                    // Nothing to write until a message falls due.
                    client.writer = Some(Writer::new(app.message_size, Some(0), 0));
                }
            }
            AppKind::Bulk | AppKind::File | AppKind::Message => {
                client.writer = Some(Writer::new(app.message_size, app.bytes, app.write_delay_ns));
            }
        }
        Self {
            flow,
            segment,
            feeds: None,
            fed_by: None,
            kind: app.kind,
            hosts: [plan.src, plan.dst],
            routes,
            sides: [client, server],
            start_ns: opening_ns(flow, plan, seed),
            after: plan.after,
            started_at: None,
            bytes: app.bytes,
            delivered: 0,
            done_at: None,
            limits: LimitClock::default(),
            rr,
            media,
            handshake: tcp[0].handshake,
        }
    }

    /// Opens every direction that carries data without a handshake: each sender's SYN is
    /// handed to the peer's receiver and the SYN-ACK back, so MSS, window scaling,
    /// SACK-permitted and timestamps are agreed from both hosts' settings as a handshake
    /// would, but nothing crosses the path.
    pub fn open_established(&mut self, now: Nanos) {
        let [a, b] = &mut self.sides;
        open_direction(a, b, now);
        open_direction(b, a, now);
    }

    /// The receiving application writes what it reads to storage (a file or message saved
    /// on arrival, as seed 003's PDA saves a voice message to flash).
    pub fn stores(&self) -> bool {
        matches!(self.kind, AppKind::File | AppKind::Message)
    }

    /// The client's sender, whose state the trace and the limit clock follow.
    pub fn sender(&self) -> &Sender {
        self.tcp().expect("a TCP flow's client sends")
    }

    /// The client's TCP sender; None for a UDP media flow.
    pub fn tcp(&self) -> Option<&Sender> {
        self.sides[0].tx.as_deref()
    }

    /// Both directions' senders, for the counters.
    pub fn senders(&self) -> impl Iterator<Item = &Sender> {
        self.sides.iter().filter_map(|s| s.tx.as_deref())
    }

    pub fn receivers(&self) -> impl Iterator<Item = &Receiver> {
        self.sides.iter().filter_map(|s| s.rx.as_deref())
    }

    pub fn written(&self) -> u64 {
        self.sides
            .iter()
            .filter_map(|s| s.writer.as_ref())
            .map(Writer::written)
            .sum()
    }

    /// The client's connection is open at `now`: the first transaction begins, or the
    /// media streams start; returns each starting stream and when its first message is due.
    pub fn opened(&mut self, now: Nanos) -> Vec<(usize, Nanos)> {
        let open = self.sender().is_established();
        if let Some(t) = self.rr.as_mut().filter(|t| open && t.began.is_none()) {
            t.began = Some(now);
        }
        if !open {
            return Vec::new();
        }
        self.media
            .iter_mut()
            .enumerate()
            .filter_map(|(k, m)| Some((k, m.start(now)?)))
            .collect()
    }

    /// Side `side`'s application finished with `n` more bytes at `now`. Returns whether a
    /// sized flow just completed; moves request/response transactions on.
    pub fn consumed(&mut self, side: usize, n: u64, now: Nanos) -> bool {
        self.delivered += n;
        if let Some(t) = &mut self.rr {
            let read = self.sides[side].reader.as_ref().map_or(0, Reader::read);
            if side == 1 {
                // The server answers each request it has read in full.
                while read >= (t.served + 1) * t.request {
                    t.served += 1;
                    if let Some(w) = &mut self.sides[1].writer {
                        w.release(t.response);
                    }
                }
            } else if read >= (t.latencies.len() as u64 + 1) * t.response {
                t.latencies.push(now - t.began.unwrap_or(now));
                t.began = Some(now);
                if let Some(w) = &mut self.sides[0].writer {
                    w.release(t.request);
                }
            }
            return false;
        }
        for m in &mut self.media {
            m.read_to(self.delivered, now);
        }
        if self.done_at.is_none() && self.bytes.is_some_and(|b| self.delivered >= b) {
            self.done_at = Some(now);
            return true;
        }
        false
    }
}
