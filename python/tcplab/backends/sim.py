"""The `sim` backend: the Rust discrete-event simulator, reached through `tcplab._sim`."""

from __future__ import annotations

import json
from typing import Any

from tcplab.errors import BackendError

try:
    from tcplab import _sim
except ImportError as error:
    raise BackendError(
        "the simulator extension tcplab._sim is not built; "
        "install tcplab with `pip install .` or run `maturin develop --release`"
    ) from error


def run(plan: dict[str, Any]) -> dict[str, Any]:
    """Run `plan` in the simulator; the plan and the result cross the boundary as JSON.

    The packet captures the plan asks for come back under "captures", as a dict from each
    capture's name ("links.0") to the bytes of its pcap file.
    """
    try:
        output, captures = _sim.run_capturing(json.dumps(plan))
    except ValueError as error:
        # The core names the plan field it refuses; the spec should have caught it first.
        raise BackendError(f"the simulator refused the plan: {error}") from None
    return {**json.loads(output), "captures": captures}
