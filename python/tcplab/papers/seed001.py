"""Seed 001: Kim, Park & Park, TCP over ATM UBR, UBR+EPD and ABR (EFCI, ERICA) switches.

M.-H. Kim, B.-J. Park, S.-S. Park, "A Study on the Performance Improvement of TCP using
ABR/UBR Services" (in Korean). YATS simulations of N TCP connections, each on its own VC
from a source through switch 1, a 150 Mb/s trunk of 500-3000 km, switch 2, to its
destination (Fig. 3); output buffers of 4096 cells, EPD threshold 3500 cells; TCP hosts
with 300 µs per packet, 64000-byte buffers, minimum RTO 100 ms; ABR sources with PCR
150 Mb/s, MCR 0, Nrm 32 (Fig. 4); efficiency and Jain fairness over 300 ms (§3.2).
Table 2: efficiency and fairness against the number of VCs and the trunk length for the
four switch schemes; Table 3: throughput and fairness with FRR and Nagle on and off, in a
LAN (1 km) and a WAN (1000 km); Fig. 9: the EFCI switch against RIF and RDF.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

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
    Status,
    Verdict,
    above,
    every,
)
from tcplab.report import display, plots

# ---- the paper's model (Figs. 3 and 4, §3) -----------------------------------------------

DURATION = "300ms"  # "전체 시뮬레이션 시간 (300 ms)", §3.2
LINK = "150Mbps"
BUFFER_CELLS = 4096
EPD_THRESHOLD = 3500
MSS = 2000  # the segment §3.2 works through: 2000 + 40 + 8 (LLC/SNAP) + 8 (AAL5) → 43 cells
KM_NS = 5_000  # propagation in fibre, 5 µs per km
VCS = (10, 20, 30, 40, 50, 60, 70)
KMS = (500, 1000, 1500, 2000, 2500, 3000)
# The VC rows of Table 2 give no trunk length. ERICA's VC rows (79.5-80.1 %) lie between its
# 500 km (80.2 %) and 1000 km (79.5 %) rows; they are taken at 500 km, the first distance row,
# and the distance rows at 50 VCs, the count §4.1 says the later experiments use.
VC_ROWS_KM = 500
DISTANCE_VCS = 50
LAN_KM, WAN_KM = 1, 1000
# YATS's TCP has no connection setup: tcpipsend::connectact hands the receiver its options
# and takes its window when the simulation is built, and the first segment leaves at once
# (sequence numbers start at 1, no SYN). A handshake would cost every connection a round
# trip, a tenth of the 300 ms at 3000 km.
HANDSHAKE = False
# YATS desynchronises its connections with random processing times (300-330 µs a packet)
# and random TCP clock phases; tcplab's CPU model is deterministic, so each connection
# opens at a random time in its first millisecond instead (about three packet times), and
# each point is the mean of several repetitions with derived seeds.
START_JITTER = "1ms"
REPETITIONS, QUICK_REPETITIONS = 8, 3

SCHEMES = ("UBR", "UBR+EPD", "EFCI", "ERICA")
# Switch 1's table per scheme (its output port onto the trunk is the bottleneck). The EFCI
# switch is YATS's binary switch, which marks CI in the RM cells passing a port whose queue
# is above its threshold (docs/models/abr.md); the thresholds are tcplab's defaults.
SWITCHES: dict[str, dict[str, Any]] = {
    "UBR": {"buffer_cells": BUFFER_CELLS, "discard": "drop-tail"},
    "UBR+EPD": {"buffer_cells": BUFFER_CELLS, "discard": "epd", "epd_threshold": EPD_THRESHOLD},
    "EFCI": {
        "buffer_cells": BUFFER_CELLS,
        "discard": "drop-tail",
        "feedback": "efci",
        "efci": {"mark": "relative-rate"},
    },
    "ERICA": {
        "buffer_cells": BUFFER_CELLS,
        "discard": "drop-tail",
        "feedback": "erica",
        "erica": {"measure_ccr": True},
    },
}
SWITCH = "routers.0.switch"
RIF, RDF = "abr.rif", "abr.rdf"

# Table 2: (efficiency %, fairness %) per scheme, for each VC count and each trunk length.
_T2_VCS = {
    10: ((44.6, 57.7, 83.3, 79.5), (87.8, 86.3, 99.6, 100.0)),
    20: ((58.7, 71.3, 71.3, 79.6), (65.0, 81.8, 98.7, 100.0)),
    30: ((65.6, 71.3, 72.5, 79.7), (63.2, 74.4, 90.2, 100.0)),
    40: ((64.3, 84.1, 65.5, 79.8), (64.9, 71.0, 82.9, 100.0)),
    50: ((65.1, 84.8, 68.1, 79.9), (68.7, 67.4, 86.1, 100.0)),
    60: ((60.7, 77.5, 71.0, 80.1), (69.0, 61.0, 78.2, 100.0)),
    70: ((62.9, 86.2, 67.5, 80.1), (68.2, 61.5, 65.9, 100.0)),
}
_T2_KMS = {
    500: ((61.3, 79.2, 67.1, 80.2), (65.0, 67.7, 87.6, 100.0)),
    1000: ((59.1, 72.6, 49.9, 79.5), (70.7, 73.8, 68.3, 100.0)),
    1500: ((56.9, 71.5, 56.7, 79.3), (57.2, 74.4, 82.0, 100.0)),
    2000: ((55.9, 70.1, 53.8, 79.0), (57.2, 81.3, 55.9, 100.0)),
    2500: ((55.5, 69.9, 50.9, 78.7), (62.6, 81.1, 82.6, 100.0)),
    3000: ((43.3, 68.3, 58.1, 78.5), (56.5, 78.6, 79.5, 100.0)),
}
# Table 3: throughput (Mb/s) and fairness (%) per scheme; rows are the TCP settings, each in
# the LAN then the WAN. "base" has both off; "nagle" and "frr" turn one on.
TCP_SETTINGS = ("base", "nagle", "frr")
_T3 = {
    ("base", LAN_KM): ((97.6, 120.6, 103.5, 121.4), (68.7, 66.9, 75.0, 100.0)),
    ("base", WAN_KM): ((65.0, 114.6, 75.2, 120.2), (56.5, 70.8, 75.4, 100.0)),
    ("nagle", LAN_KM): ((98.2, 126.8, 103.5, 121.4), (65.5, 68.6, 79.3, 100.0)),
    ("nagle", WAN_KM): ((70.8, 123.7, 75.2, 120.2), (59.2, 60.7, 75.4, 100.0)),
    ("frr", LAN_KM): ((100.2, 130.3, 104.8, 121.4), (61.7, 82.6, 75.3, 100.0)),
    ("frr", WAN_KM): ((80.3, 131.7, 98.4, 120.2), (60.8, 80.8, 82.9, 100.0)),
}
# Fig. 9's axes: the text names RIF = 1/8 with RDF = 1/512 as the most efficient point.
FIG9_RIF = (1 / 2, 1 / 8, 1 / 32)
FIG9_RDF = (1 / 8, 1 / 32, 1 / 512)
FIG9_BEST = (1 / 8, 1 / 512)


def network(
    vcs: int, km: float, tcp: dict[str, Any] | None = None, quick: bool = False
) -> dict[str, Any]:
    """Fig. 3: `vcs` sources, each `vcs` × 0.56 km from switch 1 (§3.1), a trunk of `km` to
    switch 2 and as many destinations; every link 150 Mb/s of cells with LLC/SNAP."""
    settings = {
        # 4.3BSD Reno as the Windows 95 profile has it: Reno, slow start from one segment,
        # no window scaling, SACK or timestamps; the paper's buffers, MSS and minimum RTO.
        "profile": "windows-95",
        "mss": MSS,
        "sndbuf": 64000,
        "rcvbuf": 64000,
        "min_rto": "100ms",
        # YATS's receiver acknowledges as soon as a read opens its window by an MSS (RFC
        # 1122 §4.2.3.3), which with an application reading everything is every segment;
        # a 200 ms delayed ACK would outlast the 100 ms minimum RTO.
        "delayed_ack": False,
        "handshake": HANDSHAKE,
        **(tcp or {}),
    }
    access = {"kind": "atm", "rate": LINK, "delay": f"{round(vcs * 0.56 * KM_NS)}ns"}
    links = [{"between": [f"src{i}", "sw1"], **access} for i in range(vcs)]
    links.append(
        {"between": ["sw1", "sw2"], "kind": "atm", "rate": LINK, "delay": f"{km * KM_NS}ns"}
    )
    links += [{"between": ["sw2", f"dst{i}"], **access} for i in range(vcs)]
    return {
        "name": f"seed001-{vcs}vc",
        "backend": "sim",
        "duration": DURATION,
        "seed": 1,
        "repetitions": QUICK_REPETITIONS if quick else REPETITIONS,
        "trace_interval": "1ms",
        "hosts": [
            {"name": f"{end}{i}", "cpu": "yats-300us", "tcp": dict(settings)}
            for end in ("src", "dst")
            for i in range(vcs)
        ],
        "routers": [
            {"name": "sw1", "switch": dict(SWITCHES["UBR"])},
            {"name": "sw2", "switch": dict(SWITCHES["UBR"])},
        ],
        "links": links,
        "flows": [
            {"src": f"src{i}", "dst": f"dst{i}", "start_jitter": START_JITTER} for i in range(vcs)
        ],
        "app": {"kind": "bulk", "message_size": "64KiB"},
        # Fig. 4's ABR end systems; everything else is TM 4.0's default.
        "abr": {"pcr": LINK, "mcr": "0bps", "nrm": 32},
    }


def trunk(vcs: int) -> str:
    """The path of the trunk's one-way delay in `network(vcs, ...)`."""
    return f"links.{vcs}.delay"


