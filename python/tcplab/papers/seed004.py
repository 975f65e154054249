"""Seed 004: Lee, Lee & Joe, CUBIC with a large initial window on a long fat satellite path.

J. Lee, W. Lee, I. Joe, "Initial Window-Based TCP Cubic Algorithm for Satellite
Environment" (in Korean). Linux 4.18 hosts, iperf3 for 10 s over an emulated 100 Mb/s link
with 600 ms RTT; Reno with the default initial window against CUBIC with initial windows of
256, 512, 2560 and 5120 segments. Table 1 gives the MBytes of each second and the 10 s total.

The paper proposes its CUBIC for the satellite side of a split-connection PEP (§2.2, §5); the
`pep` experiments put one between a short terrestrial hop and the satellite link and compare
the end-to-end transfer with the unsplit connection (docs/models/pep.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab import calibrate
from tcplab.errors import TcplabError
from tcplab.papers.pack import (
    HELD,
    NOT_HELD,
    TIE,
    Check,
    Exhibit,
    Experiment,
    Pack,
    Published,
    Results,
    Verdict,
)
from tcplab.report import display, plots

EXPERIMENT = "lfp-initial-window"
MIB = 2**20  # iperf3's "MBytes" are 2^20 bytes
CC = "hosts.client.tcp.cc"
IW = "hosts.client.tcp.initial_window"
# The receivers' initial window in segments (Linux's route initrwnd): above the buffer, so
# the whole 3 MiB window is open from the start.
WHOLE_WINDOW_RWND = 5120
# The same fields as the calibration grid sweeps them.
CC_SWEPT = "hosts.0.tcp.cc"
IW_SWEPT = "hosts.0.tcp.initial_window"
SECONDS = 10
# Linux's default initial window (RFC 6928) for the Reno row, which the paper leaves at it.
LINUX_IW = 10
# Table 1: (congestion control, initial window) → MBytes in each of the 10 seconds, and the
# paper's total ("전송률" column).
TABLE1: dict[tuple[str, int], tuple[tuple[float, ...], float]] = {
    ("reno", LINUX_IW): ((0.09, 0.17, 0.50, 1.31, 1.75, 2.12, 4.12, 4.25, 3.88, 4.12), 22.30),
    ("cubic", 256): ((1.88, 0.19, 1.38, 1.25, 2.12, 4.00, 4.75, 3.12, 4.62, 4.12), 27.43),
    ("cubic", 512): ((1.88, 0.19, 1.38, 1.25, 2.12, 4.00, 4.75, 3.25, 4.50, 4.25), 27.57),
    ("cubic", 2560): ((3.0, 0.82, 0.19, 0.93, 3.00, 3.50, 4.75, 3.50, 4.25, 4.38), 28.32),
    ("cubic", 5120): ((3.0, 0.82, 0.19, 0.93, 2.88, 3.62, 4.75, 3.38, 4.38, 4.25), 28.20),
}
ROWS = tuple(TABLE1)
BEST = ("cubic", 2560)
RENO = ("reno", LINUX_IW)
# The paper's headline: CUBIC with IW 2560 moved 26 % more than Reno in 10 s.
PAPER_GAIN = TABLE1[BEST][1] / TABLE1[RENO][1] - 1
EARLY_SECONDS = 2
UNSPLIT = "pep-unsplit"
SPLIT = "pep-split"
SATELLITE_CC = "peps.0.tcp_server_side.cc"
SATELLITE_IW = "peps.0.tcp_server_side.initial_window"
# The PEP's satellite side: the client's own TCP, the paper's CUBIC, and Hybla (§5 names it
# among the satellite TCPs a PEP runs).
PEP_ROWS = (RENO, BEST, ("hybla", LINUX_IW))
TERRESTRIAL_DELAY = "5ms"
# Table 1's rows measured on this machine's kernel through the emulator, committed beside
# the grid (tcplab calibrate calibration/seed004.toml --kernel-only, docs/calibration.md).
KERNEL_GRID = Path(__file__).resolve().parents[3] / "calibration" / "seed004.toml"


def _name(row: tuple[str, int]) -> str:
    return f"{row[0]}, IW {row[1]}"


def grid(quick: bool) -> dict[str, Any]:
    """The paper's five rows as a zip sweep of the sender's congestion control and IW.

    The hosts are tcplab's linux-4.18 stack profile (SACK, timestamps, byte counting, 4 MiB
    send buffer, and a 3 MiB receive buffer: the window Linux 4.18 advertises at most, half
    of tcp_rmem's 6 MiB maximum with tcp_adv_win_scale = 1). The paper's per-second peak,
    4.75 MBytes ≈ 2.85 MiB per 600 ms round trip, matches that window.
    The bottleneck queue holds one bandwidth-delay product, 100 Mb/s × 0.6 s = 7.5 MB.
    A loss-free path has nothing random in it, so one repetition is the whole answer (quick
    or not: the run takes milliseconds).
    """
    # cc and initial_window are the first row's; the sweep sets the sender's per row (the
    # receiver's congestion control plays no part). The receiver opens its whole window at
    # once (ip route ... initrwnd, here 5120 segments, more than the 3 MiB buffer holds):
    # with Linux's default of 10 segments growing per segment received, a large initial
    # window could not leave in the first round trip and the paper's initial-window results
    # could not arise; the kernel rows (calibration/seed004.toml) are measured the same way.
    tcp = {
        "profile": "linux-4.18",
        "cc": "reno",
        "initial_window": LINUX_IW,
        "initial_rwnd": WHOLE_WINDOW_RWND,
    }
    return {
        "name": "seed004-lfp",
        "backend": "sim",
        "duration": f"{SECONDS}s",
        "seed": 1,
        "repetitions": 1,
        "hosts": [{"name": "client", "tcp": dict(tcp)}, {"name": "server", "tcp": dict(tcp)}],
        "links": [
            {
                "kind": "ethernet",
                "rate": "100Mbps",
                "delay": "300ms",
                "queue": {"limit": "7500000B"},
            }
        ],
        "app": {"kind": "bulk"},
        "sweep": {
            "mode": "zip",
            CC: [cc for cc, _ in ROWS],
            IW: [iw for _, iw in ROWS],
        },
    }


def pep_path(quick: bool) -> dict[str, Any]:
    """Table 1's path behind a terrestrial hop, client and server as in Table 1's Reno row.

    A 100 Mb/s, 5 ms hop from the client to the gateway, then the satellite link as in
    `grid`; 10 s of bulk transfer, one loss-free run.
    """
    scenario = grid(quick)
    del scenario["sweep"]
    terrestrial = {**scenario["links"][0], "delay": TERRESTRIAL_DELAY}
    return {**scenario, "name": "seed004-pep-unsplit", "links": [terrestrial, *scenario["links"]]}


def pep_split(quick: bool) -> dict[str, Any]:
    """`pep_path` with a PEP at the gateway: the client's Reno on the terrestrial side, each
    of PEP_ROWS on the satellite side, and a 4 MiB relay."""
    scenario = pep_path(quick)
    tcp = scenario["hosts"][0]["tcp"]
    pep = {
        "name": "gateway",
        "after_link": 0,
        "buffer": "4MiB",
        "tcp_client_side": dict(tcp),
        "tcp_server_side": dict(tcp),
    }
    return {
        **scenario,
        "name": "seed004-pep-split",
        "peps": [pep],
        "sweep": {
            "mode": "zip",
            SATELLITE_CC: [cc for cc, _ in PEP_ROWS],
            SATELLITE_IW: [iw for _, iw in PEP_ROWS],
        },
    }


def end_to_end(results: Results) -> pd.DataFrame:
    """Bytes the server read in 10 s and the end-to-end goodput, unsplit and with each PEP."""
    unsplit = results.means(UNSPLIT).iloc[0]
    rows = [{"path": f"unsplit ({_name(RENO)})", "bytes_delivered": unsplit["bytes_delivered"],
             "goodput_bps": unsplit["goodput_bps"]}]  # fmt: skip
    split = results.means(SPLIT).set_index([SATELLITE_CC, SATELLITE_IW])
    for row in PEP_ROWS:
        point = split.loc[[row]].iloc[0]
        rows.append(
            {
                "path": f"PEP, satellite side {_name(row)}",
                "bytes_delivered": point["bytes_delivered"],
                "goodput_bps": point["goodput_bps"],
            }
        )
    return pd.DataFrame(rows)


def per_second(results: Results) -> dict[tuple[str, int], list[float]]:
    """tcplab's delivered bytes in each second, per row of Table 1 (mean over runs)."""
    series = results.series(EXPERIMENT)
    means = series.groupby([CC, IW, "t_s"])["interval_bytes"].mean()
    return {row: [float(means[(*row, float(t))]) for t in range(1, SECONDS + 1)] for row in ROWS}


