"""Seed 000: Kim & Song (2000), TCP/IP over a 2.048 Mb/s KOREASAT GEO link.

N.-S. Kim and J.-G. Song, "Performance and Quality Evaluation of TCP/IP Traffic over
Satellite ATM Networks" (in Korean), 2000. Two Windows NT 4.0 PCs (no RFC 1323 window
scaling, no RFC 2018 SACK, socket buffers at most 64 KB) ran NetPerf TCP_STREAM across an
ATM LANE path whose bottleneck is a 2.048 Mb/s QPSK rate-3/4 K=7 Viterbi satellite hop
(RTT ≈ 550 ms), for socket buffers of 4 to 32 KB, several message sizes and Eb/No values,
three measurements per point (§4).

The paper's figures are not in the text this pack was written from, so only the numbers its
text states are compared: the 953 kb/s window bound (§2.2.1), 710 kb/s at 8 dB with 32 KB
buffers and 2048 KB messages (§4.2, Fig. 11), Table 3's Eb/No–BER–CLR rows, and the
videoconference's Table 4 and transfer time (§4.4; seed000_video).
"""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd

from tcplab import api
from tcplab.analytic import ber_curves
from tcplab.analytic.framing import FRAMING
from tcplab.papers import seed000_atm, seed000_ftp, seed000_video
from tcplab.papers.pack import (
    Check,
    Exhibit,
    Experiment,
    Pack,
    Published,
    Results,
    Verdict,
    above,
    every,
    rises,
)
from tcplab.report import display, plots

EXPERIMENT = "geo-grid"
KIB = 1024
BUFFERS_KIB = (4, 8, 16, 32)
EBNO_DB = (6.0, 6.5, 7.0, 7.5, 8.0)
# Fig. 11 uses 2048 KB writes; a small one (512 B, below one MSS) stands for the small end
# of Figs. 5-8's message-size axis, whose values the text does not give.
MESSAGES = (512, 2048 * KIB)
FIG11_MESSAGE = 2048 * KIB
RTT_S = 0.550  # the paper's round-trip time (§2.2.1, §4.2)
PAPER_WINDOW_BOUND_BPS = 64 * 1024 * 8 / RTT_S  # "64 kbytes / 550 ms ≈ 953,000 bits/second"
FIG11_BPS = 710e3
FIG11_EBNO = 8.0
LOW_EBNO = 6.0
FIGS_5_7_EBNO = (6.5, 8.0)  # the Eb/No of Figs. 5-6 and 7-8, where §4.1 states the trend
BUFFER_PATHS = ("hosts.client.tcp.sndbuf", "hosts.client.tcp.rcvbuf",
                "hosts.server.tcp.sndbuf", "hosts.server.tcp.rcvbuf")  # fmt: skip
BUFFER = BUFFER_PATHS[0]
EBNO = "links.0.ebno_db"
MESSAGE = "app.message_size"

# Windows NT 4.0's TCP as the paper describes it (Table 2): the `windows-nt4` stack profile
# (Reno, no window scaling, no SACK, no timestamps, delayed ACKs); the socket buffers are
# the experiment's own.
PROFILE = "windows-nt4"


def scenario(quick: bool, buffer: str = "32KiB") -> dict[str, Any]:
    """The GEO path without its sweep: both hosts' socket buffers at `buffer`."""
    tcp = {"profile": PROFILE, "sndbuf": buffer, "rcvbuf": buffer}
    return {
        "name": "seed000-geo",
        "backend": "sim",
        # NetPerf's default test is 10 s; 100 s per point averages over more loss events.
        "duration": "30s" if quick else "100s",
        "seed": 1,
        "repetitions": 2 if quick else 3,
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": dict(tcp)}],
        "links": [
            {
                "kind": "p2p",
                "rate": "2.048Mbps",
                "delay": "275ms",
                "ber_curve": "koreasat-2000",
                "ebno_db": FIG11_EBNO,
            }
        ],
        "app": {"kind": "bulk", "message_size": "2048KiB"},
    }


