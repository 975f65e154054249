//! Linux's receive-buffer autotuning (`net.ipv4.tcp_moderate_rcvbuf = 1`), what the kernel
//! does with a receive buffer the application never sized (`rcvbuf = "auto"`: no
//! SO_RCVBUF, which would lock the buffer, `SOCK_RCVBUF_LOCK`). As Linux 6.18 has it
//! (net/ipv4/tcp_input.c, include/net/tcp.h):
//!
//! - the buffer `sk_rcvbuf` starts at `tcp_rmem[1]` and the window it offers is a share of
//!   it, `tcp_win_from_space`: the bytes × `scaling_ratio` / 256, the ratio of payload to
//!   memory (truesize) of the packets received, 50 % until the first full-sized segment
//!   measures it (`tcp_measure_rcv_mss`);
//! - the largest window (`window_clamp`) is that share of the whole buffer, less a segment
//!   (`tcp_init_buffer_space`); the initial window is the buffer's share in whole segments,
//!   at most 65,535 bytes or `initrwnd` segments (`tcp_select_initial_window`);
//! - once per receiver-measured RTT (`rcv_rtt_est`, from timestamps or the time one
//!   window takes to arrive), the bytes the application read in it (less those still
//!   queued) set `rcvq_space.space`; when it grew, the buffer becomes the memory for twice
//!   it, plus twice that again times its growth (`tcp_rcv_space_adjust` →
//!   `tcp_rcvbuf_grow`, as "tcp: fix too slow tcp_rcvbuf_grow() action" made it for 6.18:
//!   a sender in slow start doubles each round trip, and the measure is a round trip
//!   late), up to `tcp_rmem[2]`, and the window clamp follows. Data held out of order asks
//!   for its extent beyond that (`tcp_data_queue_ofo` → `tcp_rcvbuf_grow`).
//!
//! The receiver keeps offering windows from `rcv_ssthresh` as before (`tcp_grow_window`,
//! receiver.rs); only its ceiling, the window clamp, moves here.

use super::segment::timestamps_option_bytes;
use super::sender::{SKB_SHARED_INFO_TRUESIZE, SK_BUFF_TRUESIZE, TCP_MSS_DEFAULT};
use super::window_shift_for;
use crate::engine::Nanos;

/// net.ipv4.tcp_rmem on Linux 6.18 (its defaults since "tcp: increase tcp_rmem[2] to
/// 32 MB", 6.16): min, initial and largest receive buffer.
pub const TCP_RMEM: [u64; 3] = [4_096, 131_072, 33_554_432];
/// include/net/tcp.h TCP_RMEM_TO_WIN_SCALE: `scaling_ratio` is in 1/256ths.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// TCP_DEFAULT_SCALING_RATIO: "a 50 % default for skb->len/skb->truesize ratio".
const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// TCP_INIT_CWND: `tcp_init_buffer_space` measures the first round trip against ten
/// segments.
pub(crate) const TCP_INIT_CWND: u64 = 10;
/// SOCK_MIN_RCVBUF / 2 (`tcp_set_window_clamp`): the smallest window clamp.
const MIN_WINDOW_CLAMP: u64 = (2_048 + SK_BUFF_TRUESIZE) / 2;
/// IPv4 and TCP headers of a data segment without options.
const HEADERS: u64 = 40;
/// NET_SKB_PAD: the headroom `tun_alloc_skb` reserves in front of a packet written to a
/// TUN device (the emu backend's link emulator delivers through one).
const NET_SKB_PAD: u64 = 64;
/// SMP_CACHE_BYTES, to which SKB_DATA_ALIGN rounds.
const CACHE_LINE: u64 = 64;

/// The memory (truesize) of a received packet of `ip_len` bytes on the emu backend's
/// receive path: `tun_get_user` → `tun_alloc_skb` allocates the whole packet linear,
/// `alloc_skb(NET_SKB_PAD + len)`, whose head kmalloc rounds up to a power of two, and the
/// skb is charged that and its `struct sk_buff` (`SKB_TRUESIZE(SKB_WITH_OVERHEAD(ksize))`).
/// A 1500-byte packet: 2,304 bytes, so 1,448 bytes of payload give a ratio of 160/256.
fn rx_truesize(ip_len: u64) -> u64 {
    let head = (NET_SKB_PAD + ip_len).next_multiple_of(CACHE_LINE) + SKB_SHARED_INFO_TRUESIZE;
    head.next_power_of_two() + SK_BUFF_TRUESIZE
}