@cache
def kernel_per_second() -> dict[tuple[str, int], list[float]]:
    """The kernel's bytes read in each second, per row of Table 1, from the committed
    results of calibration/seed004.toml; empty where they are not (an installed package)."""
    try:
        kernel = calibrate.load_kernel(calibrate.load_grid(KERNEL_GRID))
    except TcplabError:
        return {}
    summary = kernel.summary.set_index("point")
    cc, iw = summary[CC_SWEPT].to_dict(), summary[IW_SWEPT].to_dict()
    rows = {}
    for point, group in kernel.series.groupby("point"):
        row = (str(cc[point]), int(iw[point]))
        rows[row] = [float(size) for size in group.sort_values("t_s")["interval_bytes"]]
    return rows


def _total(results: Results, row: tuple[str, int]) -> float:
    return sum(per_second(results)[row])


def _kernel_total(row: tuple[str, int]) -> float | None:
    seconds = kernel_per_second().get(row)
    return None if seconds is None else sum(seconds)


def _mib(size: float) -> str:
    return f"{size / MIB:.2f} MiB"


def _gain(results: Results) -> float:
    return _total(results, BEST) / _total(results, RENO) - 1


# ---- checks --------------------------------------------------------------------------------


def _cubic_beats_reno(results: Results) -> Verdict:
    reno = _total(results, RENO)
    rows = [row for row in ROWS if row[0] == "cubic"]
    held = all(_total(results, row) > reno for row in rows)
    evidence = f"reno {_mib(reno)}; " + ", ".join(
        f"{_name(row)}: {_mib(_total(results, row))}" for row in rows
    )
    return Verdict(HELD if held else NOT_HELD, evidence)


