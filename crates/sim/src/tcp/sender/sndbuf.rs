//! The send buffer: what it charges for the data written and not yet acknowledged, how
//! much a write() may put in, and when a writer that found it full is woken.
//!
//! `Payload` is the socket buffer as BSD-derived stacks and the source papers describe it:
//! at most `sndbuf` bytes written and unacknowledged, and a writer goes on as soon as any
//! byte is free. `Linux` is the kernel's accounting (net/ipv4/tcp.c `tcp_sendmsg_locked`,
//! net/core/stream.c, include/net/sock.h): `SO_SNDBUF` is doubled into `sk_sndbuf`, every
//! skb is charged its truesize (payload plus the head's overhead) to `sk_wmem_queued`, a
//! write starts a new skb only while `sk_wmem_queued < sk_sndbuf` and fills it up to the
//! size goal, acknowledged bytes are freed as they are trimmed and an skb's overhead when
//! the whole skb is acknowledged, and a writer that found no room is woken only once the
//! free space is at least half of what is queued (a third of the buffer free).
//!
//! A buffer the application never sized (`sndbuf = "auto"`, no SO_SNDBUF) is Linux's
//! autotuned one: `sk_sndbuf` starts at `tcp_wmem[1]`, is set at connection setup to
//! the memory for twice the initial window of worst-case skbs (`tcp_init_buffer_space` →
//! `tcp_sndbuf_expand`), and grows to that for the current cwnd whenever an ACK finds a
//! writer waiting for room while the window is not full (`tcp_check_space` →
//! `tcp_new_space`), up to `tcp_wmem[2]`.

use std::collections::VecDeque;

use serde::Deserialize;

use super::tso::GSO_MAX_SIZE;
use crate::tcp::rcvbuf::TCP_INIT_CWND;
use crate::tcp::BufferSize;

/// What the send buffer's size limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SndbufAccounting {
    /// At most `sndbuf` bytes of data written and unacknowledged.
    #[default]
    Payload,
    /// Linux's skb memory against twice `sndbuf`, with its writer wake-up.
    Linux,
}

/// SKB_DATA_ALIGN(sizeof(struct sk_buff)) on this machine's kernel (6.18, x86-64).
pub(crate) const SK_BUFF_TRUESIZE: u64 = 256;
/// SKB_DATA_ALIGN(sizeof(struct skb_shared_info)).
pub(crate) const SKB_SHARED_INFO_TRUESIZE: u64 = 320;
/// include/net/tcp.h MAX_TCP_HEADER, L1_CACHE_ALIGN(128 + MAX_HEADER): the room an skb
/// keeps for headers; with the two sizes above, what the measured head below implies.
const MAX_TCP_HEADER: u64 = 256;
/// The truesize of an skb beyond its payload on this machine's kernel: the head that
/// `tcp_stream_alloc_skb` allocates for the headers (`SKB_TRUESIZE(skb_end_offset(skb))`,
/// i.e. MAX_TCP_HEADER, `struct sk_buff` and `struct skb_shared_info`, each cache-aligned).
/// It depends on the kernel's configuration; measured on 6.18 with `ss -tm` (skmem `w`):
/// a 12-byte write into an empty write queue charges 844 bytes, and each further skb of
/// 1448 bytes 2280 (docs/models/tcp.md).
pub const SKB_HEAD_TRUESIZE: u64 = MAX_TCP_HEADER + SK_BUFF_TRUESIZE + SKB_SHARED_INFO_TRUESIZE;
/// net.ipv4.tcp_wmem on Linux 6.18: min, initial and largest autotuned send buffer.
pub const TCP_WMEM: [u64; 3] = [4_096, 16_384, 4_194_304];
/// include/net/sock.h SOCK_MIN_SNDBUF: 2 × (2048 + the aligned `struct sk_buff`), the
/// smallest `sk_sndbuf` that `SO_SNDBUF` sets (getsockopt returns 4608 for 1 to 2304).
pub const SOCK_MIN_SNDBUF: u64 = 4_608;
/// include/net/tcp.h TCP_MSS_DEFAULT: below this largest window the size goal is not
/// halved (`tcp_bound_to_half_wnd`); the receiver's first guess of the peer's segments.
pub(crate) const TCP_MSS_DEFAULT: u64 = 536;

