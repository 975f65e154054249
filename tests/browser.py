"""Render HTML reports in headless Chromium: which images loaded, and a screenshot.

Chromium is required, not optional: a report whose plots do not load in a browser is
broken however its HTML looks, so without Chromium these tests fail and say how to get it
(scripts/setup installs Debian's `chromium` when run as root).
"""

from __future__ import annotations

import html as html_text
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
_NAMES = ("chromium", "chromium-browser", "google-chrome")
# Headless, nothing fetched or synced in the background: the report must load on its own.
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars")  # fmt: skip
# Appended to a copy of the report: after the load event (which waits for every image),
# write what the expression finds where --dump-dom can read it.
_PROBE = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "tcplab-probe";
  out.textContent = JSON.stringify(%s);
  document.body.appendChild(out);
});
</script>"""
_IMAGES = """[...document.images].map(
    (image) => ({alt: image.alt, complete: image.complete, width: image.naturalWidth,
                 height: image.naturalHeight}))"""
# Tables whose box scrolls: wider than the page leaves them.
_WIDE_TABLES = """[...document.querySelectorAll("div.table")].map(
    (box, index) => ({index: index, width: box.scrollWidth, room: box.clientWidth}))
    .filter((box) => box.width > box.room)"""
# The width the report is read at (as the screenshots).
_WINDOW = "--window-size=1200,4000"
_TIMEOUT_S = 120


def chromium() -> str:
    for name in _NAMES:
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(
        "Chromium is not installed, so the reports cannot be checked in a browser: run "
        "scripts/setup as root (it installs Debian's chromium) or `apt-get install chromium`"
    )


def _run(tmp_path: Path, *arguments: str) -> str:
    command = [chromium(), *_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


def _probe(report: Path, tmp_path: Path, expression: str) -> list[dict[str, object]]:
    """What the JavaScript `expression` finds in `report` once Chromium has loaded it."""
    html = report.read_text(encoding="utf-8")
    probe = tmp_path / f"probe-{report.name}"
    probe.write_text(html.replace("</body>", _PROBE % expression + "</body>"), encoding="utf-8")
    dom = _run(tmp_path, _WINDOW, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="tcplab-probe">(.*?)</pre>', dom, re.DOTALL)
    assert found, "the page's load event never ran"
    return json.loads(html_text.unescape(found.group(1)))  # type: ignore[no-any-return]


def loaded_images(report: Path, tmp_path: Path) -> list[dict[str, object]]:
    """The state of every <img> of `report` once Chromium has loaded it."""
    return _probe(report, tmp_path, _IMAGES)


def wide_tables(report: Path, tmp_path: Path) -> list[dict[str, object]]:
    """The tables of `report` wider than the page leaves them (their box scrolls)."""
    return _probe(report, tmp_path, _WIDE_TABLES)


def screenshot(report: Path, name: str, tmp_path: Path, height: int = 4000) -> Path:
    """A full-width screenshot of `report` kept as tests/artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / f"{name}.png"
    target.unlink(missing_ok=True)
    _run(tmp_path, f"--window-size=1200,{height}", f"--screenshot={target}", report.as_uri())
    assert target.read_bytes().startswith(b"\x89PNG")
    return target


def assert_renders(report: Path, name: str, tmp_path: Path) -> list[dict[str, object]]:
    """Every image of `report` loads in Chromium with a real size; a screenshot is kept."""
    expected = report.read_text(encoding="utf-8").count("<img ")
    images = loaded_images(report, tmp_path)
    assert len(images) == expected > 0
    broken = [image for image in images if not (image["complete"] and image["width"])]
    assert not broken, f"images that did not load: {broken}"
    screenshot(report, name, tmp_path)
    return images