def grid(quick: bool) -> dict[str, Any]:
    """Socket buffer × Eb/No × message size. The buffer is one dimension of four fields
    (each host's send and receive buffer, as NetPerf's -s/-S set them), so the sweep is a
    zip over the whole grid written out."""
    combinations = list(itertools.product(BUFFERS_KIB, EBNO_DB, MESSAGES))
    sweep: dict[str, Any] = {"mode": "zip"}
    for path in BUFFER_PATHS:
        sweep[path] = [f"{kib}KiB" for kib, _, _ in combinations]
    sweep[EBNO] = [ebno for _, ebno, _ in combinations]
    sweep[MESSAGE] = [f"{size}B" for _, _, size in combinations]
    return {**scenario(quick), "sweep": sweep}


def _point(results: Results, buffer_kib: int, ebno: float, message: int) -> pd.Series:
    means = results.means(EXPERIMENT)
    rows = means[
        (means[BUFFER] == buffer_kib * KIB) & (means[EBNO] == ebno) & (means[MESSAGE] == message)
    ]
    return rows.iloc[0]


def _fig11(results: Results) -> float:
    return float(_point(results, 32, FIG11_EBNO, FIG11_MESSAGE)["goodput_bps"])


def model_window_bound(buffer: str) -> float:
    """tcplab's model backend: W/RTT for this path with `buffer` socket buffers, counting
    headers, serialization and the delayed-ACK RTT (docs/models/analytic-tcp.md)."""
    spec = scenario(quick=True, buffer=buffer)
    spec["repetitions"] = 1
    result = api.run(spec, backend="model")
    return float(result.summary["model"]["window_bound_bps"])


def _kbps(bps: float) -> str:
    return display.rate(bps)


# ---- checks --------------------------------------------------------------------------------


def _rises_with_buffer(results: Results) -> Verdict:
    means = results.means(EXPERIMENT)
    cases = []
    shown = means[means[EBNO].isin(FIGS_5_7_EBNO)]
    for (ebno, message), group in shown.groupby([EBNO, MESSAGE]):
        held, falls = rises(group, BUFFER)
        low, high = group.sort_values(BUFFER)["goodput_bps"].iloc[[0, -1]]
        text = f"{_kbps(low)} at 4 KiB → {_kbps(high)} at 32 KiB"
        if falls:
            text += f", falls between {', '.join(f'{a // KIB}-{b // KIB} KiB' for a, b in falls)}"
        cases.append((f"{ebno} dB, {plots.format_value(MESSAGE, message)}", held, text))
    return every(cases)


def _rises_with_ebno(results: Results) -> Verdict:
    means = results.means(EXPERIMENT)
    cases = []
    for message, group in means[means[BUFFER] == 32 * KIB].groupby(MESSAGE):
        held, falls = rises(group, EBNO)
        low, high = group.sort_values(EBNO)["goodput_bps"].iloc[[0, -1]]
        text = f"{_kbps(low)} at {EBNO_DB[0]} dB → {_kbps(high)} at {EBNO_DB[-1]} dB"
        if falls:
            text += f", falls between {', '.join(f'{a}-{b} dB' for a, b in falls)}"
        cases.append((f"32 KiB, {plots.format_value(MESSAGE, message)}", held, text))
    return every(cases)


def _half_at_low_ebno(results: Results) -> Verdict:
    means = results.means(EXPERIMENT)
    cases = []
    for message, group in means[means[BUFFER] == 32 * KIB].groupby(MESSAGE):
        best = group.iloc[group["goodput_bps"].argmax()]
        low = group[group[EBNO] <= LOW_EBNO]["goodput_bps"].max()
        share = low / best["goodput_bps"]
        text = (
            f"{_kbps(low)} at ≤ {LOW_EBNO} dB is {100 * share:.0f} % of the best, "
            f"{_kbps(best['goodput_bps'])} at {best[EBNO]} dB"
        )
        cases.append((f"32 KiB, {plots.format_value(MESSAGE, message)}", share < 0.5, text))
    return every(cases)