#[derive(Debug, Clone)]
pub(crate) struct SendBuffer {
    accounting: SndbufAccounting,
    /// `sndbuf` (Payload) or `sk_sndbuf` (Linux): the limit on what is charged.
    limit: u64,
    /// Linux: where each skb that transmission has reached ends, oldest first; the first
    /// starts at `snd_una`. The skbs after them are in `unsent`.
    skb_ends: VecDeque<u64>,
    /// Linux: the skbs written beyond `skb_ends`, as runs of equal size: a bulk writer's
    /// buffer holds thousands of skbs of one size goal (tens of thousands while the first
    /// window is small), which as single records would fill the caches and a good part of
    /// memory when a thousand connections keep one each. An skb moves into `skb_ends`
    /// when transmission reaches it.
    unsent: VecDeque<SkbRun>,
    /// The skbs in `unsent`.
    unsent_skbs: u64,
    /// Linux: an index into `skb_ends` with every skb before it ending below the next new
    /// segment: new data leaves in order, so a send looks at one or two skbs instead of
    /// searching them all.
    next: usize,
    /// Linux: segments of the skb being transmitted that have left since its last split.
    burst: u64,
    /// Linux's SOCK_NOSPACE: a write found no room, and the writer sleeps until woken.
    nospace: bool,
    /// `limit` is Linux's autotuned `sk_sndbuf` (no SO_SNDBUF).
    autotuned: bool,
}

/// `count` consecutive skbs of `size` bytes each, the last ending at `end`.
#[derive(Debug, Clone, Copy)]
struct SkbRun {
    end: u64,
    size: u64,
    count: u64,
}

impl SkbRun {
    fn first_end(&self) -> u64 {
        self.end - (self.count - 1) * self.size
    }
}

/// What the sender knows that the buffer's rules need.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seqs {
    pub snd_una: u64,
    /// One past the highest byte ever sent: skbs before it are in the retransmission
    /// queue and take no more data.
    pub snd_max: u64,
    /// One past the last byte written.
    pub written: u64,
}

impl SendBuffer {
    /// Linux `sk_setsockopt` SO_SNDBUF(FORCE): `sk_sndbuf = max(2 × value, SOCK_MIN_SNDBUF)`.
    /// tcplab sets the buffer as the emu backend does, with SO_SNDBUFFORCE, which
    /// `net.core.wmem_max` does not clamp. Left to autotuning (Linux accounting only, as
    /// the plan checks), `sk_sndbuf` starts at `tcp_wmem[1]` (`tcp_init_sock`).
    pub fn new(accounting: SndbufAccounting, sndbuf: BufferSize) -> Self {
        let limit = match (accounting, sndbuf) {
            (_, BufferSize::Auto(_)) => TCP_WMEM[1],
            (SndbufAccounting::Payload, BufferSize::Bytes(bytes)) => bytes,
            (SndbufAccounting::Linux, BufferSize::Bytes(bytes)) => (2 * bytes).max(SOCK_MIN_SNDBUF),
        };
        Self {
            autotuned: sndbuf.is_auto(),
            accounting,
            limit,
            skb_ends: VecDeque::new(),
            unsent: VecDeque::new(),
            unsent_skbs: 0,
            next: 0,
            burst: 0,
            nospace: false,
        }
    }

    /// Whether the buffer is Linux's, which keeps track of its skbs.
    pub fn counts_skbs(&self) -> bool {
        self.accounting == SndbufAccounting::Linux
    }

