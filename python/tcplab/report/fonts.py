"""Fonts for the papers' Korean titles and quotes, in the HTML reports and their plots.

matplotlib's DejaVu Sans and many systems' default fonts have no Hangul, which then shows
as boxes. `CJK_FAMILIES` are the fonts that have it, in order of preference: scripts/setup
installs the first (Debian's fonts-nanum); Noto Sans CJK (fonts-noto-cjk) serves as well.
The reports name them after the usual fonts, so Latin text keeps its look and only the
glyphs the first font lacks come from them; without any, text renders as before.
"""

from __future__ import annotations

import functools

CJK_FAMILIES = ("NanumGothic", "Noto Sans CJK KR")

# For the HTML reports: the browser takes each glyph from the first font that has it.
CSS_FAMILY = ", ".join(["system-ui", *(f'"{name}"' for name in CJK_FAMILIES), "sans-serif"])


@functools.cache
def installed_cjk_families() -> tuple[str, ...]:
    """The CJK_FAMILIES matplotlib can use. A font installed after matplotlib cached its
    font list (~/.cache/matplotlib) is added to it from the system's font files."""
    from matplotlib import font_manager

    known = {font.name for font in font_manager.fontManager.ttflist}
    if not known.issuperset(CJK_FAMILIES):
        for path in font_manager.findSystemFonts():
            if any(word in path for word in ("Nanum", "NotoSansCJK")):
                font_manager.fontManager.addfont(path)
        known = {font.name for font in font_manager.fontManager.ttflist}
    return tuple(name for name in CJK_FAMILIES if name in known)


def use_cjk_fallback() -> None:
    """Let matplotlib draw the glyphs its font lacks (Hangul) from an installed CJK font."""
    from matplotlib import rcParams

    families = list(rcParams["font.family"])
    rcParams["font.family"] = families + [
        name for name in installed_cjk_families() if name not in families
    ]