def error_free(quick: bool) -> tuple[float, float]:
    """Goodput (mean, 95 % half-width) of Fig. 11's point (32 KiB buffers, 2048 KiB
    messages) on the same path without bit errors: what the window alone allows, counting
    slow start and headers."""
    spec = scenario(quick)
    del spec["links"][0]["ber_curve"], spec["links"][0]["ebno_db"]
    summary = api.run(spec).summary
    return float(summary["goodput_bps"]), float(summary.get("goodput_bps_ci95") or 0.0)


def _errors_cost_goodput(results: Results) -> Verdict:
    # §4.2: at 8 dB goodput stays below the window bound "because, besides the limited
    # window, packet loss from the satellite ATM link's errors affects performance". Only
    # the window bounds tcplab's goodput by construction; whether the errors cost goodput
    # too is tested against the same path without them.
    point = _point(results, 32, FIG11_EBNO, FIG11_MESSAGE)
    clean, clean_ci = error_free(results.quick)
    status = above(clean, clean_ci, point["goodput_bps"], point.get("goodput_bps_ci95"))
    return Verdict(
        status,
        f"at {FIG11_EBNO} dB {display.rate(point['goodput_bps'], point.get('goodput_bps_ci95'))}"
        f", without bit errors {display.rate(clean, clean_ci)} "
        f"({point['goodput_bps'] / clean - 1:+.1%}); the window alone allows "
        f"{_kbps(32 * KIB * 8 / RTT_S)} (32 KiB / 550 ms)",
    )


# ---- exhibits ------------------------------------------------------------------------------


def _goodput_table(results: Results, message: int) -> pd.DataFrame:
    """tcplab's goodput per buffer size (rows) and Eb/No (columns), mean ± ci95."""
    means = results.means(EXPERIMENT)
    means = means[means[MESSAGE] == message]
    table: dict[str, list[str]] = {"socket buffer": [f"{kib} KiB" for kib in BUFFERS_KIB]}
    for ebno in EBNO_DB:
        column = []
        for kib in BUFFERS_KIB:
            row = means[(means[BUFFER] == kib * KIB) & (means[EBNO] == ebno)].iloc[0]
            ci95 = row.get("goodput_bps_ci95")
            column.append(display.rate(row["goodput_bps"], None if pd.isna(ci95) else ci95))
        table[f"{ebno} dB"] = column
    return pd.DataFrame(table)


def table3() -> pd.DataFrame:
    """Table 3 beside the curve tcplab applies, and what that BER does to a full packet."""
    framing = FRAMING["p2p"]
    bits = 8 * (1500 + framing.overhead_bytes)
    rows = []
    for (ebno, ber), (_, clr) in zip(
        ber_curves.KOREASAT_2000_BER, ber_curves.KOREASAT_2000_CLR, strict=True
    ):
        used = ber_curves.ber_from_ebno("koreasat-2000", ebno)
        rows.append(
            {
                "Eb/No (dB)": f"{ebno:.1f}",
                "paper BER": f"{ber:.1e}",
                "tcplab BER (koreasat-2000)": f"{used:.1e}",
                "paper CLR": f"{clr:.1e}",
                "tcplab loss of a 1500-byte packet": f"{1 - (1 - used) ** bits:.2e}",
            }
        )
    return pd.DataFrame(rows)