    /// `sk_wmem_queued`: the payload written and unacknowledged (charged per byte copied,
    /// `skb_copy_to_page_nocache`, freed per byte trimmed, `tcp_trim_head`) and each
    /// skb's head (`tcp_skb_entail`, freed with the skb).
    pub fn charged(&self, s: Seqs) -> u64 {
        let payload = s.written - s.snd_una;
        if self.counts_skbs() {
            payload + SKB_HEAD_TRUESIZE * (self.skb_ends.len() as u64 + self.unsent_skbs)
        } else {
            payload
        }
    }

    /// Bytes of the last skb that a write may still add to it: it takes data while it is
    /// unsent and shorter than the size goal (`tcp_sendmsg_locked`).
    fn tail_room(&self, s: Seqs, size_goal: u64) -> u64 {
        let Some((start, end)) = self.last_skb(s) else {
            return 0;
        };
        if start < s.snd_max {
            return 0;
        }
        size_goal.saturating_sub(end - start)
    }

    /// Where the last skb starts and ends; the first skb starts at `snd_una`.
    fn last_skb(&self, s: Seqs) -> Option<(u64, u64)> {
        let mut ends = self.skb_ends.iter().rev().copied();
        let end = match self.unsent.back() {
            Some(run) if run.count > 1 => return Some((run.end - run.size, run.end)),
            Some(run) => {
                let before = self.unsent.len().checked_sub(2).map(|i| self.unsent[i].end);
                return Some((before.or(ends.next()).unwrap_or(s.snd_una), run.end));
            }
            None => ends.next()?,
        };
        Some((ends.next().unwrap_or(s.snd_una), end))
    }

    /// Bytes a write() can put into the buffer now; none while a writer that found it full
    /// waits to be woken. Linux: the room left in the last skb, then whole skbs of the
    /// size goal, each begun only while the charge is below `sk_sndbuf`
    /// (`sk_stream_memory_free`), so the charge may end up to an skb above it.
    pub fn space(&self, s: Seqs, size_goal: u64) -> u64 {
        if self.nospace {
            return 0;
        }
        if !self.counts_skbs() {
            return self.limit.saturating_sub(self.charged(s));
        }
        let tail = self.tail_room(s, size_goal);
        let charged = self.charged(s) + tail;
        let per_skb = size_goal + SKB_HEAD_TRUESIZE;
        tail + self.limit.saturating_sub(charged).div_ceil(per_skb) * size_goal
    }

    /// The application wrote `bytes` (at most `space`); Linux appends them to the last skb
    /// while it takes data, then to new skbs of at most the size goal.
    pub fn write(&mut self, s: Seqs, bytes: u64, size_goal: u64) {
        if !self.counts_skbs() || bytes == 0 {
            return;
        }
        let tail = self.tail_room(s, size_goal).min(bytes);
        if tail > 0 {
            self.grow_last_skb(tail);
        }
        let goal = size_goal.max(1);
        let rest = bytes - tail;
        let part = rest % goal;
        self.push_skbs(s.written + tail, goal, rest / goal);
        if part > 0 {
            self.push_skbs(s.written + bytes - part, part, 1);
        }
    }

    /// `count` new skbs of `size` bytes after the last, which ends at `start`.
    fn push_skbs(&mut self, start: u64, size: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.unsent_skbs += count;
        let end = start + count * size;
        match self.unsent.back_mut() {
            Some(run) if run.size == size => {
                run.end = end;
                run.count += count;
            }
            _ => self.unsent.push_back(SkbRun { end, size, count }),
        }
    }

    /// The last skb takes `bytes` more.
    fn grow_last_skb(&mut self, bytes: u64) {
        let Some(run) = self.unsent.pop_back() else {
            if let Some(end) = self.skb_ends.back_mut() {
                *end += bytes;
            }
            return;
        };
        self.unsent_skbs -= run.count;
        if run.count > 1 {
            self.push_skbs(run.first_end() - run.size, run.size, run.count - 1);
        }
        self.push_skbs(run.end - run.size, run.size + bytes, 1);
    }

