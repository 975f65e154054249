"""Every example's summary pinned (tests/snapshots.py says how to review and update them).

An example written for the emu backend is pinned as the simulator runs it: the kernel's
numbers vary from run to run, the simulator's do not. A sweep is pinned as its points'
means, standard deviations and confidence half-widths.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from snapshots import plain, summary
from syrupy.assertion import SnapshotAssertion

import tcplab

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_summary(example: Path, tmp_path: Path, json_snapshot: SnapshotAssertion) -> None:
    spec = tcplab.load_spec(example)
    backend = "sim" if spec.backend == "emu" else spec.backend
    if spec.sweep is not None:
        store = tcplab.sweep(example, out=tmp_path / "results", backend=backend, jobs=1)
        # Columns in name order: the store may list them in another order, which is no change.
        assert plain(store.aggregate().sort_index(axis=1)) == json_snapshot
    else:
        assert summary(tcplab.run(example, backend=backend).summary) == json_snapshot