def _delay(km: float) -> str:
    return f"{round(km * KM_NS)}ns"


def schemes_sweep(extra: dict[str, list[Any]] | None = None, repeat: int = 1) -> dict[str, Any]:
    """A zip sweep over the four schemes, each `repeat` times in a row beside the values
    `extra` gives (lists of 4 × `repeat`)."""
    names = [name for name in SCHEMES for _ in range(repeat)]
    return {"mode": "zip", **(extra or {}), SWITCH: [SWITCHES[name] for name in names]}


def scheme_of(param: str) -> str:
    """The scheme a swept switch table (its canonical JSON text) stands for."""
    table = json.loads(param)
    if table.get("feedback", "none") != "none":
        return str(table["feedback"]).upper()
    return "UBR+EPD" if table["discard"] == "epd" else "UBR"


# ---- experiments --------------------------------------------------------------------------


def _vc_experiment(vcs: int) -> Experiment:
    return Experiment(
        f"table2-{vcs}vc",
        f"Table 2, {vcs} VCs at {VC_ROWS_KM} km: the four switch schemes",
        lambda quick: {
            **network(vcs, VC_ROWS_KM, quick=quick),
            "sweep": schemes_sweep(),
        },
    )


def _distance_scenario(quick: bool) -> dict[str, Any]:
    spec = network(DISTANCE_VCS, KMS[0], quick=quick)
    delays = [_delay(km) for km in KMS for _ in SCHEMES]
    sweep = schemes_sweep()
    sweep[SWITCH] = sweep[SWITCH] * len(KMS)
    sweep[trunk(DISTANCE_VCS)] = delays
    return {**spec, "sweep": sweep}


TABLE3_TCP: dict[str, dict[str, bool]] = {
    "base": {"nagle": False, "fast_retransmit": False},
    "nagle": {"nagle": True, "fast_retransmit": False},
    "frr": {"nagle": False, "fast_retransmit": True},
}