# A row within 1 % of IW 2560's total is a tie: the paper's own margin over IW 5120 is
# 0.4 % (28.32 against 28.20 MBytes), less than one 10 s run can resolve.
BEST_TIE = 0.01


def _iw2560_is_best(results: Results) -> Verdict:
    best = _total(results, BEST)
    others = {row: _total(results, row) for row in ROWS if row != BEST}
    more = [row for row, total in others.items() if total > best * (1 + BEST_TIE)]
    ties = [row for row, total in others.items() if abs(total / best - 1) <= BEST_TIE]
    evidence = f"{_name(BEST)}: {_mib(best)}"
    if more:
        evidence += "; more: " + ", ".join(f"{_name(row)} {_mib(others[row])}" for row in more)
    if ties:
        evidence += f"; within {BEST_TIE:.0%} (a tie): " + ", ".join(
            f"{_name(row)} {_mib(others[row])}" for row in ties
        )
    return Verdict(NOT_HELD if more else TIE if ties else HELD, evidence)


# "26 % more" is the paper's headline; a gain within 10 points of it is the same finding.
GAIN_BAND = 0.10


def _gain_is_the_papers(results: Results) -> Verdict:
    gain = _gain(results)
    kernel = [_kernel_total(row) for row in (BEST, RENO)]
    evidence = f"tcplab {gain:+.0%} ({_mib(_total(results, BEST))} against "
    evidence += f"{_mib(_total(results, RENO))})"
    if kernel[0] is not None and kernel[1] is not None:
        evidence += f"; this machine's kernel {kernel[0] / kernel[1] - 1:+.0%}"
    evidence += (
        f"; the paper's Table 1 {PAPER_GAIN:+.0%}, its text 26 % (held within "
        f"{100 * GAIN_BAND:.0f} points)"
    )
    held = abs(gain - PAPER_GAIN) <= GAIN_BAND
    return Verdict(HELD if held else NOT_HELD, evidence)


