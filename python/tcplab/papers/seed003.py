"""Seed 003: Kim, Kim & Hong (2006), TCP downstream to a PDA over 802.11b.

J.-H. Kim, Y.-H. Kim, Y.-S. Hong, "An Improvement of Performance for Data Downstream in
IEEE 802.11x Wireless LAN Networks" (in Korean), 2006. A voice messenger moves recorded
voice (60 s ≈ 486 KB to 600 s ≈ 4.7 MB) between a Pentium 4 PC on 100 Mb/s Ethernet
(Windows 2000) and a 400 MHz PDA on 802.11b (Windows CE, CompactFlash card), through an
access point: upstream (PDA → PC), downstream (PC → PDA), and PDA to PDA (up, then down
once the server holds the message). The paper measures receive times against the file size
(Fig. 4), throughput against the application's write size 512-7168 B (Fig. 5), the PDA's
application read buffer 512-32768 B (Fig. 9) and the sender's pause after each write
0-100 ms (Figs. 10-12), and looks at the first packets of each direction (Figs. 7, 8).

The figures are not in the text this pack was written from: the numbers compared are those
the text states (downstream up to 20 % slower; the first 11 packets in 0.043 s upstream and
0.071 s downstream; 32 % faster with a 32 KiB read buffer than with 512 B; 7 % faster with
a 5 ms pause), and the checks are its stated conclusions. Two of those numbers are the
PDA profile's calibration (bench/fit_pda_profile.py, docs/models/hosts.md): its per-packet
cost is fitted to Fig. 7's 0.043 s and its per-call cost to Fig. 9's 32 %, so those two
comparisons show the fit, not a prediction.
"""

from __future__ import annotations

import copy
import itertools
import struct
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import pandas as pd

from tcplab import api
from tcplab.papers.pack import (
    HELD,
    NOT_HELD,
    Check,
    Exhibit,
    Experiment,
    Order,
    Pack,
    Published,
    Results,
    Verdict,
    above,
    every,
)
from tcplab.report import display, plots

KIB = 1024
MS = 1_000_000  # ns
DIRECTION = "app.direction"
BYTES = "app.bytes"
WRITE = "app.message_size"
READ = "app.read_size"
PAUSE = "app.write_delay"
READ_PAUSE = "app.read_delay"
RETRIES = "wlan_retries"
# "both" is PDA to PDA: up from one PDA, then down to another (experiments pda-to-pda*).
DIRECTIONS = ("upstream", "downstream", "both")
LEGS = ("upstream", "downstream")
# 60 s of voice is 486 KB (§II.2 (1)), so 600 s is 4860 KB, the paper's "about 4.7 MB";
# the paper's other experiments use 2,344 KB, 289 s of voice.
KIB_PER_MINUTE = 486
SIZES_KIB = tuple(KIB_PER_MINUTE * minutes for minutes in (1, 2, 4, 6, 8, 10))
MESSAGE_KIB = 2344
WRITES = (512, 1024, 2048, 3072, 4096, 5120, 6144, 7168)
READS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
PAUSES_MS = (0, 1, 2, 5, 10, 20, 50, 100)
FILE_SIZE, WRITE_SIZE, READ_BUFFER, INTER_PACKET, BOTH_ENDS = (
    "file-size",
    "write-size",
    "read-buffer",
    "inter-packet-delay",
    "both-ends-delay",
)
PDA_SIZE, PDA_WRITE = "pda-to-pda", "pda-to-pda-write-size"
PAPER_DOWN_SLOWER = 0.20  # abstract; §II.2 (1), Fig. 4: "최대 20% 느린"
PAPER_READ_GAIN = 0.32  # abstract; §III.1, Fig. 9: 32,768 B against 512 B
PAPER_PAUSE_GAIN = 0.07  # abstract; §III.2, Fig. 11: 5 ms against none
# §II.2 (3), Figs. 7 and 8: of the first 11 packets, 7 carried data upstream, taking 0.043 s,
# and 6 downstream, taking 0.071 s (times at the PC, where the Analyzer ran).
FIRST_PACKETS = 11
PAPER_FIRST = {"upstream": (7, 0.043), "downstream": (6, 0.071)}
BEST_PAUSE_MS = 5
BEST_WRITE = 4096
# §II.2 (2), Fig. 5: with writes of 1,024 B or less, downstream's throughput was the higher.
SMALL_WRITE = 1024
# The two numbers the pda-400mhz profile was fitted to (bench/fit_pda_profile.py).
FIT_PER_PACKET = "pda-400mhz's 4.57 ms per packet was fitted to this 0.043 s"
FIT_PER_CALL = "pda-400mhz's 550 µs per call was fitted to this 32 %"
# Run-to-run spread of a receive time under the medium's random backoff: two sizes whose
# times are this close are a tie.
TIE = 0.01