    /// Linux `tcp_sndbuf_expand` on an autotuned buffer: `sk_sndbuf` grows to `sndmem`
    /// (`expansion`), never beyond `tcp_wmem[2]` and never shrinking. At connection setup
    /// (`tcp_init_buffer_space`).
    pub fn expand(&mut self, sndmem: u64) {
        if self.autotuned {
            self.limit = self.limit.max(sndmem.min(TCP_WMEM[2]));
        }
    }

    /// Linux `tcp_check_space` → `tcp_new_space` after an ACK: the buffer grows only while
    /// a writer waits for room (SOCK_NOSPACE) and the window is not full
    /// (`tcp_should_expand_sndbuf`: packets in flight below cwnd), which the caller knows.
    pub fn expand_for_waiting_writer(&mut self, sndmem: u64) {
        if self.nospace {
            self.expand(sndmem);
        }
    }

    /// A write found no room: the writer sleeps (`sk_stream_wait_memory`, or poll() after
    /// EAGAIN) with SOCK_NOSPACE set. A Payload buffer wakes it at the first free byte.
    pub fn wait_for_space(&mut self) {
        self.nospace = self.counts_skbs();
    }

    /// The cumulative ACK reached `s.snd_una`: skbs wholly acknowledged are freed
    /// (`tcp_clean_rtx_queue`), and a sleeping writer is woken once the free space is at
    /// least half of the charge (`tcp_check_space` → `sk_stream_write_space`:
    /// `sk_stream_wspace >= sk_stream_min_wspace`).
    pub fn acked(&mut self, s: Seqs) {
        while self.skb_ends.front().is_some_and(|&end| end <= s.snd_una) {
            self.skb_ends.pop_front();
            self.next = self.next.saturating_sub(1);
        }
        if self.skb_ends.is_empty() {
            while let Some(run) = self.unsent.front_mut() {
                let first = run.first_end();
                if first > s.snd_una {
                    break;
                }
                let freed = ((s.snd_una - first) / run.size + 1).min(run.count);
                run.count -= freed;
                self.unsent_skbs -= freed;
                if run.count > 0 {
                    break;
                }
                self.unsent.pop_front();
            }
        }
        if self.nospace {
            let charged = self.charged(s);
            self.nospace = self.limit.saturating_sub(charged) < charged / 2;
        }
    }

    /// A segment of new data ending at `end` left. Linux transmits at most `tso_segs`
    /// segments of an skb at once and splits the rest off into a new skb, charged its
    /// own head (`tcp_write_xmit` → `tso_fragment`). For a buffer that `counts_skbs`.
    pub fn sent(&mut self, end: u64, tso_segs: u64) {
        self.burst += 1;
        let i = self.first_ending_from(end);
        if self.skb_ends.get(i) == Some(&end) {
            self.burst = 0;
        } else if self.burst >= tso_segs {
            self.split(end);
        }
    }

    /// The window stopped a transmission at `end`: Linux sent the skb's head up to the
    /// window and split the rest off (`tcp_mss_split_point`, `tso_fragment`).
    pub fn window_stops(&mut self, end: u64) {
        if self.burst > 0 {
            self.split(end);
        }
    }

    fn split(&mut self, at: u64) {
        self.burst = 0;
        let i = self.first_ending_from(at + 1);
        if i < self.skb_ends.len() {
            self.skb_ends.insert(i, at);
            if i <= self.next {
                self.next += 1;
            }
        }
    }

