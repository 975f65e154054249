"""DVB-S2's modulation and coding table for adaptive coding and modulation (ACM).

ETSI EN 302 307-1 V1.4.1, Table 13: for each MODCOD of a normal (64 800-bit) FECFRAME
without pilots, its spectral efficiency (information bits per symbol) and the ideal Es/No
at which it is quasi-error-free (packet error rate 1e-7 on an AWGN channel).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Modcod:
    name: str
    esno_db: float
    bits_per_symbol: float


DVB_S2 = (
    Modcod("QPSK 1/4", -2.35, 0.490243),
    Modcod("QPSK 1/3", -1.24, 0.656448),
    Modcod("QPSK 2/5", -0.30, 0.789412),
    Modcod("QPSK 1/2", 1.00, 0.988858),
    Modcod("QPSK 3/5", 2.23, 1.188304),
    Modcod("QPSK 2/3", 3.10, 1.322253),
    Modcod("QPSK 3/4", 4.03, 1.487473),
    Modcod("QPSK 4/5", 4.68, 1.587196),
    Modcod("QPSK 5/6", 5.18, 1.654663),
    Modcod("QPSK 8/9", 6.20, 1.766451),
    Modcod("QPSK 9/10", 6.42, 1.788612),
    Modcod("8PSK 3/5", 5.50, 1.779991),
    Modcod("8PSK 2/3", 6.62, 1.980636),
    Modcod("8PSK 3/4", 7.91, 2.228124),
    Modcod("8PSK 5/6", 9.35, 2.478562),
    Modcod("8PSK 8/9", 10.69, 2.646012),
    Modcod("8PSK 9/10", 10.98, 2.679207),
    Modcod("16APSK 2/3", 8.97, 2.637201),
    Modcod("16APSK 3/4", 10.21, 2.966728),
    Modcod("16APSK 4/5", 11.03, 3.165623),
    Modcod("16APSK 5/6", 11.61, 3.300184),
    Modcod("16APSK 8/9", 12.89, 3.523143),
    Modcod("16APSK 9/10", 13.13, 3.567342),
    Modcod("32APSK 3/4", 12.73, 3.703295),
    Modcod("32APSK 4/5", 13.64, 3.951571),
    Modcod("32APSK 5/6", 14.28, 4.119540),
    Modcod("32APSK 8/9", 15.69, 4.397854),
    Modcod("32APSK 9/10", 16.05, 4.453027),
)


def best(esno_db: float, margin_db: float = 0.0) -> Modcod | None:
    """The MODCOD of highest spectral efficiency that is quasi-error-free at `esno_db` with
    `margin_db` to spare; None below every one (the carrier is lost). The table is not in
    order of Es/No (8PSK 3/5 needs more than QPSK 9/10 and carries less), so all are looked at."""
    usable = [m for m in DVB_S2 if m.esno_db + margin_db <= esno_db]
    return max(usable, key=lambda m: m.bits_per_symbol, default=None)
