"""A split-connection PEP on the real kernel (issue 7, item 4): on seed 004's path behind a
short terrestrial hop, for the paper's 10 s, a PEP whose satellite side runs CUBIC with an
initial window of 2560 segments beats the unsplit Reno connection end to end, and each of
its sockets really runs its side's settings. The two runs go in parallel (each has its own
namespaces), about 30 s together. Needs root (CI has it), TUN devices and namespaces.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tcplab
from tcplab.api import prepare
from tcplab.backends import emu
from tcplab.emu import leftovers
from tcplab.plan import resolve

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "satellite-pep.toml"


def run_emu(scenario: dict[str, Any]) -> tcplab.RunResult:
    raw = emu.run(resolve(prepare(scenario)))
    return tcplab.RunResult.from_backend(raw, {"backend": "emu", "name": scenario["name"]})


def test_a_large_satellite_window_behind_the_pep_beats_the_unsplit_connection() -> None:
    split = tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True)
    unsplit = {key: value for key, value in split.items() if key != "peps"}
    unsplit["name"] = "unsplit"
    with ThreadPoolExecutor(max_workers=2) as pool:
        through, alone = pool.map(run_emu, (split, unsplit))
    print({r.meta["name"]: r.summary["bytes_delivered"] / 2**20 for r in (through, alone)})
    # The unsplit connection moves about 24 MiB in 10 s (Reno from 10 segments over
    # 610 ms); through the PEP about 43 MiB, held by the 3 MiB window over 600 ms.
    assert through.summary["bytes_delivered"] > 1.5 * alone.summary["bytes_delivered"]
    assert [row["dst"] for row in through.segments] == ["gateway", "server"]
    assert through.segments[1]["bytes_delivered"] == through.summary["bytes_delivered"]
    # The relay read at least what reached the server, through a buffer of 4 MiB.
    assert through.segments[0]["bytes_delivered"] >= through.summary["bytes_delivered"]
    assert through.segments[0]["relay_peak_bytes"] <= 4 * 2**20
    (gateway,) = through.summary["emu"]["peps"]
    assert gateway["client_side"]["tcp_congestion"] == "reno"
    assert gateway["server_side"]["tcp_congestion"] == "cubic"
    assert not alone.segments
    # The PEP's namespace went with the others (tests/test_emu_leaks.py kills runs too).
    assert not [n for n in leftovers() if n.startswith(f"tcplab-{os.getpid()}-")]