    /// The index in `skb_ends` of the first skb ending at or after `seq`, which is moved
    /// there from `unsent` if it was not yet; `skb_ends.len()` if there is none. Found from
    /// `next` forward when every skb before it ends below `seq` (a send of new data), else
    /// searched for (a window stop behind the highest byte sent, after a timeout).
    fn first_ending_from(&mut self, seq: u64) -> usize {
        while self.skb_ends.back().is_none_or(|&end| end < seq) {
            let Some(run) = self.unsent.front_mut() else {
                break;
            };
            self.skb_ends.push_back(run.first_end());
            run.count -= 1;
            self.unsent_skbs -= 1;
            if run.count == 0 {
                self.unsent.pop_front();
            }
        }
        let mut i = self.next.min(self.skb_ends.len());
        if i > 0 && self.skb_ends[i - 1] >= seq {
            return self.skb_ends.partition_point(|&end| end < seq);
        }
        while self.skb_ends.get(i).is_some_and(|&end| end < seq) {
            i += 1;
        }
        self.next = i;
        i
    }
}

/// Linux `tcp_sndbuf_expand`: the send buffer for `factor` windows of `cwnd_segments` (at
/// least TCP_INIT_CWND) in the worst case, each segment an skb of its own whose head
/// holds `mss_clamp` bytes, the largest segment negotiated, with MAX_TCP_HEADER and the
/// shared info, rounded up to a power of two by kmalloc, plus its `struct sk_buff`.
/// `factor` is the congestion control's `sndbuf_expand`: 2 ("Cubic needs 1.7 factor,
/// rounded to 2"), BBR's 3 (`bbr_sndbuf_expand`). Linux also takes at least
/// `tp->reordering + 1` segments, 4 unless reordering was seen, which the floor of ten
/// covers; tcplab keeps no such count.
pub(crate) fn expansion(mss_clamp: u64, cwnd_segments: u64, factor: u64) -> u64 {
    let per_mss = (mss_clamp + MAX_TCP_HEADER + SKB_SHARED_INFO_TRUESIZE).next_power_of_two()
        + SK_BUFF_TRUESIZE;
    factor * cwnd_segments.max(TCP_INIT_CWND) * per_mss
}