def _setting_experiment(
    name: str,
    what: str,
    setting: str,
    schemes: tuple[str, ...],
    kms: tuple[int, ...],
    where: str,
    tcp: dict[str, Any] | None = None,
    write: str | None = None,
    quick_kms: tuple[int, ...] | None = None,
) -> Experiment:
    """`DISTANCE_VCS` VCs with one of Table 3's TCP settings (and `tcp` besides): each
    trunk length of `kms` (`quick_kms` with --quick, if given) with each scheme of
    `schemes` (a zip sweep, described by `where`), the applications writing `write` at a
    time if given; named `name-setting`."""

    def scenario(quick: bool) -> dict[str, Any]:
        kms_run = quick_kms if quick and quick_kms else kms
        spec = network(DISTANCE_VCS, kms_run[0], {**TABLE3_TCP[setting], **(tcp or {})}, quick)
        if write is not None:
            spec["app"] = {**spec["app"], "message_size": write}
        switches = [SWITCHES[scheme] for _ in kms_run for scheme in schemes]
        delays = [_delay(km) for km in kms_run for _ in schemes]
        return {**spec, "sweep": {"mode": "zip", SWITCH: switches, trunk(DISTANCE_VCS): delays}}

    on = [field for field, value in TABLE3_TCP[setting].items() if value]
    return Experiment(
        f"{name}-{setting}",
        f"{what}, {DISTANCE_VCS} VCs, {' and '.join(on) or 'Nagle and FRR'} "
        f"{'on' if on else 'off'}: {where}",
        scenario,
    )


# Investigations of Figs. 5-8 (not the paper's experiments): Nagle with writes smaller than
# a segment, and FRR with NewReno's recovery (RFC 6582) in place of Reno's.
SMALL_WRITE = "512B"
INVESTIGATION_KMS = (500, 3000)
# --quick runs Figs. 5-8 and NewReno at the two ends only: the FRR checks need the full
# run's spread anyway, and Nagle's tie (to the bit) shows at any length.
QUICK_KMS = (KMS[0], KMS[-1])


# --quick's 3 repetitions give UBR's throughput 95 % half-widths of 5-30 Mb/s, wider than the
# differences these checks turn on; the full run's 8 separate them.
QUICK_SPREAD = (
    f"--quick's {QUICK_REPETITIONS} repetitions leave 95 % half-widths wider than the "
    f"differences this check turns on; the full run's {REPETITIONS} decide it"
)
# Figs. 5-8: UBR and UBR+EPD only, at every trunk length of Table 2 (§4.1: 50 VCs).
FIGS5_8_SCHEMES = ("UBR", "UBR+EPD")


def _fig9_scenario(quick: bool) -> dict[str, Any]:
    spec = network(DISTANCE_VCS, VC_ROWS_KM, quick=quick)
    spec["routers"][0]["switch"] = dict(SWITCHES["EFCI"])
    return {**spec, "sweep": {"mode": "grid", RIF: list(FIG9_RIF), RDF: list(FIG9_RDF)}}


EXPERIMENTS = (
    *(_vc_experiment(vcs) for vcs in VCS),
    Experiment(
        "table2-distance",
        f"Table 2, {DISTANCE_VCS} VCs: trunk length 500-3000 km × the four switch schemes",
        _distance_scenario,
    ),
    *(
        _setting_experiment(
            "table3", "Table 3", setting, SCHEMES, (LAN_KM, WAN_KM),
            f"LAN ({LAN_KM} km) and WAN ({WAN_KM} km) × the four schemes",
        )  # fmt: skip
        for setting in TCP_SETTINGS
    ),
    *(
        _setting_experiment(
            "figs5-8", "Figs. 5-8", setting, FIGS5_8_SCHEMES, KMS,
            f"trunk length {KMS[0]}-{KMS[-1]} km × UBR and UBR+EPD", quick_kms=QUICK_KMS,
        )  # fmt: skip
        for setting in TCP_SETTINGS
    ),
    *(
        _setting_experiment(
            "small-writes", f"Investigation: {SMALL_WRITE} writes", setting, ("UBR",),
            INVESTIGATION_KMS, "UBR at 500 and 3000 km", write=SMALL_WRITE,
        )  # fmt: skip
        for setting in ("base", "nagle")
    ),
    _setting_experiment(
        "newreno", "Investigation: NewReno's recovery", "frr", FIGS5_8_SCHEMES, KMS,
        f"trunk length {KMS[0]}-{KMS[-1]} km × UBR and UBR+EPD", tcp={"cc": "newreno"},
        quick_kms=QUICK_KMS,
    ),  # fmt: skip
    Experiment(
        "fig9-efci",
        f"Fig. 9, {DISTANCE_VCS} VCs at {VC_ROWS_KM} km on the EFCI switch: RIF × RDF",
        _fig9_scenario,
    ),
)


# ---- reading the results -----------------------------------------------------------------

Row = tuple[str, int]  # ("vcs", 50) or ("km", 1000): a row of Table 2
ROWS: tuple[Row, ...] = (*(("vcs", n) for n in VCS), *(("km", km) for km in KMS))
PAPER_T2: dict[Row, tuple[tuple[float, ...], tuple[float, ...]]] = {
    **{("vcs", n): value for n, value in _T2_VCS.items()},
    **{("km", km): value for km, value in _T2_KMS.items()},
}


def _label(row: Row) -> str:
    return f"{row[1]} VCs" if row[0] == "vcs" else f"{row[1]} km"


def _points(results: Results, experiment: str, vcs: int) -> pd.DataFrame:
    """The experiment's points with `scheme` and `km` (the trunk) beside the measurements."""
    means = results.means(experiment)
    km = (
        means[trunk(vcs)] / KM_NS
        if trunk(vcs) in means
        else pd.Series(float(VC_ROWS_KM), index=means.index)
    )
    return means.assign(scheme=means[SWITCH].map(scheme_of), km=km.round().astype(int))


def _point(frame: pd.DataFrame, scheme: str, km: int) -> pd.Series:
    return frame[(frame["scheme"] == scheme) & (frame["km"] == km)].iloc[0]


def _table2_row(results: Results, row: Row, scheme: str) -> pd.Series:
    if row[0] == "vcs":
        return _point(_points(results, f"table2-{row[1]}vc", row[1]), scheme, VC_ROWS_KM)
    return _point(_points(results, "table2-distance", DISTANCE_VCS), scheme, row[1])


