"""Eb/No -> BER curves: closed forms, tabulated points, interpolation, ranges, errors."""

from __future__ import annotations

import math

import pytest

from tcplab.analytic import ber_curves
from tcplab.analytic.ber_curves import (
    CONV_K7_R34_SIMULATED,
    CURVES,
    KOREASAT_2000_BER,
    KOREASAT_2000_CLR,
    ber_from_ebno,
    clr_koreasat_2000,
    conv_k7_r34_union_bound,
)


def _grid(lo: float, hi: float, step: float) -> list[float]:
    # Rounded so that the end points are the exact decimals (8.4, not 8.400000000000002).
    n = round((hi - lo) / step)
    return [round(lo + i * step, 9) for i in range(n + 1)]


def test_every_curve_is_named_and_described() -> None:
    assert set(CURVES) == {"qpsk", "qpsk-conv-k7-r34", "koreasat-2000"}
    assert all(CURVES.values())


# --- qpsk -----------------------------------------------------------------------------


def test_qpsk_is_half_erfc_of_sqrt_ebno() -> None:
    # 0 dB: Eb/N0 = 1, BER = erfc(1)/2 = 0.0786496...
    assert ber_from_ebno("qpsk", 0.0) == pytest.approx(0.5 * math.erfc(1.0), rel=1e-15)
    assert ber_from_ebno("qpsk", 0.0) == pytest.approx(0.07864960352514258, rel=1e-12)
    # 9.6 dB is the textbook "1e-5 for uncoded BPSK/QPSK" point.
    assert ber_from_ebno("qpsk", 9.6) == pytest.approx(1e-5, rel=0.05)


def test_qpsk_is_defined_at_any_finite_ebno() -> None:
    assert ber_from_ebno("qpsk", -10.0) == pytest.approx(0.5 * math.erfc(math.sqrt(0.1)))
    assert ber_from_ebno("qpsk", 40.0) == 0.0  # underflows to zero: error-free


# --- qpsk-conv-k7-r34 -----------------------------------------------------------------


def test_conv_reproduces_simulated_points_exactly() -> None:
    for ebno, ber in CONV_K7_R34_SIMULATED:
        assert ber_from_ebno("qpsk-conv-k7-r34", ebno) == ber


def test_conv_interpolates_log_linearly_between_points() -> None:
    # Halfway between 4.0 (3.6e-4) and 4.5 (8.4e-5): the geometric mean.
    assert ber_from_ebno("qpsk-conv-k7-r34", 4.25) == pytest.approx(math.sqrt(3.6e-4 * 8.4e-5))


def test_union_bound_terms_by_hand() -> None:
    # (1/3) sum c_d Q(sqrt(2 d (3/4) Eb/N0)) at 7 dB, written out term by term.
    g = 10**0.7
    spectrum = [42, 201, 1492, 10469, 62935, 379546, 2252394]
    expected = (
        sum(
            c * 0.5 * math.erfc(math.sqrt(2 * d * 0.75 * g) / math.sqrt(2))
            for d, c in zip(range(5, 12), spectrum, strict=True)
        )
        / 3
    )
    assert conv_k7_r34_union_bound(7.0) == pytest.approx(expected, rel=1e-14)
    assert ber_from_ebno("qpsk-conv-k7-r34", 7.0) == pytest.approx(expected, rel=1e-14)


def test_union_bound_values() -> None:
    # Independently computed with the 7-term bound: 4.34e-7 at 6 dB, 6.86e-9 at 7 dB,
    # 4.39e-11 at 8 dB.
    assert conv_k7_r34_union_bound(6.0) == pytest.approx(4.343e-7, rel=1e-3)
    assert conv_k7_r34_union_bound(7.0) == pytest.approx(6.857e-9, rel=1e-3)
    assert conv_k7_r34_union_bound(8.0) == pytest.approx(4.390e-11, rel=1e-3)


def test_conv_joins_the_bound_continuously_above_6_db() -> None:
    # The bound is above the simulated 3.8e-7 just past 6 dB; the curve holds 3.8e-7 there
    # instead of jumping up, and is the plain bound once the bound drops below it.
    assert ber_from_ebno("qpsk-conv-k7-r34", 6.0 + 1e-9) == pytest.approx(3.8e-7)
    assert ber_from_ebno("qpsk-conv-k7-r34", 6.01) == 3.8e-7
    assert ber_from_ebno("qpsk-conv-k7-r34", 6.1) == conv_k7_r34_union_bound(6.1)
    assert conv_k7_r34_union_bound(6.1) < 3.8e-7


def test_conv_refuses_below_2_db() -> None:
    with pytest.raises(ValueError, match=r"Eb/No >= 2\.0 dB"):
        ber_from_ebno("qpsk-conv-k7-r34", 1.99)


