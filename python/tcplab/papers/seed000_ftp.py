"""Seed 000's FTP downloads across the satellite and terrestrial ATM network (§4.3, Figs. 14-15).

Kim & Song downloaded files with WS_FTP over the interworked path: the 155 Mb/s terrestrial
ATM network, then the 2.048 Mb/s KOREASAT hop, with the receiver's buffer fixed at 4,096
bytes, for several file sizes and Eb/No. The text gives one point (2 MB at 7.5 dB: 23 kb/s
on average, 917 s) and a conclusion: the better the channel, the better FTP does. (The
abstract's other FTP conclusion, that small files end before TCP reaches its full rate, is
drawn from the terrestrial Figs. 12-13, with large buffers at 155 Mb/s; with a 4,096-byte
window the window is full within two round trips of any file here, so it is not tested on
this path.)

tcplab runs the same download over a 155 Mb/s hop and the satellite hop of the pack's
main scenario (Windows NT 4.0 hosts, bit errors on the data direction from Table 3), the
client's receive buffer 4,096 bytes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tcplab.papers import seed000
from tcplab.papers.pack import Check, Exhibit, Experiment, Published, Results, Verdict, every, rises
from tcplab.report import display, plots

EXPERIMENT = "ftp-satellite"
EBNO = "links.1.ebno_db"
BYTES = "app.bytes"
KIB = 1024
SIZES_KIB = (256, 512, 1024, 2048)
EBNO_DB = (6.5, 7.0, 7.5, 8.0)
RCVBUF = 4096  # "수신 버퍼 크기는 4,096 bytes로 고정" (§4.3)
# §4.3: 2 MB at 7.5 dB, "평균 23kbps", "평균 917 sec".
PAPER_EBNO, PAPER_KIB = 7.5, 2048
PAPER_BPS, PAPER_S = 23e3, 917.0


def scenario(quick: bool) -> dict[str, Any]:
    """The FTP server behind the terrestrial network, the client across the satellite: a
    file from the first host to the second, swept over file size and Eb/No."""
    spec = seed000.scenario(quick)
    satellite = spec["links"][0]
    server, client = spec["hosts"]
    client_tcp = {key: value for key, value in client["tcp"].items() if key != "sndbuf"}
    server_tcp = {key: value for key, value in server["tcp"].items() if key != "rcvbuf"}
    return {
        **spec,
        "name": "seed000-ftp",
        # A run ends when the file is in; the cap only bounds a stalled one.
        "duration": "3000s",
        "hosts": [
            {"name": "ftp-server", "tcp": server_tcp},
            {"name": "client", "tcp": {**client_tcp, "rcvbuf": f"{RCVBUF}B"}},
        ],
        "links": [{"kind": "p2p", "rate": "155Mbps", "delay": "1ms"}, satellite],
        "app": {"kind": "file", "bytes": f"{PAPER_KIB}KiB"},
        "sweep": {
            "mode": "grid",
            BYTES: [f"{kib}KiB" for kib in SIZES_KIB],
            EBNO: list(EBNO_DB),
        },
    }


def _means(results: Results) -> pd.DataFrame:
    """Per point: the file's rate (goodput_bps: its bytes over the transfer time, as FTP
    reports it) and transfer time (elapsed_s), means and 95 % half-widths."""
    return results.means(EXPERIMENT)


def _paper_point(results: Results) -> pd.Series:
    means = _means(results)
    return means[(means[EBNO] == PAPER_EBNO) & (means[BYTES] == PAPER_KIB * KIB)].iloc[0]


def _rises_with_ebno(results: Results) -> Verdict:
    means = _means(results)
    cases = []
    for kib in SIZES_KIB:
        group = means[means[BYTES] == kib * KIB]
        held, _ = rises(group, EBNO)
        ordered = group.sort_values(EBNO)["goodput_bps"]
        text = f"{display.rate(ordered.iloc[0])} → {display.rate(ordered.iloc[-1])}"
        cases.append((f"{kib} KiB", held, text))
    return every(cases)


def table(results: Results) -> pd.DataFrame:
    means = _means(results).sort_values([BYTES, EBNO])
    rows = []
    for row in means.to_dict("records"):
        rows.append(
            {
                "file": f"{float(row[BYTES]) / KIB:.0f} KiB",
                "Eb/No (dB)": f"{row[EBNO]:.1f}",
                "transfer time": f"{row['elapsed_s']:.1f} s",
                "rate": display.rate(row["goodput_bps"]),
                "retransmissions": f"{row['retransmits']:.1f}",
            }
        )
    return pd.DataFrame(rows)


def exhibits(results: Results) -> list[Exhibit]:
    return [
        Exhibit(
            "Figs. 14-15: FTP over the satellite and terrestrial path",
            f"File rate (bytes over the transfer time) against Eb/No, one line per file size; "
            f"the client's receive buffer {RCVBUF} B. The marker: the paper's 2 MB at 7.5 dB "
            "(23 kb/s); the window alone allows 4,096 B / 550 ms = 59.6 kb/s.",
            plots.metric_vs_param(
                _means(results),
                EBNO,
                "goodput_bps",
                series=BYTES,
                paper=[plots.PaperPoints("paper, 2 MB (§4.3)", [(PAPER_EBNO, PAPER_BPS)])],
            ),
        ),
        Exhibit(
            "FTP downloads: every point",
            "Mean over the repetitions of the transfer time, the rate and TCP's "
            "retransmissions.",
            table(results),
        ),
    ]


EXPERIMENTS = (
    Experiment(
        EXPERIMENT,
        "FTP download across a 155 Mb/s hop and the satellite, the client's receive buffer "
        f"{RCVBUF} B: file size × Eb/No (Figs. 14-15)",
        scenario,
    ),
)


def published() -> tuple[Published, ...]:
    note = (
        f"2 MB taken as {PAPER_KIB} KiB; the window alone allows 59.6 kb/s. The paper puts "
        "its shortfall in the interworking point between the 155 Mb/s and 2 Mb/s networks, "
        "which it does not describe and tcplab does not model"
    )
    return (
        Published(
            f"FTP rate, 2 MB at {PAPER_EBNO} dB",
            "§4.3, Fig. 14",
            PAPER_BPS,
            display.rate,
            lambda results: float(_paper_point(results)["goodput_bps"]),
            note,
        ),
        Published(
            f"FTP transfer time, 2 MB at {PAPER_EBNO} dB",
            "§4.3, Fig. 15",
            PAPER_S,
            display.seconds,
            lambda results: float(_paper_point(results)["elapsed_s"]),
            note,
        ),
    )


CHECKS = (
    Check(
        "FTP does better the better the satellite channel (every file size)",
        "§4.3, Figs. 14-15",
        _rises_with_ebno,
    ),
)

INVESTIGATIONS = (
    "FTP's 2 MB at 7.5 dB: the paper's 23 kb/s and 917 s are a third of what a 4,096-byte "
    "window allows over 550 ms (59.6 kb/s, 281 s for 2 MB). The paper itself names the cause: "
    "a bottleneck at the interworking point between the 155 Mb/s terrestrial and the 2 Mb/s "
    "satellite networks, which it does not describe; tcplab's path has none, so its rate is "
    "the window's, less what the errors cost: 41 kb/s at 7.5 dB. A 4,096-byte window holds "
    "two full 1,460-byte segments, and the sender's silly-window avoidance (RFC 1122 "
    "4.2.3.4) does not send the other 1,176 bytes as a short segment, so about 2,920 bytes "
    "cross per 550 ms round trip (42.5 kb/s).",
)