def table2_point(results: Results, row: Row, scheme: str) -> tuple[float, float]:
    """tcplab's mean (efficiency, fairness) over the repetitions, as fractions, for one cell
    pair of Table 2."""
    point = _table2_row(results, row, scheme)
    return float(point["atm_efficiency"]), float(point["fairness"])


def _ci95(point: pd.Series, name: str) -> float:
    """The 95 % half-width of a point's mean of `name` (0 for a single repetition)."""
    ci95 = point.get(f"{name}_ci95")
    return 0.0 if ci95 is None or pd.isna(ci95) else float(ci95)


def table2_ci95(results: Results, row: Row, scheme: str) -> tuple[float, float]:
    """The 95 % half-widths of `table2_point`'s means."""
    point = _table2_row(results, row, scheme)
    return _ci95(point, "atm_efficiency"), _ci95(point, "fairness")


def _pm(share: float, ci95: float) -> str:
    return f"{100 * share:.1f} ± {100 * ci95:.1f}"


def _table3_row(results: Results, setting: str, km: int, scheme: str) -> pd.Series:
    return _point(_points(results, f"table3-{setting}", DISTANCE_VCS), scheme, km)


def table3_point(results: Results, setting: str, km: int, scheme: str) -> tuple[float, float]:
    """tcplab's mean (total goodput in bit/s, fairness) for one cell pair of Table 3."""
    point = _table3_row(results, setting, km, scheme)
    return float(point["goodput_bps"]), float(point["fairness"])


def _goodput_pm(results: Results, setting: str, km: int, scheme: str) -> str:
    point = _table3_row(results, setting, km, scheme)
    return display.rate(float(point["goodput_bps"]), _ci95(point, "goodput_bps"))


def figs5_8_points(results: Results) -> pd.DataFrame:
    """Every point of Figs. 5-8: scheme, setting, trunk_km, goodput and fairness (means and
    95 % half-widths)."""
    frames = [
        _points(results, f"figs5-8-{setting}", DISTANCE_VCS).assign(setting=setting)
        for setting in TCP_SETTINGS
    ]
    frame = pd.concat(frames, ignore_index=True).rename(columns={"km": "trunk_km"})
    return frame.assign(
        goodput_bps_ci95=frame["goodput_bps_ci95"].fillna(0.0),
        fairness_ci95=frame["fairness_ci95"].fillna(0.0),
    )


def fig9_points(results: Results) -> pd.DataFrame:
    """Efficiency and fairness of the EFCI switch at each RIF and RDF."""
    means = results.means("fig9-efci")
    return means[[RIF, RDF, "atm_efficiency", "fairness"]].sort_values([RIF, RDF])


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


def _fraction(value: float) -> str:
    return f"1/{round(1 / value)}"


# ---- checks --------------------------------------------------------------------------------


def _erica_fair(results: Results) -> Verdict:
    fairness = {row: table2_point(results, row, "ERICA")[1] for row in ROWS}
    low = {row: f for row, f in fairness.items() if f < 0.98}
    evidence = f"lowest {_pct(min(fairness.values()))} over the 13 rows"
    if low:
        evidence += "; below 98 %: " + ", ".join(f"{_label(r)} {_pct(f)}" for r, f in low.items())
    return Verdict(NOT_HELD if low else HELD, evidence)


ERICA_FLAT_POINTS = 0.05  # "nearly flat": the paper's ERICA column spans 1.7 points


def _erica_flat(results: Results) -> Verdict:
    efficiency = [table2_point(results, row, "ERICA")[0] for row in ROWS]
    spread = max(efficiency) - min(efficiency)
    return Verdict(
        HELD if spread <= ERICA_FLAT_POINTS else NOT_HELD,
        f"ERICA's efficiency spans {_pct(min(efficiency))}-{_pct(max(efficiency))} "
        f"({100 * spread:.1f} points; held if at most {100 * ERICA_FLAT_POINTS:.0f})",
    )


def _epd_beats_ubr(results: Results) -> Verdict:
    """In every row EPD's mean efficiency above UBR's beyond the two means' 95 %
    half-widths together; a row within them is a tie, and makes the verdict one."""
    groups = []
    for row in ROWS:
        ubr = table2_point(results, row, "UBR")[0]
        epd = table2_point(results, row, "UBR+EPD")[0]
        ubr_ci, epd_ci = (table2_ci95(results, row, s)[0] for s in ("UBR", "UBR+EPD"))
        text = f"{_pm(ubr, ubr_ci)} → {_pm(epd, epd_ci)} %"
        groups.append((_label(row), above(epd, epd_ci, ubr, ubr_ci), text))
    return every(groups)


def _ubr_falls_with_distance(results: Results) -> Verdict:
    efficiency = [table2_point(results, ("km", km), "UBR")[0] for km in KMS]
    half = len(KMS) // 2
    near, far = sum(efficiency[:half]) / half, sum(efficiency[half:]) / (len(KMS) - half)
    held = efficiency[-1] < efficiency[0] and far < near
    evidence = ", ".join(f"{km} km {_pct(e)}" for km, e in zip(KMS, efficiency, strict=True))
    return Verdict(HELD if held else NOT_HELD, evidence)


def _mean_over_rows(results: Results, scheme: str, metric: int) -> float:
    return sum(table2_point(results, row, scheme)[metric] for row in ROWS) / len(ROWS)


def _efci_between(results: Results) -> Verdict:
    groups = []
    for metric, name in ((0, "efficiency"), (1, "fairness")):
        ubr, efci, erica = (_mean_over_rows(results, s, metric) for s in ("UBR", "EFCI", "ERICA"))
        groups.append(
            (
                f"mean {name}",
                ubr < efci < erica,
                f"UBR {_pct(ubr)}, EFCI {_pct(efci)}, ERICA {_pct(erica)}",
            )
        )
    return every(groups)