def test_coded_beats_uncoded_above_the_waterfall() -> None:
    for ebno in _grid(3.0, 10.0, 0.25):
        assert ber_from_ebno("qpsk-conv-k7-r34", ebno) < ber_from_ebno("qpsk", ebno)


# --- koreasat-2000 --------------------------------------------------------------------


def test_koreasat_reproduces_table_3_exactly() -> None:
    table = {8.4: 1.0e-8, 8.0: 2.5e-8, 7.6: 1.0e-7, 7.3: 3.7e-7, 7.0: 7.5e-7,
             6.7: 1.4e-6, 6.5: 4.2e-6, 6.3: 7.1e-6, 6.0: 1.2e-5, 5.8: 5.0e-5}  # fmt: skip
    assert dict(KOREASAT_2000_BER) == table
    for ebno, ber in table.items():
        assert ber_from_ebno("koreasat-2000", ebno) == ber


def test_koreasat_clr_column() -> None:
    clr = {8.4: 8.7e-7, 8.0: 2.7e-6, 7.6: 6.9e-6, 7.3: 1.5e-5, 7.0: 2.6e-5,
           6.7: 5.4e-5, 6.5: 7.4e-5, 6.3: 1.0e-4, 6.0: 2.7e-4, 5.8: 3.4e-4}  # fmt: skip
    assert dict(KOREASAT_2000_CLR) == clr
    assert [e for e, _ in KOREASAT_2000_CLR] == [e for e, _ in KOREASAT_2000_BER]
    assert clr_koreasat_2000(7.6) == 6.9e-6
    assert clr_koreasat_2000(7.8) == pytest.approx(math.sqrt(6.9e-6 * 2.7e-6))


def test_koreasat_interpolates_in_log_ber() -> None:
    # 7.8 dB is halfway between 7.6 (1e-7) and 8.0 (2.5e-8): the geometric mean, 5e-8.
    assert ber_from_ebno("koreasat-2000", 7.8) == pytest.approx(5e-8)
    # A third of the way from 6.0 (1.2e-5) to 6.3 (7.1e-6).
    expected = 10 ** (math.log10(1.2e-5) + (math.log10(7.1e-6) - math.log10(1.2e-5)) / 3)
    assert ber_from_ebno("koreasat-2000", 6.1) == pytest.approx(expected)


@pytest.mark.parametrize("ebno", [5.79, 8.41, 0.0, 12.0])
def test_koreasat_refuses_outside_its_table(ebno: float) -> None:
    with pytest.raises(ValueError, match=r"covers Eb/No 5\.8-8\.4 dB"):
        ber_from_ebno("koreasat-2000", ebno)
    with pytest.raises(ValueError, match=r"5\.8-8\.4 dB"):
        clr_koreasat_2000(ebno)


# --- all curves -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("curve", "lo", "hi"),
    [("qpsk", -5.0, 15.0), ("qpsk-conv-k7-r34", 2.0, 12.0), ("koreasat-2000", 5.8, 8.4)],
)
def test_curves_fall_monotonically_with_ebno(curve: str, lo: float, hi: float) -> None:
    points = _grid(lo, hi, 0.01)
    bers = [ber_from_ebno(curve, x) for x in points]
    assert all(0.0 <= b <= 0.5 for b in bers)
    assert all(b1 <= b0 for b0, b1 in zip(bers, bers[1:], strict=False))
    # Strictly falling across every 0.1 dB step (the cap above 6 dB is < 0.05 dB wide).
    coarse = [ber_from_ebno(curve, x) for x in _grid(lo, hi, 0.1)]
    assert all(b1 < b0 for b0, b1 in zip(coarse, coarse[1:], strict=False) if b0 > 0)


def test_unknown_curve_lists_accepted_names() -> None:
    with pytest.raises(ValueError, match="unknown ber curve 'bpsk'") as info:
        ber_from_ebno("bpsk", 5.0)
    for name in CURVES:
        assert name in str(info.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_ebno_is_refused(bad: float) -> None:
    for curve in CURVES:
        with pytest.raises(ValueError, match="finite"):
            ber_from_ebno(curve, bad)


def test_non_number_ebno_is_refused() -> None:
    with pytest.raises(ValueError, match="number"):
        ber_from_ebno("qpsk", "7 dB")  # type: ignore[arg-type]


def test_module_exports_one_function_per_curve() -> None:
    # Every described curve evaluates somewhere inside its range.
    for curve, x in (("qpsk", 5.0), ("qpsk-conv-k7-r34", 5.0), ("koreasat-2000", 7.0)):
        assert 0.0 < ber_curves.ber_from_ebno(curve, x) < 0.5