/// The window scale a receiver with autotuning asks for: `tcp_select_initial_window`
/// scales for the largest buffer it may grow to, `tcp_rmem[2]` (above net.core.rmem_max).
pub fn window_scale() -> u8 {
    window_shift_for(TCP_RMEM[2])
}

/// The window a SYN of an autotuning host offers for `payload_mss` (the MSS less the
/// timestamps option when it is used): `tcp_select_initial_window` on `tcp_rmem[1]` at the
/// default ratio, in whole segments, at most 65,535 bytes.
pub fn syn_window(payload_mss: u64) -> u64 {
    let space = win_from_space(DEFAULT_SCALING_RATIO, TCP_RMEM[1]);
    let whole = if space > payload_mss {
        space / payload_mss * payload_mss
    } else {
        space
    };
    whole.min(65_535)
}

/// include/net/tcp.h `__tcp_win_from_space`.
fn win_from_space(ratio: u64, space: u64) -> u64 {
    (space * ratio) >> RMEM_TO_WIN_SCALE
}

/// include/net/tcp.h `__tcp_space_from_win`, its inverse.
fn space_from_win(ratio: u64, win: u64) -> u64 {
    (win << RMEM_TO_WIN_SCALE) / ratio
}

/// One receiver's autotuned buffer and what its growth is measured with.
#[derive(Debug, Clone)]
pub(crate) struct AutoRcvBuf {
    /// `sk_rcvbuf`: memory, of which `scaling_ratio`/256 is window.
    sk_rcvbuf: u64,
    scaling_ratio: u64,
    /// The largest window offered (`tp->window_clamp`).
    window_clamp: u64,
    /// The payload of full segments (`tp->advmss` less the timestamps option).
    advmss: u64,
    /// `icsk_ack.rcv_mss`: the segment size the receiver has seen; a segment of at least
    /// this size gives an RTT sample, one of a new size measures the ratio again.
    rcv_mss: u64,
    /// The timestamps option is in use: 12 more bytes per packet.
    timestamps: bool,
    /// `rcvq_space`: the bytes read in the last measured round trip, the read position
    /// (`copied_seq`) and time at which the current one began (None until the handshake
    /// completes on a passive open).
    space: u64,
    space_seq: u64,
    space_time: Option<Nanos>,
    /// `rcv_rtt_est.rtt_us` (µs × 8; 0 before the first sample), and for the measurement
    /// without timestamps the sequence that ends the current window and when it began.
    rtt_us8: u64,
    rtt_seq: u64,
    rtt_time: Option<Nanos>,
    /// `rcv_rtt_last_tsecr`: each echoed timestamp gives one sample.
    last_tsecr: Option<u32>,
    /// `tp->tcp_mstamp`: when the last segment arrived, the clock `tcp_rcv_space_adjust`
    /// reads (it does not refresh it for a read).
    now: Nanos,
}

impl AutoRcvBuf {
    pub fn new() -> Self {
        Self {
            sk_rcvbuf: TCP_RMEM[1],
            scaling_ratio: DEFAULT_SCALING_RATIO,
            window_clamp: 0,
            advmss: 0,
            rcv_mss: 0,
            timestamps: false,
            space: 0,
            space_seq: 0,
            space_time: None,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
            now: 0,
        }
    }