def scenario(quick: bool) -> dict[str, Any]:
    """The voice messenger over 802.11b: a 2,344 KiB message, downstream, in 4 KiB writes,
    read by the PDA 32 KiB at a time; the experiments sweep one of these at a time.

    The PDA is the path's client: `pda-400mhz` CPU (its CompactFlash card's programmed I/O,
    Windows CE calls and flash writes; docs/models/hosts.md) and `windows-ce` buffers
    (Table 2). The PC is `pentium4-2.4ghz` with `windows-2000` buffers. The PDA's 11 Mb/s
    802.11b link reaches the access point, which is joined to the PC by 100 Mb/s Ethernet
    (Table 1); TCP data and ACKs share the PDA's medium with the AP (docs/models/wlan.md).
    A message run ends when it is received, so the duration is only a cap.
    """
    return {
        "name": "seed003-voice-messenger",
        "backend": "sim",
        "duration": "300s",
        "seed": 1,
        "repetitions": 2 if quick else 3,
        "hosts": [
            {"name": "pda", "cpu": "pda-400mhz", "tcp": {"profile": "windows-ce"}},
            {"name": "pc", "cpu": "pentium4-2.4ghz", "tcp": {"profile": "windows-2000"}},
        ],
        "links": [
            {"kind": "wlan", "rate": "11Mbps", "delay": "1us", "wlan": {"ap": "second"}},
            {"kind": "ethernet", "rate": "100Mbps", "delay": "100us"},
        ],
        "app": {
            "kind": "message",
            "bytes": f"{MESSAGE_KIB}KiB",
            "direction": "downstream",
            "message_size": "4KiB",
            "read_size": "32KiB",
        },
    }


def two_pdas(quick: bool) -> dict[str, Any]:
    """PDA to PDA as the paper ran it (§II.1-§II.2 (1)): one PDA uploads the message to the
    PC (the voice messenger's server), which stores it and then sends it down to a second
    PDA (`after`: the second flow opens once the first is received). Both PDAs are stations
    of the one access point, on one 802.11b medium; the AP reaches the PC over Ethernet."""
    spec = scenario(quick)
    pda, pc = spec["hosts"]
    wlan = {"kind": "wlan", "rate": "11Mbps", "delay": "1us"}
    return {
        **spec,
        "name": "seed003-pda-to-pda",
        "hosts": [{**pda, "name": "pda1"}, {**copy.deepcopy(pda), "name": "pda2"}, pc],
        "routers": [{"name": "ap"}],
        "links": [
            {**wlan, "between": ["ap", "pda1"]},
            {**wlan, "between": ["ap", "pda2"]},
            {"kind": "ethernet", "between": ["ap", "pc"], "rate": "100Mbps", "delay": "100us"},
        ],
        "app": {key: value for key, value in spec["app"].items() if key != "direction"},
        "flows": [{"src": "pda1", "dst": "pc"}, {"src": "pc", "dst": "pda2", "after": 0}],
    }


# --quick keeps the ends and the points the checks look at.
QUICK_SIZES_KIB = (SIZES_KIB[0], SIZES_KIB[3], SIZES_KIB[-1])
QUICK_WRITES = (512, 2048, 4096, 7168)
QUICK_READS = (512, 4096, 32768)
QUICK_PAUSES_MS = (0, 5, 10, 20, 100)


def _sizes(quick: bool) -> dict[str, list[Any]]:
    return {BYTES: [f"{kib}KiB" for kib in (QUICK_SIZES_KIB if quick else SIZES_KIB)]}


def _writes(quick: bool) -> dict[str, list[Any]]:
    return {WRITE: [f"{n}B" for n in (QUICK_WRITES if quick else WRITES)]}


def _legs(sweep: Callable[[bool], dict[str, list[Any]]]) -> Callable[[bool], dict[str, Any]]:
    """`sweep` for upstream and downstream between the PDA and the PC."""
    return lambda quick: {**scenario(quick), "sweep": {DIRECTION: list(LEGS), **sweep(quick)}}


def _pda_to_pda(sweep: Callable[[bool], dict[str, list[Any]]]) -> Callable[[bool], dict[str, Any]]:
    return lambda quick: {**two_pdas(quick), "sweep": sweep(quick)}


def _reads(quick: bool) -> dict[str, list[Any]]:
    return {READ: [f"{n}B" for n in (QUICK_READS if quick else READS)]}


def _pauses(quick: bool) -> dict[str, list[Any]]:
    pauses = QUICK_PAUSES_MS if quick else PAUSES_MS
    return {DIRECTION: ["upstream", "downstream"], PAUSE: [f"{ms}ms" for ms in pauses]}


def _both_ends(quick: bool) -> dict[str, Any]:
    """Downstream, the PC pausing after each write and the PDA after each read, by the same
    amount (no pause is the inter-packet experiment's first point)."""
    pauses = [f"{ms}ms" for ms in (QUICK_PAUSES_MS if quick else PAUSES_MS) if ms]
    return {"mode": "zip", PAUSE: pauses, READ_PAUSE: pauses}


def _swept(sweep: Callable[[bool], dict[str, list[Any]]]) -> Callable[[bool], dict[str, Any]]:
    return lambda quick: {**scenario(quick), "sweep": sweep(quick)}