def _larger_iw_fills_sooner(results: Results) -> Verdict:
    seconds = per_second(results)
    early = {row: sum(seconds[row][:EARLY_SECONDS]) for row in ROWS}
    cubic = sorted((row for row in ROWS if row[0] == "cubic"), key=lambda row: row[1])
    rising = all(early[a] <= early[b] for a, b in zip(cubic, cubic[1:], strict=False))
    held = rising and all(early[row] > early[RENO] for row in cubic)
    evidence = f"first {EARLY_SECONDS} s: " + ", ".join(
        f"{_name(row)} {_mib(early[row])}" for row in ROWS
    )
    return Verdict(HELD if held else NOT_HELD, evidence)


def _pep_beats_unsplit(results: Results) -> Verdict:
    table = end_to_end(results).set_index("path")["bytes_delivered"]
    unsplit, best = table.iloc[0], table[f"PEP, satellite side {_name(BEST)}"]
    evidence = ", ".join(f"{path}: {_mib(size)}" for path, size in table.items())
    return Verdict(HELD if best > unsplit else NOT_HELD, evidence)


# ---- exhibits ------------------------------------------------------------------------------


def table1(results: Results) -> pd.DataFrame:
    """Table 1's layout: each row of the paper followed by this machine's kernel's (where
    measured) and tcplab's, MiB per second."""
    seconds = per_second(results)
    kernel = kernel_per_second()
    columns = [f"{t - 1}.00-{t}.00" for t in range(1, SECONDS + 1)]
    rows = []
    for row in ROWS:
        paper, total = TABLE1[row]
        ours = [size / MIB for size in seconds[row]]
        sources: list[tuple[str, Sequence[float], float]] = [("paper", paper, total)]
        if row in kernel:
            measured = [size / MIB for size in kernel[row]]
            sources.append(("kernel", measured, sum(measured)))
        sources.append(("tcplab", ours, sum(ours)))
        for source, values, whole in sources:
            cells = [f"{value:.2f}" for value in (*values, whole)]
            rows.append(dict(zip(["", *columns, "total"], [f"{_name(row)} ({source})", *cells],
                                 strict=True)))  # fmt: skip
    return pd.DataFrame(rows)


def _seconds_frame(seconds: Mapping[Any, list[float]]) -> pd.DataFrame:
    """Bytes per second of each row (a Table 1 row or a label), as per_interval plots them."""
    return pd.DataFrame(
        [
            {
                "label": _name(row) if isinstance(row, tuple) else row,
                "t_s": float(t),
                "interval_bytes": size,
            }  # fmt: skip
            for row in sorted(seconds, key=lambda key: ROWS.index(key) if key in ROWS else -1)
            for t, size in enumerate(seconds[row], start=1)
        ]
    )


