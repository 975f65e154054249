"""Seed 000's path as the paper built it: LANE over ATM cells over the satellite (§3, Fig. 2).

Kim & Song ran NetPerf over ATM LAN Emulation across the 2.048 Mb/s KOREASAT hop, and
their Table 3 maps each Eb/No to the corrected BER and the cell loss ratio (CLR) they
measured on it, against ITU-T I.356's objectives for the satellite portion (Table 1:
CLR 7.5e-8, CER 1.4e-6). The pack's main grid runs the hop as PPP; here it is a cell link
with LANE's encapsulation (16 bytes before each 1500-byte datagram, AAL5, 53-byte cells):
each cell meets the BER of Table 3 (koreasat-2000), a header error the HEC cannot correct
loses the cell, a payload error fails its AAL5 frame (docs/models/atm.md). What that gives
is set beside the paper's CLR: the cells lost and the frames lost, measured, and the CLR
and CER that independent bit errors at that BER give (ITU-T I.432.1's HEC in correction
mode), against Table 3 and I.356.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from tcplab.analytic import ber_curves
from tcplab.papers import seed000
from tcplab.papers.pack import Exhibit, Experiment, Published, Results
from tcplab.report import display

EXPERIMENT = "lane-atm"
EBNO = "links.0.ebno_db"  # seed000.EBNO, which is not defined yet while seed000 imports this
HEADER_BITS, PAYLOAD_BITS = 40, 384
# Table 1, ITU objectives for the satellite portion (ITU-T I.356 / ITU-R).
I356_CLR, I356_CER = 7.5e-8, 1.4e-6
LANE_MSS = 1460  # LANE's MTU is 1500 (docs/models/atm.md)


def scenario(quick: bool) -> dict[str, Any]:
    """seed000.scenario's path and hosts (32 KiB buffers, 2048 KiB messages) with the hop
    as an ATM cell link carrying LANE, swept over Table 3's Eb/No range."""
    spec = seed000.scenario(quick)
    spec["name"] = "seed000-lane-atm"
    spec["links"][0].update(kind="atm", encapsulation="lane")
    for host in spec["hosts"]:
        host["tcp"] = {**host["tcp"], "mss": LANE_MSS}
    return {**spec, "sweep": {EBNO: list(seed000.EBNO_DB)}}


def model_clr(ber: float) -> float:
    """Cells lost to header errors the HEC cannot correct (two or more in 40 bits), with
    independent bit errors, the HEC in correction mode (I.432.1)."""
    clean = (1 - ber) ** HEADER_BITS
    one = HEADER_BITS * ber * (1 - ber) ** (HEADER_BITS - 1)
    return 1 - clean - one


def model_cer(ber: float) -> float:
    """Cells delivered with an errored payload (I.356's cell error ratio), independent
    errors: the payload hit, the header not lost."""
    return (1 - (1 - ber) ** PAYLOAD_BITS) * (1 - model_clr(ber))


def _measured(results: Results) -> pd.DataFrame:
    means = results.means(EXPERIMENT).sort_values(EBNO)
    frames = means["atm_frames_delivered"] + means["atm_frames_lost"]
    return means.assign(
        clr=means["atm_cells_lost"] / means["atm_cells_sent"],
        frame_loss=means["atm_frames_lost"] / frames,
    ).set_index(EBNO)


def table3(results: Results) -> pd.DataFrame:
    """Table 3's CLR beside what LANE over cells gives at each Eb/No."""
    measured = _measured(results)
    grid = results.means(seed000.EXPERIMENT)
    ppp = grid[
        (grid[seed000.BUFFER] == 32 * seed000.KIB)
        & (grid[seed000.MESSAGE] == seed000.FIG11_MESSAGE)
    ].set_index(EBNO)["goodput_bps"]
    paper_clr = dict(ber_curves.KOREASAT_2000_CLR)
    rows = []
    for ebno, row in zip(measured.index, measured.to_dict("records"), strict=True):
        ber = ber_curves.ber_from_ebno("koreasat-2000", ebno)
        clr, cer = model_clr(ber), model_cer(ber)
        rows.append(
            {
                "Eb/No (dB)": f"{ebno:.1f}",
                "BER": f"{ber:.1e}",
                "paper CLR": f"{paper_clr[float(ebno)]:.1e}" if ebno in paper_clr else "—",
                "CLR, independent errors": f"{clr:.1e}",
                "CLR measured": f"{row['clr']:.1e} of {row['atm_cells_sent']:.0f} cells",
                "CER, independent errors": f"{cer:.1e}",
                "AAL5 frames lost": f"{row['frame_loss']:.2%}",
                "meets I.356 CLR / CER": f"{'yes' if clr <= I356_CLR else 'no'} / "
                f"{'yes' if cer <= I356_CER else 'no'}",
                "goodput LANE/ATM": display.rate(row["goodput_bps"]),
                "goodput PPP": display.rate(float(ppp[ebno])),
            }
        )
    return pd.DataFrame(rows)


def _clr_at(ebno: float) -> float:
    return model_clr(ber_curves.ber_from_ebno("koreasat-2000", ebno))


def _scientific(value: float) -> str:
    return f"{value:.1e}"


def _clr_measure(ebno: float) -> Callable[[Results], float]:
    return lambda results: _clr_at(ebno)


def published() -> tuple[Published, ...]:
    paper_clr = dict(ber_curves.KOREASAT_2000_CLR)
    return tuple(
        Published(
            f"cell loss ratio at {ebno} dB",
            "§4.4, Table 3",
            paper_clr[ebno],
            _scientific,
            _clr_measure(ebno),
            "tcplab: the CLR its cell link applies at Table 3's BER (independent bit errors, "
            "a cell lost to two or more header errors); no run sends enough cells to measure "
            "it (table: LANE over ATM)",
        )
        for ebno in (6.0, 8.0)
    )


def exhibits(results: Results) -> list[Exhibit]:
    return [
        Exhibit(
            "LANE over ATM: Table 3's cell loss beside tcplab's cells",
            "Per Eb/No: the BER of Table 3 applied to every cell; the paper's measured CLR; the "
            "CLR and CER independent bit errors give at that BER (a cell is lost to two or "
            "more header errors, delivered errored with a payload error) and whether they meet "
            f"I.356's satellite objectives (CLR {I356_CLR:.1e}, CER {I356_CER:.1e}); cells "
            "lost and AAL5 frames lost in the runs; goodput with 32 KiB buffers over LANE/ATM "
            "and over the PPP hop of the main grid.",
            table3(results),
        )
    ]


EXPERIMENTS = (
    Experiment(
        EXPERIMENT,
        "LANE over ATM cells over the 2.048 Mb/s hop, 32 KiB buffers, 2048 KiB messages, "
        "bit errors per cell from Table 3, against Eb/No",
        scenario,
    ),
)

DIFFERENCES = (
    "LANE over ATM (experiment lane-atm) is LANE's encapsulation and MTU on cells; the LANE "
    "control plane (LE_ARP, BUS), the 155 Mb/s terrestrial segments, the switches and the "
    "ATM Link Accelerator are not modelled. Errors are independent bits at Table 3's BER: "
    "at BER b a cell is lost with probability about 780 b², so the CLR the model gives is "
    "10^-7 of the paper's or less; the paper's CLR, 20 to 100 times its BER, is what errors "
    "in bursts (Viterbi decoding's output) give, one burst taking a whole header.",
)
