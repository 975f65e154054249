"""The `sim` backend: the Rust discrete-event simulator, reached through `tcplab._sim`."""

from __future__ import annotations

import json
from typing import Any

from tcplab.columns import Columns
from tcplab.errors import BackendError
from tcplab.plan import topology_form

try:
    from tcplab import _sim
except ImportError as error:
    raise BackendError(
        "the simulator extension tcplab._sim is not built; "
        "install tcplab with `pip install .` or run `maturin develop --release`"
    ) from error


def run(plan: dict[str, Any]) -> dict[str, Any]:
    """Run `plan` in the simulator. The plan goes in as JSON, in its topology form; the
    result's rows and scalars come back as JSON and its long parts (series, trace, ATM
    queue, ABR rates) as column buffers, kept as `tcplab.columns.Columns` without parsing.

    The packet captures the plan asks for come back under "captures", as a dict from each
    capture's name ("links.0") to the bytes of its pcap file.
    """
    try:
        output, tables, captures = _sim.run_columnar(json.dumps(topology_form(plan)))
    except ValueError as error:
        # The core names the plan field it refuses (a series or trace too large for the
        # result's memory budget is refused on its interval before the run starts).
        raise BackendError(f"the simulator refused the plan: {error}") from None
    columns = {part: Columns.from_sim(table) for part, table in tables.items()}
    return {**json.loads(output), **columns, "captures": captures}