    /// The connection is set up with `advmss` bytes of payload per full segment; returns
    /// (the initial window, its largest window). `tcp_select_initial_window` offers the
    /// buffer's share in whole segments, at most 65,535 bytes and `initial_rwnd` segments
    /// (the route's initrwnd); `tcp_init_buffer_space` clamps the window to that share of
    /// the whole buffer less one segment (`tcp_app_win` = 31 reserves nothing more), and
    /// measures the first round trip against the initial window, at most ten segments
    /// (`rcvq_space.space`); `tcp_initialize_rcv_mss` starts `rcv_mss` at 536 bytes. The
    /// first measure starts at `started` (the SYN-ACK's arrival, `tcp_finish_connect`), or
    /// on a passive open (None) with the segment that completes the handshake
    /// (`tcp_rcv_state_process`), here the first data segment.
    pub fn establish(
        &mut self,
        started: Option<Nanos>,
        advmss: u64,
        timestamps: bool,
        initial_rwnd: Option<u64>,
    ) -> (u64, u64) {
        self.advmss = advmss;
        self.timestamps = timestamps;
        let maxwin = self.full_space();
        let mut rcv_wnd = syn_window(advmss);
        if let Some(segments) = initial_rwnd {
            rcv_wnd = rcv_wnd.min(segments * advmss);
        }
        self.window_clamp = if maxwin > 2 * advmss {
            (maxwin - advmss).max(2 * advmss)
        } else {
            maxwin
        };
        self.rcv_mss = advmss.min(rcv_wnd / 2).clamp(88, TCP_MSS_DEFAULT);
        self.space = rcv_wnd.min(self.window_clamp).min(TCP_INIT_CWND * advmss);
        self.space_time = started;
        (rcv_wnd, self.window_clamp)
    }