def exhibits(results: Results) -> list[Exhibit]:
    seconds = per_second(results)
    kernel = kernel_per_second()
    totals = pd.DataFrame(
        [
            {"label": _name(row), "source": source, "bytes_delivered": value}
            for row in ROWS
            for source, value in (
                ("paper", TABLE1[row][1] * MIB),
                ("kernel", _kernel_total(row)),
                ("tcplab", sum(seconds[row])),
            )
            if value is not None
        ]
    )
    paper = {row: [size * MIB for size in TABLE1[row][0]] for row in ROWS}
    pep = end_to_end(results)
    return [
        Exhibit(
            "Table 1: MiB per second",
            "The paper's rows (iperf3 at the sender: bytes its application wrote each second), "
            "this machine's kernel's through the emulator (calibration/seed004.toml) and "
            "tcplab's (bytes the receiving application read each second).",
            table1(results),
        ),
        *(
            Exhibit(
                f"Fig. {number}: {_name(row)}, per second",
                "tcplab's bytes read each second"
                + (" and this machine's kernel's" if row in kernel else "")
                + "; crosses: the paper's Table 1 row (its figure's values), at each "
                "second's middle.",
                plots.per_interval(
                    _seconds_frame(
                        {
                            **({f"kernel, {_name(row)}": kernel[row]} if row in kernel else {}),
                            f"tcplab, {_name(row)}": seconds[row],
                        }
                    ),
                    series=["label"],
                    paper=[
                        plots.PaperPoints(
                            "paper (Table 1)",
                            [(t + 0.5, size * MIB) for t, size in enumerate(TABLE1[row][0])],
                        )
                    ],
                ),
            )
            for number, row in zip(range(2, 7), ROWS, strict=True)  # Reno first, as Fig. 2
        ),
        Exhibit(
            "10 s transfer per configuration",
            "The paper's totals beside the kernel's and tcplab's.",
            plots.bar_chart(totals, "label", "bytes_delivered", series="source"),
        ),
        Exhibit(
            "tcplab: delivered per second",
            "Bytes read by the receiving application in each second.",
            plots.per_interval(_seconds_frame(seconds), series=["label"]),
        ),
        *(
            [
                Exhibit(
                    "Kernel: delivered per second",
                    "This machine's Linux through the emulator, drawn the same way.",
                    plots.per_interval(_seconds_frame(kernel), series=["label"]),
                )
            ]
            if kernel
            else []
        ),
        Exhibit(
            "Paper: transferred per second",
            "Table 1 drawn the same way (iperf3's sender-side count).",
            plots.per_interval(_seconds_frame(paper), series=["label"]),
        ),
        Exhibit(
            "End to end through a PEP",
            f"Client behind a {TERRESTRIAL_DELAY} terrestrial hop; the server's bytes in "
            f"{SECONDS} s and the end-to-end goodput, over the unsplit connection and through "
            "a PEP whose satellite side runs each configuration.",
            pep.assign(
                MiB=[f"{size / MIB:.2f}" for size in pep["bytes_delivered"]],
                goodput=[display.rate(rate) for rate in pep["goodput_bps"]],
            )[["path", "MiB", "goodput"]],
        ),
        Exhibit(
            "End-to-end goodput with and without a PEP",
            "The same, as bars.",
            plots.bar_chart(pep, "path", "goodput_bps"),
        ),
    ]


def _published_total(row: tuple[str, int]) -> Published:
    return Published(
        f"10 s transfer, {_name(row)}",
        "§4, Table 1",
        TABLE1[row][1] * MIB,
        _mib,
        lambda results: _total(results, row),
    )


def _kernel_published_total(row: tuple[str, int]) -> Published:
    return Published(
        f"10 s transfer, {_name(row)}, this machine's kernel",
        "§4, Table 1",
        TABLE1[row][1] * MIB,
        _mib,
        lambda results: _kernel_total(row),
        note="this machine's Linux through the emulator, as committed in calibration/seed004/"
        "kernel/ (tcplab calibrate calibration/seed004.toml --kernel-only)",
    )