EXPERIMENTS = (
    Experiment(
        FILE_SIZE,
        "receive time against message size (60-600 s of voice), upstream and downstream (Fig. 4)",
        _legs(_sizes),
    ),
    Experiment(
        PDA_SIZE,
        "PDA to PDA: receive time at the second PDA against message size, two PDAs on one "
        "access point, the PC storing and forwarding (Fig. 4)",
        _pda_to_pda(_sizes),
    ),
    Experiment(
        WRITE_SIZE,
        "throughput against the sending application's write size, 2,344 KiB, upstream and "
        "downstream (Fig. 5)",
        _legs(_writes),
    ),
    Experiment(
        PDA_WRITE,
        "PDA to PDA: throughput against the write size, 2,344 KiB (Fig. 5)",
        _pda_to_pda(_writes),
    ),
    Experiment(
        READ_BUFFER,
        "downstream receive time against the PDA's read size, 4 KiB writes (Fig. 9)",
        _swept(_reads),
    ),
    Experiment(
        INTER_PACKET,
        "receive time and lost packets against the sender's pause after each 4 KiB write, "
        "both directions (Figs. 10-12)",
        _swept(_pauses),
    ),
    Experiment(
        BOTH_ENDS,
        "downstream receive time with the same pause after each write at the PC and after "
        "each read at the PDA (Fig. 11's second case)",
        _swept(_both_ends),
    ),
)


# ---- reading the results ------------------------------------------------------------------


def _time(results: Results, experiment: str, **where: Any) -> float:
    means = results.means(experiment)
    for path, value in where.items():
        means = means[means[path] == value]
    return float(means["elapsed_s"].iloc[0])