def _frr_helps_in_the_lan(scheme: str) -> Callable[[Results], Verdict]:
    def check(results: Results) -> Verdict:
        base, frr = (_table3_row(results, s, LAN_KM, scheme) for s in ("base", "frr"))
        status = above(
            frr["goodput_bps"],
            _ci95(frr, "goodput_bps"),
            base["goodput_bps"],
            _ci95(base, "goodput_bps"),
        )
        return Verdict(
            status,
            f"{scheme} at {LAN_KM} km: FRR off {_goodput_pm(results, 'base', LAN_KM, scheme)}, "
            f"on {_goodput_pm(results, 'frr', LAN_KM, scheme)}"
            + (" (within the runs' spread)" if status == TIE else ""),
        )

    return check


ERICA_INSENSITIVE = 0.02  # the paper's ERICA rows are identical to the last digit


def _erica_insensitive(results: Results) -> Verdict:
    groups = []
    for km in (LAN_KM, WAN_KM):
        goodputs = {s: table3_point(results, s, km, "ERICA")[0] for s in TCP_SETTINGS}
        spread = max(goodputs.values()) / min(goodputs.values()) - 1
        groups.append(
            (
                f"{km} km",
                spread <= ERICA_INSENSITIVE,
                ", ".join(f"{s} {display.rate(g)}" for s, g in goodputs.items())
                + f" ({100 * spread:.1f} % apart)",
            )
        )
    return every(groups)


def _setting_raises(
    scheme: str, settings: tuple[str, ...], over: str = "base"
) -> Callable[[Results], Verdict]:
    """Figs. 5 and 7: at every trunk length, `scheme`'s throughput with each of `settings`
    above its throughput with `over`, beyond the runs' spread (a tie within it)."""

    def check(results: Results) -> Verdict:
        points = figs5_8_points(results)
        points = points[points["scheme"] == scheme].set_index(["setting", "trunk_km"])
        groups = []
        for setting in settings:
            for km in sorted(points.loc[setting].index.unique()):
                on, off = points.loc[(setting, km)], points.loc[(over, km)]
                status = above(
                    on["goodput_bps"], on["goodput_bps_ci95"],
                    off["goodput_bps"], off["goodput_bps_ci95"],
                )  # fmt: skip
                text = (
                    f"{over} {display.rate(off['goodput_bps'], off['goodput_bps_ci95'])}, "
                    f"{setting} {display.rate(on['goodput_bps'], on['goodput_bps_ci95'])}"
                )
                groups.append((f"{setting} at {km} km", status, text))
        return every(groups)

    return check


def _lan_beats_wan(results: Results) -> Verdict:
    """§5: throughput higher in the LAN than the WAN for every scheme and TCP setting
    (beyond the runs' spread), and the mean fairness over them higher too."""
    groups: list[tuple[str, bool | Status, str]] = []
    fairness = {LAN_KM: 0.0, WAN_KM: 0.0}
    for scheme in SCHEMES:
        for setting in TCP_SETTINGS:
            lan, wan = (_table3_row(results, setting, km, scheme) for km in (LAN_KM, WAN_KM))
            for km, point in ((LAN_KM, lan), (WAN_KM, wan)):
                fairness[km] += float(point["fairness"]) / (len(SCHEMES) * len(TCP_SETTINGS))
            status = above(
                lan["goodput_bps"], _ci95(lan, "goodput_bps"),
                wan["goodput_bps"], _ci95(wan, "goodput_bps"),
            )  # fmt: skip
            paper = (
                _T3[(setting, LAN_KM)][0][SCHEMES.index(scheme)],
                _T3[(setting, WAN_KM)][0][SCHEMES.index(scheme)],
            )
            groups.append(
                (
                    f"{scheme} {setting}",
                    status,
                    f"LAN {_goodput_pm(results, setting, LAN_KM, scheme)}, WAN "
                    f"{_goodput_pm(results, setting, WAN_KM, scheme)} (paper {paper[0]} and "
                    f"{paper[1]} Mb/s)",
                )
            )
    groups.append(
        (
            "mean fairness",
            fairness[LAN_KM] > fairness[WAN_KM],
            f"LAN {_pct(fairness[LAN_KM])}, WAN {_pct(fairness[WAN_KM])}",
        )
    )
    return every(groups)


def _fig9_trade_off(results: Results) -> Verdict:
    points = fig9_points(results)
    best_efficiency = points.iloc[points["atm_efficiency"].argmax()]
    best_fairness = points.iloc[points["fairness"].argmax()]
    rank = points["atm_efficiency"].rank().corr(points["fairness"].rank())
    held = bool(rank < 0)
    evidence = (
        f"most efficient RIF {_fraction(best_efficiency[RIF])}, RDF "
        f"{_fraction(best_efficiency[RDF])} ({_pct(best_efficiency['atm_efficiency'])}, "
        f"fairness {_pct(best_efficiency['fairness'])}); fairest RIF "
        f"{_fraction(best_fairness[RIF])}, RDF {_fraction(best_fairness[RDF])} "
        f"({_pct(best_fairness['atm_efficiency'])}, fairness {_pct(best_fairness['fairness'])}); "
        f"rank correlation of efficiency and fairness {rank:+.2f} (held if negative)"
    )
    return Verdict(HELD if held else NOT_HELD, evidence)


# ---- exhibits ------------------------------------------------------------------------------


def table2(results: Results) -> pd.DataFrame:
    """Table 2's layout: each row of the paper, then tcplab's (mean ± 95 % half-width over
    the repetitions), in percent."""
    rows = []
    for row in ROWS:
        efficiency, fairness = PAPER_T2[row]
        paper = {"": f"{_label(row)} (paper)"}
        for values, name in ((efficiency, "efficiency"), (fairness, "fairness")):
            paper.update({f"{name} {s}": f"{v:.1f}" for s, v in zip(SCHEMES, values, strict=True)})
        ours = {"": f"{_label(row)} (tcplab)"}
        for metric, name in ((0, "efficiency"), (1, "fairness")):
            for scheme in SCHEMES:
                mean = table2_point(results, row, scheme)[metric]
                ours[f"{name} {scheme}"] = _pm(mean, table2_ci95(results, row, scheme)[metric])
        rows += [paper, ours]
    return pd.DataFrame(rows)


