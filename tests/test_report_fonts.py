"""The papers' Korean titles: the reports name a font that has Hangul, and plots draw it
from an installed one (scripts/setup installs fonts-nanum) instead of boxes."""

from __future__ import annotations

import warnings

import pytest
from matplotlib.figure import Figure

from tcplab.report import fonts, html, plots

TITLE = "위성 ATM 망에서 TCP/IP 트래픽의 전송성능 및 품질평가"


def test_the_html_reports_name_the_cjk_fonts_after_the_usual_ones() -> None:
    page = html.page("t", "m", [f"<p>{TITLE}</p>"])
    assert 'font-family: system-ui, "NanumGothic", "Noto Sans CJK KR", sans-serif' in page


def test_plots_draw_hangul_from_an_installed_cjk_font() -> None:
    if not fonts.installed_cjk_families():
        pytest.skip("no CJK font installed (scripts/setup installs fonts-nanum as root)")
    figure = Figure()
    figure.subplots().set_title(TITLE)
    with warnings.catch_warnings():
        # matplotlib warns "Glyph ... missing from font(s)" for each box it draws.
        warnings.simplefilter("error")
        plots.png_bytes(figure)