def exhibits(results: Results) -> list[Exhibit]:
    means = results.means(EXPERIMENT)
    bounds = [
        plots.ReferenceLine(PAPER_WINDOW_BOUND_BPS, "window bound 64 KB / 550 ms (paper)"),
        plots.ReferenceLine(FIG11_BPS, "paper Fig. 11: 8 dB, 32 KB, 2048 KB"),
    ]
    exhibits = []
    for message in sorted(MESSAGES, reverse=True):
        shown = plots.format_value(MESSAGE, message)
        exhibits += [
            Exhibit(
                f"Goodput against socket buffer, {shown} messages",
                "tcplab mean with 95 % confidence bars, one line per Eb/No (cf. the paper's "
                "Figs. 5 and 7); dashed: the paper's 64 KB window bound and its Fig. 11 point.",
                plots.metric_vs_param(
                    means[means[MESSAGE] == message],
                    BUFFER,
                    "goodput_bps",
                    series=EBNO,
                    reference_lines=bounds,
                ),
            ),
            Exhibit(
                f"tcplab goodput, {shown} messages",
                "Mean ± 95 % half-width per socket buffer (rows) and Eb/No (columns).",
                _goodput_table(results, message),
            ),
        ]
    exhibits += [
        Exhibit(
            "Goodput against Eb/No, 2 MiB messages",
            "tcplab, one line per socket buffer (cf. the paper's Figs. 9 and 11); the marker: "
            "the paper's 710 kb/s at 8 dB, the one point of Fig. 11 its text gives.",
            plots.metric_vs_param(
                means[means[MESSAGE] == FIG11_MESSAGE],
                EBNO,
                "goodput_bps",
                series=BUFFER,
                paper=[plots.PaperPoints("paper, Fig. 11 (32 KB)", [(FIG11_EBNO, FIG11_BPS)])],
            ),
        ),
        Exhibit(
            "Table 3: Eb/No, BER and CLR",
            "The paper's measured corrected BER and cell loss ratio, the BER tcplab applies "
            "(ber_curve koreasat-2000, log-interpolated between these rows), and the loss "
            "probability that BER gives a 1500-byte IP packet on the simulated link "
            "(1 − (1 − BER)^bits, independent bit errors).",
            table3(),
        ),
    ]
    return exhibits