def table3(results: Results) -> pd.DataFrame:
    """Table 3's layout: throughput (Mb/s) and fairness (%) per scheme, paper then tcplab
    (mean ± 95 % half-width over the repetitions)."""
    rows = []
    for setting in TCP_SETTINGS:
        for km in (LAN_KM, WAN_KM):
            goodput, fairness = _T3[(setting, km)]
            paper = {"": f"{setting}, {km} km (paper)"}
            ours = {"": f"{setting}, {km} km (tcplab)"}
            for scheme, g, f in zip(SCHEMES, goodput, fairness, strict=True):
                paper[f"{scheme} Mb/s"] = f"{g:.1f}"
                paper[f"{scheme} fairness"] = f"{f:.1f}"
                point = _table3_row(results, setting, km, scheme)
                mbps, ci95 = point["goodput_bps"] / 1e6, _ci95(point, "goodput_bps") / 1e6
                ours[f"{scheme} Mb/s"] = f"{mbps:.1f} ± {ci95:.1f}"
                ours[f"{scheme} fairness"] = _pm(point["fairness"], _ci95(point, "fairness"))
            rows += [paper, ours]
    return pd.DataFrame(rows)


def _rate_pm(point: pd.Series) -> str:
    return display.rate(float(point["goodput_bps"]), _ci95(point, "goodput_bps"))


def recovery_table(results: Results) -> pd.DataFrame:
    """Figs. 5 and 7's FRR again with NewReno's recovery: throughput with FRR off, with
    Reno's FRR and with NewReno's, per scheme and trunk length."""
    runs = {
        "FRR off": _points(results, "figs5-8-base", DISTANCE_VCS),
        "Reno FRR": _points(results, "figs5-8-frr", DISTANCE_VCS),
        "NewReno FRR": _points(results, "newreno-frr", DISTANCE_VCS),
    }
    return pd.DataFrame(
        [
            {"scheme": scheme, "trunk": f"{km} km"}
            | {name: _rate_pm(_point(frame, scheme, km)) for name, frame in runs.items()}
            for scheme in FIGS5_8_SCHEMES
            for km in sorted(runs["NewReno FRR"]["km"].unique())
        ]
    )


def small_writes_table(results: Results) -> pd.DataFrame:
    """UBR with the applications writing 512 B at a time, Nagle off and on."""
    runs = {
        "Nagle off": _points(results, "small-writes-base", DISTANCE_VCS),
        "Nagle on": _points(results, "small-writes-nagle", DISTANCE_VCS),
    }
    return pd.DataFrame(
        [
            {"trunk": f"{km} km"}
            | {name: _rate_pm(_point(frame, "UBR", km)) for name, frame in runs.items()}
            for km in INVESTIGATION_KMS
        ]
    )


def fig9_table(results: Results) -> pd.DataFrame:
    points = fig9_points(results)
    return pd.DataFrame(
        {
            "RIF": points[RIF].map(_fraction),
            "RDF": points[RDF].map(_fraction),
            "efficiency": points["atm_efficiency"].map(_pct),
            "fairness": points["fairness"].map(_pct),
        }
    )


def exhibits(results: Results) -> list[Exhibit]:
    long = pd.DataFrame(
        [
            {"row": _label(row), "scheme": scheme, "source": source, "efficiency": value}
            for row in ROWS
            for index, scheme in enumerate(SCHEMES)
            for source, value in (
                ("paper", PAPER_T2[row][0][index] / 100),
                ("tcplab", table2_point(results, row, scheme)[0]),
            )
        ]
    )
    distance = pd.DataFrame(
        [
            {
                "trunk_km": km,
                "scheme": scheme,
                "atm_efficiency": table2_point(results, ("km", km), scheme)[0],
            }
            for km in KMS
            for scheme in SCHEMES
        ]
    )
    return [
        Exhibit(
            "Table 2: efficiency and fairness (%) against VCs and distance",
            f"The paper's rows and tcplab's. VC rows at {VC_ROWS_KM} km, distance rows at "
            f"{DISTANCE_VCS} VCs; {DURATION} each, efficiency = the TCP goodputs' sum over the "
            "cell-tax bound of the trunk, fairness = Jain's index of the VCs' goodputs.",
            table2(results),
        ),
        Exhibit(
            "Table 2: efficiency against trunk length",
            f"tcplab at {DISTANCE_VCS} VCs, one line per switch scheme; black markers: the "
            "paper's Table 2 distance rows, one marker shape per scheme.",
            plots.metric_vs_param(
                distance,
                "trunk_km",
                "atm_efficiency",
                series="scheme",
                paper=[
                    plots.PaperPoints(
                        f"paper, {scheme}",
                        [(km, PAPER_T2[("km", km)][0][index] / 100) for km in KMS],
                    )
                    for index, scheme in enumerate(SCHEMES)
                ],
            ),
        ),
        Exhibit(
            "Table 2 efficiency, paper and tcplab, at 50 VCs and 500 km",
            "Bars per scheme.",
            plots.bar_chart(
                long[long["row"] == f"{DISTANCE_VCS} VCs"], "scheme", "efficiency", series="source"
            ),
        ),
        Exhibit(
            "Table 3: throughput (Mb/s) and fairness (%) with FRR and Nagle",
            f"{DISTANCE_VCS} VCs; LAN = {LAN_KM} km, WAN = {WAN_KM} km between the switches; "
            "base has both off, nagle and frr turn one on.",
            table3(results),
        ),
        *(
            Exhibit(
                f"Fig. {number}: {scheme} {name} against trunk length",
                f"{DISTANCE_VCS} VCs on {scheme}, one line per TCP setting (base: FRR and "
                "Nagle off; nagle, frr: that one on), mean with 95 % bars. The paper's figure "
                "is not in the text (its §4.1: either setting raises both measures, FRR more).",
                plots.metric_vs_param(
                    figs5_8_points(results).query("scheme == @scheme"),
                    "trunk_km",
                    metric,
                    series="setting",
                ),
            )
            for number, scheme, name, metric in (
                (5, "UBR", "throughput", "goodput_bps"),
                (6, "UBR", "fairness", "fairness"),
                (7, "UBR+EPD", "throughput", "goodput_bps"),
                (8, "UBR+EPD", "fairness", "fairness"),
            )
        ),
        Exhibit(
            "Investigation: FRR with NewReno's recovery",
            f"{DISTANCE_VCS} VCs, Figs. 5 and 7's set-up: throughput with FRR off, with Reno's "
            "fast recovery (the pack's TCP) and with NewReno's (RFC 6582: a partial ACK "
            "retransmits the next hole and stays in recovery), mean ± 95 % half-width.",
            recovery_table(results),
        ),
        Exhibit(
            f"Investigation: Nagle with {SMALL_WRITE} writes",
            f"UBR, {DISTANCE_VCS} VCs: the applications write {SMALL_WRITE} at a time instead of "
            "64 KiB, so segments are short unless Nagle's rule holds them until full.",
            small_writes_table(results),
        ),
        Exhibit(
            "Fig. 9: the EFCI switch against RIF and RDF",
            f"{DISTANCE_VCS} VCs at {VC_ROWS_KM} km; efficiency and Jain fairness per setting "
            "(the paper's figure is not in the text; it names RIF 1/8, RDF 1/512 as the most "
            "efficient).",
            fig9_table(results),
        ),
    ]