/// Linux `tcp_xmit_size_goal`: the payload a write puts in one skb. With GSO, as many
/// whole segments as fit in `sk_gso_max_size` and half the largest window the peer
/// offered (`tcp_bound_to_half_wnd`); without, one segment (`gso_max_segs` 1).
pub(crate) fn size_goal(gso: bool, mss: u64, max_window: u64) -> u64 {
    if !gso {
        return mss;
    }
    let half = if max_window > TCP_MSS_DEFAULT {
        max_window / 2
    } else {
        max_window
    };
    let bytes = GSO_MAX_SIZE.min(half);
    (bytes / mss.max(1) * mss).max(mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn linux(sndbuf: u64) -> SendBuffer {
        SendBuffer::new(SndbufAccounting::Linux, BufferSize::Bytes(sndbuf))
    }

    fn autotuned() -> SendBuffer {
        SendBuffer::new(
            SndbufAccounting::Linux,
            BufferSize::Auto(crate::tcp::Auto::Auto),
        )
    }

    #[test]
    fn an_autotuned_buffer_starts_at_tcp_wmem_1_and_setup_sizes_it_for_the_initial_window() {
        // tcp_init_sock: sk_sndbuf = tcp_wmem[1]; tcp_init_buffer_space → tcp_sndbuf_expand:
        // per_mss = roundup_pow_of_two(1460 + 256 + 320) + 256 = 2304, × 10 segments × 2
        // (reno, cubic) or 3 (bbr).
        let mut b = autotuned();
        assert_eq!(b.limit, 16_384);
        assert_eq!(expansion(1460, 10, 2), 46_080);
        assert_eq!(expansion(1460, 4, 3), 69_120);
        b.expand(expansion(1460, 10, 2));
        assert_eq!(b.limit, 46_080);
        // A fixed buffer never moves.
        let mut fixed = linux(65_536);
        fixed.expand(1 << 30);
        assert_eq!(fixed.limit, 131_072);
    }

    #[test]
    fn an_autotuned_buffer_grows_with_cwnd_only_for_a_waiting_writer_up_to_tcp_wmem_2() {
        // tcp_new_space runs from tcp_check_space only with SOCK_NOSPACE set; it never
        // shrinks the buffer and stops at tcp_wmem[2] = 4 MiB.
        let mut b = autotuned();
        b.expand_for_waiting_writer(expansion(1460, 100, 2));
        assert_eq!(b.limit, 16_384);
        b.wait_for_space();
        b.expand_for_waiting_writer(expansion(1460, 100, 2));
        assert_eq!(b.limit, 460_800);
        b.expand_for_waiting_writer(expansion(1460, 50, 2));
        assert_eq!(b.limit, 460_800);
        b.expand_for_waiting_writer(expansion(1460, 10_000, 2));
        assert_eq!(b.limit, TCP_WMEM[2]);
    }

    /// Where every skb ends, those reached by transmission and the unsent runs alike.
    fn ends(b: &SendBuffer) -> Vec<u64> {
        let runs = b
            .unsent
            .iter()
            .flat_map(|run| (0..run.count).map(|k| run.first_end() + k * run.size));
        b.skb_ends.iter().copied().chain(runs).collect()
    }

    fn seqs(snd_una: u64, snd_max: u64, written: u64) -> Seqs {
        Seqs {
            snd_una,
            snd_max,
            written,
        }
    }

    #[test]
    fn so_sndbuf_is_doubled_with_a_floor_and_payload_keeps_it_as_given() {
        // sk_setsockopt: sk_sndbuf = max(2 × val, SOCK_MIN_SNDBUF); measured 4608 for
        // SO_SNDBUF 1 and 2048, 8192 for 4096, 131072 for 65536.
        assert_eq!(linux(1).limit, 4_608);
        assert_eq!(linux(4_096).limit, 8_192);
        assert_eq!(linux(65_536).limit, 131_072);
        assert_eq!(
            SendBuffer::new(SndbufAccounting::Payload, BufferSize::Bytes(1)).limit,
            1
        );
    }

    #[test]
    fn payload_buffer_holds_sndbuf_bytes_and_never_makes_a_writer_wait() {
        let mut b = SendBuffer::new(SndbufAccounting::Payload, BufferSize::Bytes(65_536));
        assert_eq!(b.space(seqs(0, 0, 60_000), MSS), 5_536);
        b.wait_for_space();
        assert_eq!(b.space(seqs(1, 60_000, 65_536), MSS), 1);
    }

    #[test]
    fn size_goal_is_whole_segments_of_64_kib_or_half_the_window() {
        // tcp_xmit_size_goal: 45 × 1448 in 64 KiB (measured: skbs of 45 × 1436 with
        // timestamps); half of a 20,000-byte window is 6 segments; without GSO one.
        assert_eq!(size_goal(true, MSS, 1 << 20), 45 * MSS);
        assert_eq!(size_goal(true, MSS, 20_000), 6 * MSS);
        assert_eq!(size_goal(true, MSS, 1_000), MSS);
        assert_eq!(size_goal(false, MSS, 1 << 20), MSS);
    }

    #[test]
    fn each_skb_is_charged_its_payload_and_its_head() {
        // The measurement of SKB_HEAD_TRUESIZE: 12 bytes in one skb charge 844.
        let mut b = linux(65_536);
        b.write(seqs(0, 0, 0), 12, 45 * MSS);
        assert_eq!(b.charged(seqs(0, 0, 12)), 844);
        // More data joins the unsent skb up to the size goal, then a new skb begins.
        b.write(seqs(0, 0, 12), 45 * MSS, 45 * MSS);
        assert_eq!(ends(&b), [45 * MSS, 45 * MSS + 12]);
        assert_eq!(
            b.charged(seqs(0, 0, 45 * MSS + 12)),
            45 * MSS + 12 + 2 * 832
        );
    }

    #[test]
    fn a_sent_skb_takes_no_more_data() {
        let mut b = linux(65_536);
        b.write(seqs(0, 0, 0), MSS, 45 * MSS);
        // Its one segment left: the next write begins a new skb.
        b.sent(MSS, 8);
        b.write(seqs(0, MSS, MSS), 100, 45 * MSS);
        assert_eq!(ends(&b), [MSS, MSS + 100]);
    }

    #[test]
    fn a_write_begins_skbs_while_the_charge_is_below_sk_sndbuf_and_fills_the_last() {
        // tcp_sendmsg_locked checks sk_stream_memory_free only before a new skb: with
        // 64 KiB skbs, 131,072 bytes of sk_sndbuf take three (measured on loopback with a
        // closed window: 3 × 64,620 bytes queued, charge 196,356).
        let goal = 45 * 1436;
        let b = linux(65_536);
        let space = b.space(seqs(0, 0, 0), goal);
        assert_eq!(space, 3 * goal);
        let mut b = b;
        b.write(seqs(0, 0, 0), space, goal);
        assert_eq!(b.charged(seqs(0, 0, space)), 196_356);
        assert_eq!(b.space(seqs(0, 0, space), goal), 0);
    }

    #[test]
    fn one_segment_skbs_without_gso_hold_less_data() {
        // Skbs of 1448 + 832 bytes: the 58th begins at a charge of 57 × 2280 = 129,960,
        // still below 131,072.
        let b = linux(65_536);
        assert_eq!(b.space(seqs(0, 0, 0), MSS), 58 * MSS);
    }

    #[test]
    fn acknowledged_bytes_are_freed_at_once_and_an_skb_head_with_its_last_byte() {
        let mut b = linux(65_536);
        b.write(seqs(0, 0, 0), 4 * MSS, 4 * MSS);
        b.sent(4 * MSS, 8);
        // tcp_trim_head frees the two acknowledged segments; the skb and its head stay.
        let s = seqs(2 * MSS, 4 * MSS, 4 * MSS);
        b.acked(s);
        assert_eq!(b.charged(s), 2 * MSS + 832);
        let s = seqs(4 * MSS, 4 * MSS, 4 * MSS);
        b.acked(s);
        assert_eq!(b.charged(s), 0);
    }

    #[test]
    fn a_blocked_writer_wakes_when_a_third_of_the_buffer_is_free() {
        // sk_stream_write_space: free (sk_sndbuf − charge) ≥ charge / 2, i.e. a charge of
        // at most 2/3 of sk_sndbuf = 87,381 here.
        let mut b = linux(65_536);
        let goal = MSS;
        let full = b.space(seqs(0, 0, 0), goal);
        b.write(seqs(0, 0, 0), full, goal);
        for k in 1..=full / MSS {
            b.sent(k * MSS, 1);
        }
        b.wait_for_space();
        // 20 skbs acknowledged leave a charge of 38 × 2280 = 86,640 ≤ 87,381; 19 leave 88,920.
        let s = seqs(19 * MSS, full, full);
        b.acked(s);
        assert_eq!(b.space(s, goal), 0);
        let s = seqs(20 * MSS, full, full);
        b.acked(s);
        assert_eq!(b.charged(s), 38 * 2_280);
        assert!(b.space(s, goal) > 0);
    }

    #[test]
    fn transmission_splits_an_skb_into_bursts_of_tso_segs_and_at_the_window() {
        let mut b = linux(1 << 20);
        b.write(seqs(0, 0, 0), 10 * MSS, 45 * MSS);
        // tso_fragment: bursts of 4 segments, each its own skb.
        for k in 1..=6 {
            b.sent(k * MSS, 4);
        }
        // The window stopped the second burst after 2 segments: the rest is split off.
        b.window_stops(6 * MSS);
        assert_eq!(ends(&b), [4 * MSS, 6 * MSS, 10 * MSS]);
        // The last skb ends a burst of its own.
        for k in 7..=10 {
            b.sent(k * MSS, 8);
        }
        assert_eq!(ends(&b), [4 * MSS, 6 * MSS, 10 * MSS]);
    }

    /// The skb list as one record per skb, searched in full: what `SendBuffer` keeps in
    /// runs and finds from its cursor must give the same skbs and charges.
    #[derive(Default)]
    struct EverySkb {
        ends: Vec<u64>,
        burst: u64,
    }

    impl EverySkb {
        fn write(&mut self, s: Seqs, bytes: u64, goal: u64) {
            let start = self
                .ends
                .len()
                .checked_sub(2)
                .map_or(s.snd_una, |i| self.ends[i]);
            let mut end = s.written;
            if let Some(last) = self.ends.last_mut().filter(|_| start >= s.snd_max) {
                let tail = goal.saturating_sub(*last - start).min(bytes);
                *last += tail;
                end += tail;
            }
            while end < s.written + bytes {
                end = (end + goal).min(s.written + bytes);
                self.ends.push(end);
            }
        }

        fn sent(&mut self, end: u64, tso_segs: u64) {
            self.burst += 1;
            if self.ends.contains(&end) {
                self.burst = 0;
            } else if self.burst >= tso_segs {
                self.split(end);
            }
        }

        fn split(&mut self, at: u64) {
            self.burst = 0;
            let i = self.ends.iter().take_while(|&&end| end <= at).count();
            if i < self.ends.len() {
                self.ends.insert(i, at);
            }
        }
    }

    #[test]
    fn skbs_kept_in_runs_and_found_from_the_cursor_are_every_skb_in_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(14);
        for run in 0..150 {
            // Writes of up to a segment keep the sender near the last skb; larger ones
            // keep thousands of skbs unsent.
            let most = [MSS, 4 * MSS, 200_000][run % 3];
            let mut b = linux(1 << 20);
            let mut model = EverySkb::default();
            let (mut una, mut nxt, mut max, mut written) = (0, 0, 0, 0);
            for _ in 0..300 {
                let s = seqs(una, max, written);
                match rng.gen_range(0..10) {
                    0..=2 => {
                        let goal = [MSS, 4 * MSS, 45 * MSS][rng.gen_range(0..3)];
                        let bytes = b.space(s, goal).min(rng.gen_range(1..=most));
                        b.write(s, bytes, goal);
                        model.write(s, bytes, goal);
                        written += bytes;
                    }
                    3..=6 if nxt < written => {
                        // A segment: new data from snd_max, or resent after a timeout
                        // (go-back-N), which may run past snd_max.
                        let end = (nxt + rng.gen_range(1..=MSS)).min(written);
                        if nxt >= max {
                            let tso_segs = rng.gen_range(1..5);
                            b.sent(end, tso_segs);
                            model.sent(end, tso_segs);
                        }
                        nxt = end;
                        max = max.max(end);
                    }
                    7 => {
                        b.window_stops(nxt);
                        if model.burst > 0 {
                            model.split(nxt);
                        }
                    }
                    8 if una < max => {
                        una = if rng.gen() {
                            max
                        } else {
                            rng.gen_range(una + 1..=max)
                        };
                        nxt = nxt.max(una);
                        let s = seqs(una, max, written);
                        b.acked(s);
                        model.ends.retain(|&end| end > una);
                    }
                    9 => nxt = una,
                    _ => {}
                }
                let s = seqs(una, max, written);
                assert_eq!(ends(&b), model.ends);
                assert_eq!(b.burst, model.burst);
                assert_eq!(b.space(s, 45 * MSS), {
                    let mut copy = b.clone();
                    copy.skb_ends = model.ends.iter().copied().collect();
                    copy.unsent.clear();
                    copy.unsent_skbs = 0;
                    copy.space(s, 45 * MSS)
                });
            }
        }
    }
}