PACK = Pack(
    name="seed000",
    title="Kim & Song (2000): TCP/IP over a 2.048 Mb/s KOREASAT GEO link",
    citation=(
        'N.-S. Kim, J.-G. Song, "Performance and Quality Evaluation of TCP/IP Traffic over '
        'Satellite ATM Networks" (위성 ATM 망에서 TCP/IP 트래픽의 전송성능 및 품질평가), 2000'
    ),
    summary=(
        "NetPerf TCP_STREAM between Windows NT 4.0 hosts (no window scaling, no SACK) over "
        "a 2.048 Mb/s GEO hop with 275 ms each way, for socket buffers 4-32 KiB, Eb/No "
        "6.0-8.0 dB (bit errors from the paper's own Eb/No-BER table) and messages of 512 B "
        "and 2048 KiB."
    ),
    experiments=(
        Experiment(
            EXPERIMENT,
            "socket buffer (both hosts' send and receive buffers) × Eb/No × message size; "
            f"stack profile {PROFILE}; 2.048 Mb/s, 275 ms each way",
            grid,
        ),
        *seed000_video.EXPERIMENTS,
        *seed000_atm.EXPERIMENTS,
        *seed000_ftp.EXPERIMENTS,
    ),
    published=(
        Published(
            "window bound W/RTT with a 64 KB window",
            "§2.2.1",
            PAPER_WINDOW_BOUND_BPS,
            _kbps,
            lambda results: model_window_bound("64KiB"),
            "tcplab: the model backend's W/RTT for 64 KiB buffers, which counts the TCP/IP "
            "and PPP header bytes and adds the serialization of a segment and its ACK to "
            "the 550 ms of propagation",
        ),
        Published(
            "goodput at 8 dB, 32 KB buffers, 2048 KB messages",
            "§4.2, Fig. 11",
            FIG11_BPS,
            _kbps,
            _fig11,
            "the paper's value exceeds 32 KiB / 550 ms = "
            f"{display.rate(32 * KIB * 8 / RTT_S)}, the most any 32 KiB window can carry, so "
            "its effective window was larger than its socket buffer (see known differences); "
            "tcplab's window is the socket buffer",
        ),
        *seed000_video.published(),
        *seed000_atm.published(),
        *seed000_ftp.published(),
    ),
    checks=(
        Check(
            "Goodput rises with the socket buffer size (at 6.5 and 8.0 dB)",
            "§4.1, Figs. 5 and 7; §5",
            _rises_with_buffer,
        ),
        Check(
            "Goodput rises with Eb/No (32 KB buffers)",
            "§4.2, Fig. 9",
            _rises_with_ebno,
        ),
        Check(
            "At Eb/No ≤ 6 dB goodput falls below 50 % of the best achievable",
            "abstract; §5",
            _half_at_low_ebno,
        ),
        Check(
            "At 8 dB the satellite link's errors, not only the window, keep goodput below "
            "the window bound (32 KB buffers, 2048 KB messages)",
            "§4.2, Fig. 11; abstract; §5",
            _errors_cost_goodput,
        ),
        *seed000_video.CHECKS,
        *seed000_ftp.CHECKS,
    ),
    differences=(
        "The paper's 710 kb/s at 8 dB with 32 KB socket buffers is more than a 32 KB window "
        "can carry in a 550 ms round trip (476.6 kb/s): its effective window must have been at "
        "least 710 kb/s × 0.55 s / 8 ≈ 48.8 KB (42 KB even at 477 ms, the shortest possible "
        "GEO round trip). The paper does not say why. The likeliest cause is Windows NT 4.0's "
        "AFD (the Winsock kernel driver), which accepts sends into its own buffers beyond "
        "SO_SNDBUF, so the socket buffer did not bound the data in flight, and NetPerf, "
        "counting bytes at the sender as sends complete, credits data still held there. "
        "tcplab bounds the window by the send and receive buffers exactly, so its goodput with "
        "32 KiB buffers stays under 476.6 kb/s; it is compared as is, not scaled.",
        "The main grid's path is one point-to-point hop (PPP framing) of 2.048 Mb/s and 275 ms "
        "each way; experiment lane-atm runs it as LANE over ATM cells (below). The cell tax "
        "lowers the link rate by about a tenth, which matters little on a path whose goodput "
        "is window-limited far below it.",
        "Bit errors hit the data direction only, independently per bit, at the BER of the "
        "paper's Table 3 (ber_curve koreasat-2000). After Viterbi decoding real errors come in "
        "bursts, so the same BER loses fewer packets on the real link than in tcplab; the "
        "paper does not say whether the return carrier was degraded too (ACK loss at these "
        "BERs would be under 0.4 %).",
        "Windows NT 4.0 is tcplab's windows-nt4 stack profile: Reno, no window scaling, SACK "
        "or timestamps, delayed ACKs after at most 200 ms, slow start from one segment (an "
        "assumption for that release) and tcplab's default minimum RTO; NT's own timer "
        "granularity and RTO constants are not reproduced.",
        "The message sizes of Figs. 5-8 are not given in the text; the pack uses 512 B and "
        "the 2048 KB of Fig. 11.",
        *seed000_video.DIFFERENCES,
        *seed000_atm.DIFFERENCES,
    ),
    exhibits=lambda results: (
        exhibits(results)
        + seed000_video.exhibits(results)
        + seed000_atm.exhibits(results)
        + seed000_ftp.exhibits(results)
    ),
    investigations=(
        "The audio's inter-arrival does not rise at 6.5 dB (not held; the video's does): "
        "alone on its connection at 64 kb/s, tcplab's audio never fills its 32 KiB buffer, "
        "so a loss delays messages without spacing them out. With both streams on one "
        "connection the audio slows down, but from 7.5 dB on (120 s runs: 49.6, 56.7, 107.9 "
        "and 286 ms at 8.0-6.5 dB), where the paper's kept its 46.5 ms; the paper's audio "
        "evidently shared the video's fate at 6.5 dB in a way its text does not describe.",
        "The errors' cost at 8 dB is a tie: without bit errors the same point gives "
        "440 kb/s, with them 427 +- 28 kb/s (3 %): at Table 3's BER of 2.5e-8 a 1500-byte "
        "packet is lost once in 3,300. The paper's 710 kb/s is beyond any 32 KB window "
        "(476.6 kb/s at 550 ms), so its own numbers cannot say what share of the shortfall "
        "from 953 kb/s the errors took either.",
        "Table 3's CLR cannot come from independent errors at its BER: a cell is lost to two "
        "or more errors in its 40 header bits, about 780 b^2 (1.1e-7 at 6.0 dB, 4.9e-13 at "
        "8.0 dB), while the paper measured 2.7e-4 and 2.7e-6, 20-100 times its own BER. That "
        "is what errors in bursts give (Viterbi decoding's output, one burst taking a whole "
        "header); no burst lengths for the link are given to fit a burst model.",
        *seed000_ftp.INVESTIGATIONS,
    ),
)