def _sizes_kib(results: Results) -> list[int]:
    """The message sizes the file-size experiment ran, in KiB."""
    return sorted(int(size) // KIB for size in results.means(FILE_SIZE)[BYTES].unique())


def _by_size(results: Results, kib: int) -> dict[str, float]:
    """Receive time per direction for one message size ("both": PDA to PDA)."""
    times = {d: _time(results, FILE_SIZE, **{DIRECTION: d, BYTES: kib * KIB}) for d in LEGS}
    return {**times, "both": _time(results, PDA_SIZE, **{BYTES: kib * KIB})}


def _down_over_up(results: Results) -> dict[int, float]:
    """Per message size: downstream receive time / upstream's, less one."""
    return {
        kib: times["downstream"] / times["upstream"] - 1
        for kib in _sizes_kib(results)
        for times in [_by_size(results, kib)]
    }


def _read_gain(results: Results) -> float:
    """Receive time saved by the largest read size against the smallest."""
    times = results.means(READ_BUFFER).set_index(READ)["elapsed_s"].sort_index()
    return float(1 - times.iloc[-1] / times.iloc[0])


def _pause_gain(results: Results) -> float:
    down = {DIRECTION: "downstream"}
    return 1 - _time(results, INTER_PACKET, **down, **{PAUSE: BEST_PAUSE_MS * MS}) / _time(
        results, INTER_PACKET, **down, **{PAUSE: 0}
    )


def _throughput(results: Results) -> pd.DataFrame:
    """Fig. 5's throughput: bytes received over the receive time (a PDA-to-PDA message is
    received twice, once by the server and once by the other PDA)."""
    both = results.means(PDA_WRITE).assign(**{DIRECTION: "both"})
    means = pd.concat([results.means(WRITE_SIZE), both], ignore_index=True)
    legs = means[DIRECTION].map({"both": 2}).fillna(1)
    return means.assign(goodput_bps=8 * MESSAGE_KIB * KIB * legs / means["elapsed_s"])


def _downstream_throughput(results: Results) -> pd.DataFrame:
    """Fig. 6: downstream, each message size over its receive time."""
    means = results.means(FILE_SIZE)
    down = means[means[DIRECTION] == "downstream"]
    return down.assign(goodput_bps=8 * down[BYTES] / down["elapsed_s"])


class Packet(NamedTuple):
    """One TCP packet of a capture: time (s), sender's IPv4 address, payload bytes, the
    acknowledgment number and the advertised window (unscaled: no profile here scales)."""

    t: float
    source: bytes
    payload: int
    ack: int
    window: int


def _tcp_packets(pcap: bytes) -> list[Packet]:
    """Each record of a tcplab capture: little-endian, nanosecond timestamps, raw IPv4
    records (docs/pcap.md)."""
    packets, offset = [], 24
    while offset < len(pcap):
        seconds, nanos, kept, _ = struct.unpack_from("<IIII", pcap, offset)
        ip = pcap[offset + 16 : offset + 16 + kept]
        total = struct.unpack_from(">H", ip, 2)[0]
        tcp = ip[4 * (ip[0] & 0x0F) :]
        headers = 4 * (ip[0] & 0x0F) + 4 * (tcp[12] >> 4)
        ack, window = struct.unpack_from(">I", tcp, 8)[0], struct.unpack_from(">H", tcp, 14)[0]
        packets.append(Packet(seconds + nanos / 1e9, ip[12:16], total - headers, ack, window))
        offset += 16 + kept
    return packets


def timeline(direction: str, spec: dict[str, Any] | None = None) -> list[Packet]:
    """Figs. 7 and 8: from the first data segment on, the first 11 packets either way on
    the PC's Ethernet (the paper's Analyzer ran on the PC). One run of `spec` (default: the
    pack's scenario) with a capture, outside the sweeps (which refuse captures)."""
    if spec is None:
        return list(_default_timeline(direction))
    spec = copy.deepcopy(spec)
    spec.update(repetitions=1, trace={"pcap": ["links.1"]})
    spec["app"]["direction"] = direction
    packets = _tcp_packets(api.run(spec).captures["links.1"])
    start = next(i for i, packet in enumerate(packets) if packet.payload > 0)
    return packets[start : start + FIRST_PACKETS]


@cache
def _default_timeline(direction: str) -> tuple[Packet, ...]:
    return tuple(timeline(direction, scenario(quick=True)))


def _first_packets_time(direction: str) -> Callable[[Results], float]:
    """The published number's counterpart: the time of the first packets `direction`
    (from the trace of its own run, not from the results)."""
    return lambda results: first_packets(direction)[1]


def first_packets(direction: str, spec: dict[str, Any] | None = None) -> tuple[int, float]:
    """Figs. 7 and 8: of `timeline`'s packets, how many carry data, and the time from the
    first to the last of them."""
    shown = timeline(direction, spec)
    return sum(packet.payload > 0 for packet in shown), shown[-1].t - shown[0].t


def timeline_table(direction: str) -> pd.DataFrame:
    """Figs. 7 and 8 as a table: each of the first 11 packets, who sent it, its payload,
    acknowledgment and window; a pure ACK whose window grew is a window update."""
    shown = timeline(direction)
    sender = shown[0].source
    rows: list[dict[str, Any]] = []
    last_window: dict[bytes, int] = {}
    for index, packet in enumerate(shown, start=1):
        side = "sender" if packet.source == sender else "receiver"
        grown = packet.window > last_window.get(packet.source, packet.window)
        kind = "data" if packet.payload else "window update" if grown else "ACK"
        last_window[packet.source] = packet.window
        rows.append(
            {
                "packet": index,
                "time (ms)": f"{1000 * (packet.t - shown[0].t):.1f}",
                "from": side,
                "kind": kind,
                "payload (B)": packet.payload,
                "window (B)": packet.window,
            }
        )
    return pd.DataFrame(rows)


def _percent(share: float) -> str:
    return display.percent(share)


# ---- checks --------------------------------------------------------------------------------


def _downstream_slower(results: Results) -> Verdict:
    ratios = _down_over_up(results)
    cases = [
        (f"{kib} KiB", 0 < ratio <= PAPER_DOWN_SLOWER, f"{ratio:+.1%}")
        for kib, ratio in ratios.items()
    ]
    return every(cases)


def _gap_grows(results: Results) -> Verdict:
    sizes = _sizes_kib(results)
    gaps = {
        kib: times["downstream"] - times["upstream"]
        for kib in sizes
        for times in [_by_size(results, kib)]
    }
    held = gaps[sizes[-1]] > max(gaps[kib] for kib in sizes[:-1])
    evidence = ", ".join(f"{kib} KiB {gap * 1000:+.0f} ms" for kib, gap in gaps.items())
    return Verdict(HELD if held else NOT_HELD, f"downstream − upstream: {evidence}")


def _pda_to_pda_is_the_sum(results: Results) -> Verdict:
    """Two PDAs on one medium, simulated (experiment pda-to-pda), against the sum of the
    one-PDA legs (experiment file-size): what could part them is the first connection's
    close overlapping the second's start on the shared air and the AP's shared queue."""
    cases = []
    for kib in _sizes_kib(results):
        times = _by_size(results, kib)
        both = times["both"]
        share = both / (times["upstream"] + times["downstream"])
        cases.append((f"{kib} KiB", abs(share - 1) <= 0.05, f"{both:.2f} s = {share:.3f} × sum"))
    return every(cases)


def _write_size_peaks_at_4k(results: Results) -> Verdict:
    means = _throughput(results)
    cases = []
    for direction in DIRECTIONS:
        rows = means[means[DIRECTION] == direction].set_index(WRITE)["goodput_bps"].sort_index()
        best, smallest = rows.index[int(rows.argmax())], rows.index[0]
        rising = rows[BEST_WRITE] > rows[smallest]
        text = f"best at {best} B ({display.rate(rows[best])}); {smallest} B " + (
            f"{display.rate(rows[smallest])}, {BEST_WRITE} B {display.rate(rows[BEST_WRITE])}"
        )
        cases.append((direction, rising and best == BEST_WRITE, text))
    return every(cases)


def _small_writes_favour_downstream(results: Results) -> Verdict:
    means = _throughput(results).set_index([DIRECTION, WRITE])["goodput_bps"]
    cases = []
    for size in sorted(results.means(WRITE_SIZE)[WRITE].unique()):
        up, down = means[("upstream", size)], means[("downstream", size)]
        expected = down > up if size <= SMALL_WRITE else down < up
        cases.append(
            (f"{size} B", bool(expected), f"down {display.rate(down)}, up {display.rate(up)}")
        )
    return every(cases)


def _read_buffer_helps(results: Results) -> Verdict:
    means = results.means(READ_BUFFER).set_index(READ)["elapsed_s"].sort_index()
    gain = _read_gain(results)
    held = gain > 0 and means.iloc[-1] <= (1 + TIE) * means.min()
    evidence = ", ".join(f"{size} B {time:.2f} s" for size, time in means.items())
    return Verdict(HELD if held else NOT_HELD, f"{evidence}; 32 KiB vs 512 B {gain:+.1%}")


def _times_by_pause(results: Results, direction: str) -> pd.DataFrame:
    """Receive time (mean, 95 % half-width) per pause, for one direction."""
    means = results.means(INTER_PACKET)
    return _timed(means[means[DIRECTION] == direction].set_index(PAUSE))


def _timed(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {"t": frame["elapsed_s"], "ci": frame.get("elapsed_s_ci95", 0.0)}, index=frame.index
    ).fillna(0.0)


def _show_pauses(times: pd.DataFrame) -> str:
    pauses = zip(times.index.tolist(), times["t"].tolist(), strict=True)
    return ", ".join(f"{ns // MS} ms {t:.2f} s" for ns, t in pauses)


def _longer(times: pd.DataFrame, slower: int, faster: int) -> Order:
    """Whether the time at `slower` is longer than at `faster`, beyond the runs' spread."""
    t, ci = times["t"], times["ci"]
    return above(float(t[slower]), float(ci[slower]), float(t[faster]), float(ci[faster]))


def _short_pause_helps_downstream(results: Results) -> Verdict:
    times = _times_by_pause(results, "downstream")
    status = _longer(times, 0, BEST_PAUSE_MS * MS)
    return Verdict(status, _show_pauses(times))


def _long_pauses_hurt(results: Results) -> Verdict:
    cases = []
    for direction in ("upstream", "downstream"):
        times = _times_by_pause(results, direction)
        for ns in times.index[times.index > 10 * MS]:
            text = f"{times.t[ns]:.2f} s against {times.t[0]:.2f} s with none"
            cases.append((f"{direction} {ns // MS} ms", _longer(times, ns, 0), text))
    return every(cases)


def _upstream_best_without_pause(results: Results) -> Verdict:
    times = _times_by_pause(results, "upstream")
    cases = [
        (f"{ns // MS} ms", _longer(times, ns, 0), f"{times.t[ns]:.2f} s against {times.t[0]:.2f} s")
        for ns in times.index
        if ns
    ]
    return every(cases)


def _sender_only_beats_both_ends(results: Results) -> Verdict:
    sender_only = _times_by_pause(results, "downstream")
    both = _timed(results.means(BOTH_ENDS).set_index(PAUSE))
    cases = [
        (
            f"{ns // MS} ms",
            above(t, ci, float(sender_only.t[ns]), float(sender_only.ci[ns])),
            f"sender only {sender_only.t[ns]:.2f} s, both ends {t:.2f} s",
        )
        for ns, t, ci in zip(
            both.index.tolist(), both["t"].tolist(), both["ci"].tolist(), strict=True
        )
    ]
    return every(cases)


def _fewer_errors_with_pauses(results: Results) -> Verdict:
    means = results.means(INTER_PACKET)
    down = means[means[DIRECTION] == "downstream"].set_index(PAUSE)
    errors = (down["ring_drops"] + down[RETRIES]).sort_index()
    # "the longer the sender's pause, the fewer error packets": never more with a longer
    # pause (one packet of slack for the runs' spread), and fewer at the longest than none.
    never_more = all(later <= earlier + 1 for earlier, later in itertools.pairwise(errors))
    held = never_more and errors.iloc[-1] < errors.iloc[0]
    evidence = ", ".join(
        f"{ns // MS} ms: {down['ring_drops'][ns]:.0f} ring drops + {down[RETRIES][ns]:.0f} "
        "802.11 retries"
        for ns in errors.index
    )
    return Verdict(HELD if held else NOT_HELD, evidence)


def _more_control_packets_downstream(results: Results) -> Verdict:
    means = results.means(FILE_SIZE)
    cases = []
    for kib in _sizes_kib(results):
        rows = means[means[BYTES] == kib * KIB].set_index(DIRECTION)["window_updates"]
        cases.append(
            (
                f"{kib} KiB",
                rows["downstream"] > rows["upstream"],
                f"{rows['upstream']:.0f} up, {rows['downstream']:.0f} down",
            )
        )
    return every(cases)


def _first_packets_slower_downstream(results: Results) -> Verdict:
    (up_data, up_s), (down_data, down_s) = (first_packets(d) for d in ("upstream", "downstream"))
    held = down_s > up_s and down_data < up_data
    evidence = (
        f"upstream {up_data} data packets in {up_s * 1000:.1f} ms, downstream {down_data} in "
        f"{down_s * 1000:.1f} ms"
    )
    return Verdict(HELD if held else NOT_HELD, evidence)


# ---- exhibits ------------------------------------------------------------------------------


def _fig12_table(results: Results) -> pd.DataFrame:
    means = results.means(INTER_PACKET)
    rows = []
    for row in means.to_dict(orient="records"):
        direction, pause = row[DIRECTION], row[PAUSE]
        rows.append(
            {
                "direction": direction,
                "pause after each write": f"{pause // MS} ms",
                "receive time": f"{row['elapsed_s']:.2f} s",
                "PDA ring drops (Low Window)": f"{row['ring_drops']:.1f}",
                "802.11 retries (corrupted frames)": f"{row[RETRIES]:.1f}",
                "collisions": f"{row['wlan_collisions']:.1f}",
                "TCP retransmits": f"{row['retransmits']:.1f}",
                "window updates": f"{row['window_updates']:.0f}",
            }
        )
    return pd.DataFrame(rows)


def _fig4_table(results: Results) -> pd.DataFrame:
    ratios = _down_over_up(results)
    rows = []
    for kib in _sizes_kib(results):
        times = _by_size(results, kib)
        rows.append(
            {
                "message": f"{kib} KiB ({kib * 60 // KIB_PER_MINUTE} s of voice)",
                **{f"{d} (s)": f"{t:.2f}" for d, t in times.items()},
                "downstream vs upstream": f"{ratios[kib]:+.1%}",
            }
        )
    return pd.DataFrame(rows)


def exhibits(results: Results) -> list[Exhibit]:
    return [
        Exhibit(
            "Fig. 4: receive time against message size",
            "tcplab's receive time per direction (mean of the runs) and the downstream's "
            "excess over the upstream; the paper: downstream up to 20 % slower, more so for "
            "larger files, and PDA to PDA about the sum of the two.",
            _fig4_table(results),
        ),
        Exhibit(
            "Fig. 4 drawn",
            "Receive time against message size, one line per direction.",
            plots.metric_vs_param(
                pd.concat(
                    [
                        results.means(FILE_SIZE),
                        results.means(PDA_SIZE).assign(**{DIRECTION: "both"}),
                    ],
                    ignore_index=True,
                ),
                BYTES,
                "elapsed_s",
                series=DIRECTION,
            ),
        ),
        Exhibit(
            "Fig. 6: downstream throughput against data size",
            "Message bytes over the receive time, downstream (the paper's figure has no "
            "values in the text).",
            plots.metric_vs_param(
                _downstream_throughput(results), BYTES, "goodput_bps"
            ),
        ),
        Exhibit(
            "Fig. 5: throughput against write size",
            "Message bytes received over the receive time (twice the message for PDA to "
            "PDA); the paper: highest at 4,096 B in every direction.",
            plots.metric_vs_param(_throughput(results), WRITE, "goodput_bps", series=DIRECTION),
        ),
        Exhibit(
            "Fig. 9: downstream receive time against the PDA's read buffer",
            "The paper: 32 % shorter with 32,768 B than with 512 B.",
            plots.metric_vs_param(results.means(READ_BUFFER), READ, "elapsed_s"),
        ),
        Exhibit(
            "Figs. 10 and 11: receive time against the pause after each write",
            "The paper: downstream 7 % faster with 5 ms than with none, upstream best with "
            "none, and pauses above 10 ms slower in both directions.",
            plots.metric_vs_param(
                results.means(INTER_PACKET), PAUSE, "elapsed_s", series=DIRECTION
            ),
        ),
        *(
            Exhibit(
                f"Fig. {number}: the first {FIRST_PACKETS} packets {direction}",
                f"From the first data segment on, as the PC's Ethernet sees them (one run); the "
                f"paper: {PAPER_FIRST[direction][0]} data packets in "
                f"{PAPER_FIRST[direction][1]} s. A pure ACK whose window grew counts as a "
                "window update.",
                timeline_table(direction),
            )
            for number, direction in ((7, "upstream"), (8, "downstream"))
        ),
        Exhibit(
            "Figs. 7, 8 and 12: control and lost packets against the pause",
            "Per direction and pause: the PDA's ring drops (packets it could not take in, "
            "the paper's Low Window), the 802.11 retries (frames corrupted on the air, by "
            "collision here: the paper's checksum errors), TCP retransmissions and window "
            "updates (the control packets of Figs. 7 and 8).",
            _fig12_table(results),
        ),
    ]


PACK = Pack(
    name="seed003",
    title="Kim, Kim & Hong (2006): TCP downstream to a PDA over 802.11b",
    citation=(
        'J.-H. Kim, Y.-H. Kim, Y.-S. Hong, "An Improvement of Performance for Data '
        'Downstream in IEEE 802.11x Wireless LAN Networks" (IEEE 802.11x 무선 랜에서의 '
        "데이터 다운스트림 성능 향상), 대한전자공학회논문지 43-TC-11, 2006"
    ),
    summary=(
        "A voice messenger between a PC on 100 Mb/s Ethernet and a 400 MHz PDA on 11 Mb/s "
        "802.11b, through an access point: receive time upstream, downstream and PDA to PDA "
        "against the message size; throughput against the write size; the PDA's read "
        "buffer; the sender's pause after each write."
    ),
    experiments=EXPERIMENTS,
    published=(
        Published(
            "downstream slower than upstream, at most",
            "abstract; §II.2 (1), Fig. 4",
            PAPER_DOWN_SLOWER,
            _percent,
            lambda results: max(_down_over_up(results).values()),
            "tcplab: the largest excess over the message sizes",
        ),
        *(
            Published(
                f"{direction}: time of the first {FIRST_PACKETS} packets",
                "§II.2 (3), Fig. 7" if direction == "upstream" else "§II.2 (3), Fig. 8",
                PAPER_FIRST[direction][1],
                display.seconds,
                _first_packets_time(direction),
                "from the first data segment, on the PC's Ethernet; "
                f"{PAPER_FIRST[direction][0]} of the paper's carried data (tcplab's count is "
                "in the check below)"
                + (
                    "; the PDA's per-packet cost is fitted to it" if direction == "upstream" else ""
                ),
                fitted=FIT_PER_PACKET if direction == "upstream" else "",
            )
            for direction in ("upstream", "downstream")
        ),
        Published(
            "downstream receive time saved by a 32,768 B read buffer against 512 B",
            "abstract; §III.1, Fig. 9",
            PAPER_READ_GAIN,
            _percent,
            _read_gain,
            "the PDA's per-call cost is fitted to it",
            fitted=FIT_PER_CALL,
        ),
        Published(
            "downstream receive time saved by a 5 ms pause after each write",
            "abstract; §III.2, Fig. 11",
            PAPER_PAUSE_GAIN,
            _percent,
            _pause_gain,
        ),
    ),
    checks=(
        Check(
            "Downstream takes longer than upstream, by at most 20 %",
            "abstract; §II.2 (1), Fig. 4",
            _downstream_slower,
        ),
        Check(
            "The gap between downstream and upstream grows with the message size",
            "§II.2 (1), Fig. 4",
            _gap_grows,
        ),
        Check(
            "PDA to PDA takes about the sum of upstream and downstream (within 5 %)",
            "§II.2 (1), Fig. 4",
            _pda_to_pda_is_the_sum,
        ),
        Check(
            "Throughput rises with the write size up to 4,096 B, its best, in every direction",
            "§II.2 (2), Fig. 5; §IV",
            _write_size_peaks_at_4k,
        ),
        Check(
            "With writes of 1,024 B or less downstream's throughput is higher than "
            "upstream's, with larger writes lower",
            "§II.2 (2), Fig. 5",
            _small_writes_favour_downstream,
            full_run="--quick's write sizes leave out 3,072 B, the one size where the full "
            "run finds the claim broken (a Nagle stall upstream)",
        ),
        Check(
            "Downstream sends more control packets (window updates) than upstream",
            "§II.2 (3), Figs. 7 and 8; §IV",
            _more_control_packets_downstream,
        ),
        Check(
            "A larger read buffer at the PDA shortens the downstream receive time; 32,768 B "
            "is the fastest (within 1 %)",
            "§III.1, Fig. 9",
            _read_buffer_helps,
            fitted=FIT_PER_CALL + "; with a fixed cost per read call, fewer larger reads are "
            "faster by construction, so the shape is not evidence either",
        ),
        Check(
            "Downstream, a 5 ms pause after each write shortens the receive time",
            "abstract; §III.2, Fig. 11",
            _short_pause_helps_downstream,
        ),
        Check(
            "Pauses above 10 ms lengthen the receive time in both directions",
            "§III.2, Figs. 10 and 11",
            _long_pauses_hurt,
        ),
        Check(
            "Upstream, no pause is best",
            "§III.2, Fig. 10",
            _upstream_best_without_pause,
        ),
        Check(
            "Downstream, the longer the pause after each write, the fewer packets lost or "
            "corrupted",
            "§III.2, Fig. 12",
            _fewer_errors_with_pauses,
        ),
        Check(
            "Downstream, pausing only at the sender beats pausing at both ends by the same amount",
            "§III.2, Fig. 11; §IV",
            _sender_only_beats_both_ends,
            full_run="the two sides differ by 0.1-0.7 %, which --quick's two runs and its "
            "pauses (no 1, 2 or 50 ms) cannot resolve; the full run's three can",
        ),
        Check(
            "Downstream's first 11 packets take longer and carry fewer data packets than "
            "upstream's (6 in 0.071 s against 7 in 0.043 s)",
            "§II.2 (3), Figs. 7 and 8",
            _first_packets_slower_downstream,
        ),
    ),
    differences=(
        "The paper's PDA and PC are real machines; tcplab's are the pda-400mhz and "
        "pentium4-2.4ghz CPU profiles (docs/models/hosts.md). The PDA's per-packet cost "
        "(4.57 ms) is fitted to Fig. 7 and its per-call cost (550 µs) to Fig. 9; the "
        "paper's receive-time curves, which would pin its throughput, are not in the text. "
        "The fitted PDA takes in 1.3-1.5 Mb/s, below what the medium carries, so the PDA "
        "and not the air sets every receive time here.",
        "The PDA's flash speed (1 µs/B, an estimate) decides how much slower downstream is: "
        "upstream the PDA pays nothing for reading the file, downstream 1.46 ms per segment "
        "for writing it. With 0.5 µs/B downstream is 1.5 % slower at 2,344 KiB, with 1 µs/B "
        "10 %, with 1.5 µs/B 20 %; no number in the text fixes it.",
        "The 802.11b medium is DCF basic access with one station and the AP, no other "
        "traffic, no hidden nodes and no bit errors (the paper's room had whatever else was "
        "on the channel); frames are lost only to collisions between the AP and the PDA.",
        "The PDA to PDA case sends the message up and then down over the same PDA's link "
        "(the paper used two PDAs on one AP; in both cases the legs run one after the other).",
        "Message sizes: 60 s of voice is 486 KB (the paper), taken as 486 KiB, so 600 s is "
        "4,860 KiB (the paper's 'about 4.7 MB').",
        "Downstream, the paper's PDA answered the first segment with a window update, and "
        "the PC sent 6 data packets in the first 11; tcplab's PDA advertises its whole "
        "window from the start and gets 8, in 57 ms against the paper's 71 ms.",
        "A 4 KiB write every 5 ms offers 6.5 Mb/s, far above the fitted PDA's rate, so it "
        "does not keep the PDA's 4-frame ring from overflowing; every 20 ms (1.6 Mb/s) it "
        "does, and that pause shortens the receive time instead.",
        "Windows' Sleep() granularity (10-15.6 ms on Windows 2000 unless the timer "
        "resolution is raised) is not modelled: tcplab pauses exactly as long as asked.",
    ),
    exhibits=exhibits,
    investigations=(
        "Downstream at most 20 % slower (not held at 486 KiB, +33 %): the PDA's 4-frame ring "
        "overflows in slow start and 2 of 3 runs wait out a 1 s retransmission timeout; from "
        "972 KiB on downstream is 10.3-10.5 % slower, inside the paper's bound. How much "
        "slower is the PDA's flash speed, which no number in the text fixes: 0.5 us/B gives "
        "1.5 %, 1 us/B (the profile) 10 %, 1.5 us/B 20 %.",
        "Throughput peaks at a 4,096 B write and the 1,024 B crossover (not held): the PC's "
        "write calls cost nothing that matters, so downstream is flat, and each of the "
        "PDA's write calls costs 550 us, so upstream rises to 7,168 B, with a dip at "
        "3,072 B where each write's 152-byte tail waits under Nagle for the PC's 200 ms "
        "delayed ACK (both Windows values: KB Q203085, TcpDelAckTicks). A peak at 4,096 B, "
        "which the paper ascribes to socket buffers in multiples of 4,096 B, would need a "
        "buffering rule of Windows' AFD that no source describes.",
        "More window updates downstream (not held: 355 against 1214): the PC reads each "
        "pair of segments right after acknowledging it and so sends a window update nearly "
        "every time; the PDA's slow packet work interleaves with its reads, so its next ACK "
        "carries the reopened window. Windows CE's update rule is not documented.",
        "A 5 ms pause helps (a tie) and pauses above 10 ms cost time (not held downstream, "
        "where 20 ms is the fastest): 4 KiB every 5 ms offers 6.5 Mb/s, far above the fitted "
        "PDA's 1.3 Mb/s, so the ring still overflows; every 20 ms (1.6 Mb/s) it does not, and "
        "42 drops and fast retransmissions go. The paper's PDA took data in faster than the "
        "fitted one, or its PC's Sleep(5) slept a 10-15.6 ms Windows timer tick.",
        "Pausing at the sender only beats both ends (not held at 20 ms, 0.3 % the other "
        "way; the paper's direction at 1, 2 and 50 ms by 0.1-0.7 %): the application's "
        "reads are not what the PC waits for. Charged per byte instead of per packet "
        "(450 us a packet and 4.35 us/B, which also fits Fig. 7), the model gives the "
        "paper's 7 % at 5 ms and its both-ends penalty, but Fig. 8's first packets in 25 ms "
        "against the paper's 71 ms: Fig. 8 favours the per-packet cost the profile has.",
        "Downstream's first 11 packets carry fewer data packets (not held: 8 against the "
        "paper's 6): the paper's PDA answered the first segment with a window update, "
        "tcplab's advertises its whole window from the start (Windows CE's receive-window "
        "behaviour is not documented).",
    ),
)