    /// `tcp_full_space`: the window the whole buffer would hold.
    fn full_space(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.sk_rcvbuf)
    }

    /// A data segment arrived (`DataArrival`): it may time a round trip and measure the
    /// ratio of payload to memory; `queued` tells whether
    /// data waits for the application (a larger sample is then not taken). Returns the
    /// window clamp's new value when it moved: the handshake of a passive open completed
    /// with this segment (`tcp_init_buffer_space`'s clamp takes effect), or it measured a
    /// new ratio.
    pub fn on_data(&mut self, seg: DataArrival) -> Option<u64> {
        self.now = seg.now;
        let completes_handshake = self.space_time.is_none();
        self.space_time.get_or_insert(seg.now);
        if let Some(tsecr) = seg.tsecr {
            // tcp_rcv_rtt_measure_ts: the echo of our own timestamp times a round trip.
            if self.last_tsecr != Some(tsecr) {
                self.last_tsecr = Some(tsecr);
                let elapsed_ms = u64::from(super::timestamp_clock(seg.now).wrapping_sub(tsecr));
                if seg.len >= self.rcv_mss && elapsed_ms > 0 && elapsed_ms < 1 << 31 {
                    self.rtt_sample(elapsed_ms * 1_000, false, seg.queued);
                }
            }
        }
        // tcp_event_data_recv, for the next expected data only.
        if !seg.in_order {
            return completes_handshake.then_some(self.window_clamp);
        }
        let measured = self.measure_rcv_mss(seg.len);
        self.measure_rtt_per_window(seg.now, seg.rcv_nxt, seg.rcv_wnd, seg.queued);
        measured.or(completes_handshake.then_some(self.window_clamp))
    }

    /// The window the whole initial buffer holds (`tcp_full_space`), what a SYN-ACK may
    /// offer before `tcp_init_buffer_space` clamps it.
    pub fn initial_space(&self) -> u64 {
        self.full_space()
    }

    /// `tcp_measure_rcv_mss`: a full-sized segment of a new size measures the ratio of
    /// payload to memory; when it changed, the window clamp becomes the buffer's new
    /// share (`tcp_set_window_clamp`), and the first round trip's measure no more than it.
    /// Returns the new clamp if it changed.
    fn measure_rcv_mss(&mut self, len: u64) -> Option<u64> {
        if len < self.rcv_mss {
            return None;
        }
        let mut changed = None;
        if len != self.rcv_mss {
            let options = timestamps_option_bytes(self.timestamps);
            let truesize = rx_truesize(len + HEADERS + options);
            let ratio = ((len << RMEM_TO_WIN_SCALE) / truesize).max(1);
            if ratio != self.scaling_ratio {
                self.scaling_ratio = ratio;
                let clamp = self.full_space().max(MIN_WINDOW_CLAMP);
                if clamp != self.window_clamp {
                    self.window_clamp = clamp;
                    changed = Some(clamp);
                }
                self.space = self.space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
        changed
    }

    /// `tcp_rcv_rtt_measure`, without timestamps: the time one window of data takes to
    /// arrive, from when it was offered; only ever lowers the estimate.
    fn measure_rtt_per_window(&mut self, now: Nanos, rcv_nxt: u64, rcv_wnd: u64, queued: bool) {
        if let Some(since) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let us = ((now - since) / 1_000).max(1);
            self.rtt_sample(us, true, queued);
        }
        self.rtt_seq = rcv_nxt + rcv_wnd;
        self.rtt_time = Some(now);
    }

    /// `tcp_rcv_rtt_update`: a smaller sample replaces the estimate; a larger one is
    /// averaged in (7/8 old) only from timestamps and only while nothing waits unread.
    fn rtt_sample(&mut self, us: u64, per_window: bool, queued: bool) {
        let m = us << 3;
        if self.rtt_us8 == 0 || m < self.rtt_us8 {
            self.rtt_us8 = m;
        } else if !per_window && !queued {
            self.rtt_us8 = self.rtt_us8 - (self.rtt_us8 >> 3) + us;
        }
    }

    /// The receiver's estimate of the round trip (µs), 0 before the first sample.
    pub fn rtt_us(&self) -> u64 {
        self.rtt_us8 >> 3
    }

    /// `tcp_rcv_space_adjust`, after the application read: `copied_seq` is the stream
    /// position it has read to, `inq` what it has not read yet. Once a measured round
    /// trip has passed since the last measure, the bytes read in it (less `inq`) that
    /// exceed the last measure grow the buffer. Returns the new window clamp if it grew.
    pub fn on_read(&mut self, copied_seq: u64, inq: u64) -> Option<u64> {
        let rtt_us = self.rtt_us();
        let since = self.space_time?;
        if rtt_us == 0 || self.now - since < rtt_us * 1_000 {
            return None;
        }
        let copied = (copied_seq - self.space_seq).saturating_sub(inq);
        let grown = if copied > self.space {
            self.grow(copied, 0)
        } else {
            None
        };
        self.space_seq = copied_seq;
        self.space_time = Some(self.now);
        grown
    }

    /// `tcp_data_queue_ofo` → `tcp_rcvbuf_grow`: data held out of order `beyond` bytes past
    /// `rcv_nxt` must fit too. Returns the new window clamp if the buffer grew.
    pub fn on_out_of_order(&mut self, beyond: u64) -> Option<u64> {
        self.grow(self.space, beyond)
    }

    /// `tcp_rcvbuf_grow(sk, newval)`: the measure becomes `newval`; the window needed is
    /// twice it ("DRS is always one RTT late"), plus twice (that times the measure's
    /// relative growth, rounded down: a sender in slow start doubling), plus what is held
    /// out of order;
    /// the buffer becomes its memory at the measured ratio, up to `tcp_rmem[2]`, and the
    /// window clamp follows the buffer.
    fn grow(&mut self, newval: u64, out_of_order: u64) -> Option<u64> {
        let oldval = std::mem::replace(&mut self.space, newval).max(1);
        let doubled = 2 * newval;
        let grow = doubled * (newval - oldval.min(newval)) / oldval;
        let rcvwin = doubled + 2 * grow + out_of_order;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(TCP_RMEM[2]);
        if rcvbuf <= self.sk_rcvbuf {
            return None;
        }
        self.sk_rcvbuf = rcvbuf;
        self.window_clamp = self.full_space();
        Some(self.window_clamp)
    }

    /// `sk_rcvbuf` now.
    #[cfg(test)]
    pub fn sk_rcvbuf(&self) -> u64 {
        self.sk_rcvbuf
    }
}