def _published_table2(row: Row, scheme: str, metric: int) -> Published:
    name = ("efficiency", "fairness")[metric]
    return Published(
        f"{name}, {scheme}, {_label(row)}",
        "§4, Table 2",
        PAPER_T2[row][metric][SCHEMES.index(scheme)] / 100,
        _pct,
        lambda results: table2_point(results, row, scheme)[metric],
    )


def _max_goodput(results: Results) -> float:
    means = results.means("table2-distance")
    return float(means["atm_max_goodput_bps"].iloc[0])


PACK = Pack(
    name="seed001",
    title="Kim, Park & Park: TCP over ATM UBR, UBR+EPD, EFCI and ERICA switches",
    citation=(
        'M.-H. Kim, B.-J. Park, S.-S. Park, "A Study on the Performance Improvement of TCP '
        'using ABR/UBR Services" (ABR/UBR 서비스를 이용한 TCP 성능개선에 관한 연구)'
    ),
    summary=(
        "N TCP connections, one VC each, through two ATM switches joined by a 150 Mb/s trunk "
        "(Fig. 3), for 300 ms: efficiency and Jain fairness against the number of VCs and the "
        "trunk length with UBR, UBR+EPD, ABR with an EFCI switch and ABR with ERICA "
        "(Table 2); fast retransmit/recovery and Nagle on and off in a LAN and a WAN "
        "(Table 3); the EFCI switch's sources against RIF and RDF (Fig. 9)."
    ),
    experiments=EXPERIMENTS,
    published=(
        Published(
            "maximum possible TCP throughput on the 150 Mb/s trunk (2000-byte segments)",
            "§3.2",
            130.5e6,
            display.rate,
            _max_goodput,
            note="2000 + 40 + 8 + 8 bytes → 43 cells; the paper's 130.5 Mb/s is 150 Mb/s × "
            "2000 / 2279 rounded down, tcplab counts 150 Mb/s of 53-byte cells",
        ),
        *(
            _published_table2(("km", 500), scheme, metric)
            for metric in (0, 1)
            for scheme in SCHEMES
        ),
    ),
    checks=(
        Check(
            "ERICA's fairness stays at 98 % or more for every VC count and distance",
            "§4, Table 2",
            _erica_fair,
        ),
        Check(
            "ERICA's efficiency is nearly flat in the number of VCs and the distance",
            "§4, Table 2",
            _erica_flat,
        ),
        Check(
            "EPD raises efficiency over plain UBR",
            "§4, Table 2",
            _epd_beats_ubr,
        ),
        Check(
            "Plain UBR's efficiency falls as the distance grows",
            "§4, Table 2",
            _ubr_falls_with_distance,
        ),
        Check(
            "The EFCI switch sits between UBR and ERICA in efficiency and fairness",
            "§4, Table 2; §4.2",
            _efci_between,
        ),
        Check(
            "On UBR in the LAN, fast retransmit and recovery raises throughput",
            "§4.1, §4.3, Table 3",
            _frr_helps_in_the_lan("UBR"),
        ),
        Check(
            "On UBR+EPD in the LAN, fast retransmit and recovery raises throughput",
            "§4.3, Table 3",
            _frr_helps_in_the_lan("UBR+EPD"),
            full_run=QUICK_SPREAD,
        ),
        Check(
            "On UBR, Nagle's algorithm raises throughput at every trunk length",
            "§4.1, Fig. 5; §5",
            _setting_raises("UBR", ("nagle",)),
        ),
        Check(
            "On UBR, fast retransmit and recovery raises throughput at every trunk length",
            "§4.1, Fig. 5",
            _setting_raises("UBR", ("frr",)),
            full_run=QUICK_SPREAD,
        ),
        Check(
            "On UBR+EPD, FRR and Nagle each raise throughput at every trunk length",
            "§4.1, Fig. 7",
            _setting_raises("UBR+EPD", ("nagle", "frr")),
            full_run=QUICK_SPREAD,
        ),
        Check(
            "FRR does better than Nagle on UBR",
            "§4.1, Figs. 5-8",
            _setting_raises("UBR", ("frr",), over="nagle"),
            full_run=QUICK_SPREAD,
        ),
        Check(
            "The LAN beats the WAN in throughput and fairness",
            "§4.3, Table 3; §5",
            _lan_beats_wan,
        ),
        Check(
            "ERICA is insensitive to FRR and Nagle",
            "§4.3, Table 3",
            _erica_insensitive,
        ),
        Check(
            "RIF and RDF trade the EFCI switch's efficiency against its fairness",
            "§4.2, Fig. 9",
            _fig9_trade_off,
        ),
    ),
    differences=(
        "The paper gives MSS = 3000 in Fig. 4 but works its efficiency bound through a "
        "2000-byte segment (§3.2); tcplab uses 2000 bytes, so that its efficiency divides by "
        "the bound the paper states.",
        f"The VC rows of Table 2 do not say the trunk length; tcplab runs them at "
        f"{VC_ROWS_KM} km, the shortest distance row, which ERICA's efficiencies bracket.",
        "The EFCI switch marks CI in the RM cells that pass a port whose queue is above 80 % "
        "of the buffer, until it falls to 60 % (YATS's binary switch, whose thresholds the "
        "paper does not give); Fig. 9's RIF and RDF values other than 1/8 and 1/512 are "
        "tcplab's choice, since the figure is not in the text.",
        "ERICA targets 90 % of the trunk, with δ = 0.1 and a 1 ms averaging interval; the "
        "paper says only that the target is 90-95 %.",
        "The reverse direction of each VC (TCP's ACKs) is an ABR VC too and carries the "
        "turned-around RM cells in-rate (TM 4.0); YATS's reverse path is not described.",
        "The TCP is tcplab's Reno with the Windows 95 profile's era settings (slow start from "
        "one segment, no window scaling) and no delayed ACKs (YATS's receiver acknowledges "
        "each segment as its read opens the window by an MSS); the paper describes its TCP "
        "only in Fig. 4. The applications write 64 KiB at a time, so segments are full and Nagle "
        "changes little; the paper's application is not described.",
        "Connections start established, without a SYN exchange (tcp.handshake = false), as "
        "YATS's TCP does (tcpipsend::connectact at set-up, first segment at once); a paper "
        "setting inferred from its simulator.",
        f"Each connection opens at a random time within its first {START_JITTER} and each point "
        f"is the mean of {REPETITIONS} repetitions ({QUICK_REPETITIONS} with --quick) with "
        "derived seeds: YATS desynchronises its connections with random per-packet processing "
        "times (300-330 µs) and clock phases, tcplab's CPU model is deterministic, and single "
        "runs of the UBR and EFCI schemes move by tens of points with small changes. The paper "
        "shows one run per point.",
        "YATS starts ssthresh at half the receiver's window (32000 bytes) and runs its RTO on a "
        "500 ms tick unless told otherwise; tcplab starts ssthresh unbounded (RFC 5681) and "
        "times its RTO in nanoseconds with the paper's 100 ms minimum. YATS's TCP uses "
        "timestamps by default; the paper's 43-cell arithmetic (§3.2) has none, nor has tcplab.",
    ),
    exhibits=exhibits,
    investigations=(
        "ERICA's efficiency is not flat (not held): it falls from 89-94 % at 500 km to 72.7 % "
        "at 3000 km because of slow start. At 3000 km a round trip is 30 ms and each "
        "connection's share of ERICA's target, about 5 segments in flight, takes three "
        "doublings from one segment, some 90 ms of the 300; opening with a SYN exchange "
        "costs ten points more (58 %). The paper's flat 78.5 % would need the ramp left out "
        "of the measurement (statistics reset after a warm-up), which it does not describe.",
        "The EFCI switch is not between UBR and ERICA in efficiency (not held): it is fairer "
        "than UBR on average but not more efficient (42.1 % against 46.3 %; within a point "
        "over the distance rows). Its sources cut their rates on marked RM cells only after "
        "the buffer has passed 80 %, so they overflow it as plain UBR does, and then lose "
        "rate while the queue drains; the marking thresholds are tcplab's (the paper's are "
        "not given), and YATS's binary switch marks nothing by default.",
        "Nagle does not raise throughput (a tie to the bit, Figs. 5 and 7): the applications "
        "write 64 KiB and the window is 64000 bytes, 32 segments of 2000, so every segment "
        "is full, and Nagle's rule (RFC 896, RFC 1122 4.2.3.4) holds back only a shorter one. "
        "This is arithmetic on the set-up the paper describes. With 512-byte writes "
        "(experiments small-writes-*) Nagle's segments are full and the others short, and "
        "UBR at 500 km moves 71.5 +- 4.6 against 66.8 +- 4.4 Mb/s, still within the spread; "
        "the paper's application is not described.",
        "FRR does not raise UBR's throughput, and costs UBR+EPD beyond 1500 km (not held): a "
        "drop-tail overflow of 50 connections takes several segments of each, Reno's fast "
        "recovery repairs one per round trip and falls to a timeout after a partial ACK "
        "(Fall & Floyd, CCR 26(3), 1996), while without FRR the 100 ms minimum RTO and "
        "go-back-N repair the whole window at once. With NewReno's recovery (RFC 6582, "
        "experiment newreno-frr), FRR raises UBR+EPD at every length (3000 km: 54.4 -> 65.5 "
        "Mb/s; 1000 km: 80.9 -> 119.3) and UBR up to 1000 km (500 km: 67.1 -> 86.2), as the "
        "paper says. The paper's YATS TCP is described only as having FRR; that its recovery "
        "behaved like NewReno is the likeliest reading, not a documented fact, so the pack "
        "keeps Reno and shows NewReno beside it.",
        "The LAN does not beat the WAN (not held): UBR and EFCI are within the spread "
        "(UBR, FRR and Nagle off: 61.1 +- 10.6 against 65.9 +- 3.1 Mb/s) and the mean fairness "
        "is lower in the LAN (52.7 % against 68.7 %); UBR+EPD and ERICA do beat it. In the LAN "
        "50 windows of 64000 bytes (3.2 MB) meet a 4096-cell buffer (190 KB) with a round "
        "trip of about 1 ms, so each overflow takes many segments of a few connections and "
        "leaves them on the 100 ms RTO while the others run; at 1000 km 1.9 MB ride the trunk "
        "itself and the overflows are smaller. The LAN point is unstable across repetitions "
        "(+- 10 Mb/s), so the paper's single run per point could fall anywhere in it.",
    ),
)