PACK = Pack(
    name="seed004",
    title="Lee, Lee & Joe: CUBIC with a large initial window over a 100 Mb/s, 600 ms path",
    citation=(
        'J. Lee, W. Lee, I. Joe, "Initial Window-Based TCP Cubic Algorithm for Satellite '
        'Environment" (위성 환경에 적합한 초기 윈도우 기반의 TCP Cubic 알고리즘), '
        "Hanyang University"
    ),
    summary=(
        "10 s bulk transfers over 100 Mb/s with 300 ms each way: Reno with Linux's default "
        "initial window of 10 segments against CUBIC with initial windows of 256, 512, 2560 "
        "and 5120 segments, second by second as in the paper's Table 1."
    ),
    experiments=(
        Experiment(
            EXPERIMENT,
            "sender's congestion control and initial window, zipped as Table 1's rows; "
            "stack profile linux-4.18 (3 MiB receive window); 100 Mb/s, 300 ms each way, "
            "queue of one BDP (7.5 MB)",
            grid,
        ),
        Experiment(
            UNSPLIT,
            f"Table 1's Reno row behind a 100 Mb/s, {TERRESTRIAL_DELAY} terrestrial hop, no PEP",
            pep_path,
        ),
        Experiment(
            SPLIT,
            "the same path with a PEP at the gateway: Reno IW 10 on the terrestrial side; on "
            "the satellite side reno IW 10, cubic IW 2560 or hybla IW 10; 4 MiB relay",
            pep_split,
        ),
    ),
    published=(
        *(_published_total(row) for row in ROWS),
        *(_kernel_published_total(row) for row in ROWS),
        Published(
            "gain of CUBIC IW 2560 over Reno in 10 s",
            "§4",
            PAPER_GAIN,
            lambda share: display.percent(share),
            _gain,
        ),
    ),
    checks=(
        Check(
            "CUBIC with a raised initial window transfers more in 10 s than Reno",
            "§4, Table 1",
            _cubic_beats_reno,
        ),
        Check(
            "An initial window of 2560 segments gives the largest 10 s transfer",
            "§4, Table 1",
            _iw2560_is_best,
        ),
        Check(
            "CUBIC with an initial window of 2560 segments moves about 26 % more than Reno in "
            "10 s",
            "§4, Table 1",
            _gain_is_the_papers,
        ),
        Check(
            f"A larger initial window fills the path sooner (bytes in the first "
            f"{EARLY_SECONDS} s rise with the initial window, all above Reno)",
            "§3; Table 1, first seconds",
            _larger_iw_fills_sooner,
        ),
        Check(
            "Through a split-connection PEP whose satellite side runs CUBIC with an initial "
            "window of 2560 segments, the end-to-end transfer beats the unsplit connection",
            "§2.2, §5",
            _pep_beats_unsplit,
        ),
    ),
    differences=(
        "The kernel rows are this machine's Linux (a newer kernel than the paper's 4.18) "
        "measured through tcplab's emulator on the same path, with the same fixed buffers "
        "(no autotuning) and an Ethernet-framed link whose queue holds 5000 full packets; "
        "they count bytes the receiving application read, as tcplab does.",
        "The paper's per-second numbers are iperf3's client side: bytes the sending "
        "application wrote into its socket each second, which in the first seconds is mostly "
        "the send buffer filling (1.88 MBytes in the first second with an initial window of "
        "256 segments, about 0.37 MB, cannot all have arrived). tcplab counts bytes the "
        "receiving application read, so its first seconds are lower and its totals leave out "
        "what was still buffered at the end.",
        "The window is bounded by what Linux 4.18 allows at most (3 MiB advertised receive "
        "window, 4 MiB send buffer), held fixed; Linux's buffer autotuning, which starts the "
        "windows small and grows them, is not modelled.",
        "The paper's CUBIC is Linux's with a modified initial window; tcplab's follows RFC "
        "9438 without HyStart++, on a path with no other traffic and no random loss, so its "
        "runs are deterministic (one repetition each).",
        "The emulated link is an Ethernet-framed 100 Mb/s hop with a drop-tail queue of one "
        "bandwidth-delay product; the paper does not give its emulator's queue.",
        "The paper measures no PEP; it proposes its CUBIC for a PEP's satellite side (§5). "
        f"The PEP experiments are tcplab's test of that proposal: the {TERRESTRIAL_DELAY} "
        "terrestrial hop, the 4 MiB relay and the Hybla row are tcplab's choices, and the "
        "simulated PEP relays at no CPU cost (docs/models/pep.md).",
    ),
    exhibits=exhibits,
    investigations=(
        "IW 2560 against IW 5120 is a tie: both open the whole 3 MiB window (2,170 "
        "segments) in the first round trip, so they move the same 43.13 MiB; the paper's "
        "margin is 0.4 %.",
        "Why the paper's totals are 0.66-0.88 of the kernel's, its gain of IW 2560 over Reno "
        "26 % where simulator and kernel both find 69 %, and its seconds 2-3 collapse "
        "(arithmetic, not a run): simulator and kernel agree within 7 % on the loss-free "
        "path described, and neither collapses; the paper's rows need losses. Linux's "
        "netem, the usual delay emulator, holds every delayed packet and by default at most "
        "1000: with 300 ms on the data direction that caps delivery at 1000 x 1448 B / "
        "0.3 s = 4.6 MiB/s, the paper's 4.75 MBytes peak within 3 %, and drops whatever "
        "exceeds 1000 in flight: IW 2560 loses some 1,560 of its first flight, IW 256 and "
        "512 hundreds when slow start passes 1,000 in the second round trip (the rows that "
        "collapse), Reno only after seven or more round trips, about 4 s (the row that does "
        "not). tcplab's links and the emu emulator queue before serialization and hold no "
        "limit on packets in propagation, so the hypothesis is not run here.",
    ),
)