/// What `AutoRcvBuf::on_data` learns from one data segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataArrival {
    pub now: Nanos,
    pub len: u64,
    pub tsecr: Option<u32>,
    /// The segment was the next expected (`tcp_event_data_recv` runs for those).
    pub in_order: bool,
    pub rcv_nxt: u64,
    pub rcv_wnd: u64,
    pub queued: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::BufferSize;

    const MS: Nanos = 1_000_000;
    const MSS: u64 = 1448;

    fn arrival(now: Nanos, len: u64, tsecr: Option<u32>) -> DataArrival {
        DataArrival {
            now,
            len,
            tsecr,
            in_order: true,
            rcv_nxt: 0,
            // A window no data here completes: only timestamps time the round trip.
            rcv_wnd: 1 << 40,
            queued: false,
        }
    }

    fn established() -> AutoRcvBuf {
        let mut b = AutoRcvBuf::new();
        b.establish(Some(0), MSS, true, None);
        b
    }

    #[test]
    fn a_full_sized_packet_on_the_tun_device_is_charged_2304_bytes() {
        // tun_alloc_skb: alloc_skb(64 + 1500) → a 2,048-byte kmalloc head, 1,728 usable,
        // + struct sk_buff (256) and skb_shared_info (320).
        assert_eq!(rx_truesize(1500), 2_304);
        assert_eq!(rx_truesize(1000), 2_304);
        assert_eq!(rx_truesize(100), 512 + 256);
    }

    #[test]
    fn the_initial_window_is_half_of_tcp_rmem_1_in_whole_segments_scaled_for_tcp_rmem_2() {
        // tcp_select_initial_window: 65,536 B at the default ratio → 45 × 1448; window
        // scale ilog2(32 MiB) − 15 = 10.
        assert_eq!(syn_window(MSS), 45 * MSS);
        assert_eq!(window_scale(), 10);
        // tcp_init_buffer_space: the clamp keeps one segment in reserve; the first round
        // trip is measured against ten segments.
        let mut b = AutoRcvBuf::new();
        assert_eq!(
            b.establish(Some(0), MSS, true, None),
            (45 * MSS, 65_536 - MSS)
        );
        assert_eq!(b.space, 10 * MSS);
        assert_eq!(b.rcv_mss, 536);
        // With initrwnd 10 (the linux profile's initial_rwnd), ten segments.
        let mut b = AutoRcvBuf::new();
        assert_eq!(b.establish(Some(0), MSS, true, Some(10)).0, 10 * MSS);
    }

    #[test]
    fn the_first_full_segment_measures_the_ratio_and_moves_the_clamp() {
        // tcp_measure_rcv_mss: 1448 × 256 / 2304 = 160; window_clamp = 131,072 × 160/256.
        let mut b = established();
        assert_eq!(b.on_data(arrival(MS, MSS, None)), Some(81_920));
        assert_eq!((b.scaling_ratio, b.rcv_mss), (160, MSS));
        // The same size again measures nothing.
        assert_eq!(b.on_data(arrival(2 * MS, MSS, None)), None);
        // Without timestamps 1460 B per 1500-byte packet: 162.
        let mut b = AutoRcvBuf::new();
        b.establish(Some(0), 1460, false, None);
        b.on_data(arrival(MS, 1460, None));
        assert_eq!(b.scaling_ratio, 162);
    }

    #[test]
    fn timestamps_give_the_receiver_its_round_trip_once_per_echo() {
        // tcp_rcv_rtt_measure_ts: now − TSecr in ms; a repeated TSecr gives nothing; a
        // larger sample is averaged in at 1/8, a smaller replaces the estimate.
        let mut b = established();
        b.on_data(arrival(100 * MS, MSS, Some(0)));
        assert_eq!(b.rtt_us(), 100_000);
        b.on_data(arrival(300 * MS, MSS, Some(0)));
        assert_eq!(b.rtt_us(), 100_000);
        b.on_data(arrival(300 * MS, MSS, Some(100)));
        assert_eq!(b.rtt_us8, 800_000 - 100_000 + 200_000);
        b.on_data(arrival(350 * MS, MSS, Some(300)));
        assert_eq!(b.rtt_us(), 50_000);
        // A segment shorter than rcv_mss gives no sample.
        b.on_data(arrival(400 * MS, 100, Some(360)));
        assert_eq!(b.rtt_us(), 50_000);
    }

    #[test]
    fn without_timestamps_the_round_trip_is_the_time_one_window_takes() {
        // tcp_rcv_rtt_measure: from the window's offer until rcv_nxt passes its end; only
        // smaller samples count.
        let mut b = AutoRcvBuf::new();
        b.establish(Some(0), 1460, false, None);
        let at = |now, rcv_nxt| DataArrival {
            tsecr: None,
            rcv_nxt,
            rcv_wnd: 14_600,
            ..arrival(now, 1460, None)
        };
        b.on_data(at(10 * MS, 1460));
        b.on_data(at(30 * MS, 14_600));
        assert_eq!(b.rtt_us(), 0);
        b.on_data(at(50 * MS, 16_060));
        assert_eq!(b.rtt_us(), 40_000);
        b.on_data(at(150 * MS, 40_000));
        assert_eq!(b.rtt_us(), 40_000);
    }

    #[test]
    fn each_round_trip_the_buffer_grows_to_hold_twice_what_was_read_and_its_growth() {
        // tcp_rcv_space_adjust → tcp_rcvbuf_grow: rcvwin = 2 × copied, + 2 × rcvwin ×
        // (copied − space) / space; sk_rcvbuf = rcvwin × 256 / ratio, window_clamp = its
        // share again.
        let mut b = AutoRcvBuf::new();
        // A passive open: the first measure starts with the first data segment.
        b.establish(None, MSS, true, None);
        b.on_data(arrival(50 * MS, MSS, None));
        b.on_data(arrival(100 * MS, MSS, Some(0)));
        // Less than a round trip (100 ms) since the start: nothing yet.
        assert_eq!(b.on_read(40 * MSS, 0), None);
        b.on_data(arrival(151 * MS, MSS, Some(51)));
        let copied = 100 * MSS;
        let clamp = b.on_read(copied, 0).unwrap();
        // Ten times the first round trip's ten segments: 2 × 100 + 2 × (200 × 90 / 10).
        let rcvwin = 200 * MSS + 3_600 * MSS;
        assert_eq!(b.sk_rcvbuf(), rcvwin * 256 / 160);
        assert_eq!(clamp, b.sk_rcvbuf() * 160 / 256);
        assert_eq!(b.space, copied);
        // The next round trip read less: the measure stays, the buffer too.
        b.on_data(arrival(300 * MS, MSS, Some(2)));
        assert_eq!(b.on_read(copied + 50 * MSS, 0), None);
        assert_eq!(b.space, copied);
    }

    #[test]
    fn bytes_still_unread_do_not_count_as_read() {
        // "tcp: add receive queue awareness in tcp_rcv_space_adjust()": copied −= inq.
        let mut b = established();
        b.on_data(arrival(100 * MS, MSS, Some(0)));
        b.on_data(arrival(201 * MS, MSS, Some(1)));
        assert_eq!(b.on_read(30 * MSS, 25 * MSS), None);
        assert_eq!(b.space, 10 * MSS);
    }

    #[test]
    fn the_buffer_grows_as_this_kernels_tcp_rcvbuf_grow_tracepoint_showed() {
        // /sys/kernel/tracing/events/tcp/tcp_rcvbuf_grow on this machine (6.18), the
        // receiver of 20 Mb/s, 250 ms, no timestamps (1460-byte segments, ratio 162): each
        // line's (copied, space) and the next line's rcvbuf and window_clamp.
        let mut b = AutoRcvBuf::new();
        b.establish(Some(0), 1460, false, Some(10));
        b.on_data(arrival(MS, 1460, None));
        assert_eq!(
            (b.scaling_ratio, b.space, b.window_clamp),
            (162, 14_600, 82_944)
        );
        let kernel = [
            (16_060, 131_072, 82_944),
            (29_200, 243_297, 153_961),
            (58_400, 553_718, 350_399),
            (116_800, 1_107_437, 700_799),
            (232_616, 2_193_155, 1_387_855),
            (467_200, 4_454_731, 2_819_009),
            (610_280, 4_454_731, 2_819_009),
        ];
        for (copied, rcvbuf, clamp) in kernel {
            b.grow(copied, 0);
            assert_eq!(
                (b.sk_rcvbuf, b.window_clamp),
                (rcvbuf, clamp),
                "copied {copied}"
            );
        }
    }

    #[test]
    fn a_measure_that_doubled_asks_for_six_times_it() {
        // The numbers of the patch's trace: newval 86,016 after 49,152 at ratio 219 →
        // rcvwin 2 × 86,016 + 4 × 86,016 × 36,864 / 49,152 = 430,080.
        let mut b = established();
        b.scaling_ratio = 219;
        b.space = 49_152;
        b.grow(86_016, 0);
        assert_eq!(b.sk_rcvbuf, 430_080 * 256 / 219);
        assert_eq!(b.window_clamp, 430_079);
    }

    #[test]
    fn the_buffer_stops_at_tcp_rmem_2() {
        let mut b = established();
        b.on_data(arrival(MS, MSS, None));
        assert_eq!(b.grow(40 << 20, 0), Some(TCP_RMEM[2] * 160 / 256));
        assert_eq!(b.grow(40 << 20, 0), None);
    }

    #[test]
    fn a_receiver_offers_more_than_the_initial_buffer_after_a_round_trip_of_reads() {
        // The whole chain in the receiver: a SYN-ACK scaled by 10 offering the initial
        // buffer's window; the first segment (timing 100 ms from the SYN-ACK's echo)
        // raises the clamp to 81,920 B; a round trip later the 40 segments read in it
        // make sk_rcvbuf hold 2 × 40 segments, and the offer grows past 81,920 B.
        use crate::tcp::{Auto, EcnMode, Receiver, ReceiverConfig, Segment, Timestamps};
        let mut r = Receiver::new(ReceiverConfig {
            mss: 1460,
            rcvbuf: BufferSize::Auto(Auto::Auto),
            window_scaling: true,
            sack: true,
            timestamps: true,
            delayed_ack: false,
            delack_timeout_ns: 40 * MS,
            quickack: false,
            dsack: false,
            initial_rwnd: None,
            ecn: EcnMode::Off,
        });
        let ts = |val, ecr| Some(Timestamps { val, ecr });
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(7),
                timestamps: ts(1, 0),
                ..Segment::default()
            },
        );
        let mut out = Vec::new();
        r.poll(0, &mut out);
        // The SYN-ACK offers the whole initial window (the kernel's 65,160 B); the clamp of
        // 64,088 B applies once the handshake completes.
        assert_eq!((out[0].wscale_option, out[0].window), (Some(10), 65_160));
        let mut seq = 0;
        let mut deliver = |r: &mut Receiver, now: Nanos, ecr: u32| {
            let seg = Segment {
                timestamps: ts(2, ecr),
                ..Segment::data(seq, MSS as u32, 0, 0)
            };
            seq += MSS;
            r.on_segment(now, &seg);
            r.read(u64::MAX);
            r.poll(now, &mut Vec::new());
        };
        deliver(&mut r, 100 * MS, 0);
        // The measured ratio raised the clamp to 81,920 B and kept rcv_ssthresh at the
        // window offered (tcp_set_window_clamp); it grew by two segments, offered in whole
        // units of 1,024 B.
        assert_eq!(
            r.advertised_window(),
            (65_160 + 2 * MSS).div_ceil(1024) * 1024
        );
        for _ in 0..40 {
            deliver(&mut r, 201 * MS, 100);
        }
        assert_eq!(r.advertised_window(), 81_920);
        deliver(&mut r, 302 * MS, 201);
        deliver(&mut r, 302 * MS, 201);
        assert!(r.advertised_window() > 81_920);
    }

    #[test]
    fn data_held_out_of_order_asks_for_its_extent_too() {
        // tcp_data_queue_ofo → tcp_rcvbuf_grow(sk, space): the measure stays, so rcvwin =
        // 2 × space + (ooo end − rcv_nxt).
        let mut b = established();
        b.on_data(arrival(MS, MSS, None));
        assert_eq!(b.on_out_of_order(30 * MSS), None, "fits 131,072 B");
        let clamp = b.on_out_of_order(200 * MSS).unwrap();
        assert_eq!(b.sk_rcvbuf(), (20 * MSS + 200 * MSS) * 256 / 160);
        assert_eq!(clamp, b.sk_rcvbuf() * 160 / 256);
    }
}
