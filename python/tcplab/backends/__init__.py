"""Backends: modules with `run(plan: dict) -> dict` taking a plan and returning a result dict,
both as in docs/internals/plan-and-result.md."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from tcplab.errors import BackendError

BACKENDS = ("sim", "model", "emu")

# The result's trace columns (docs/internals/plan-and-result.md), which every backend fills.
TRACE_COLUMNS = (
    "flow",
    "t_s",
    "cwnd_bytes",
    "ssthresh_bytes",
    "srtt_s",
    "flight_bytes",
    "rwnd_bytes",
    # Running totals since the connection began: their differences give any interval's
    # bytes acknowledged and segments retransmitted (tcplab.iperf3). None where unknown.
    "acked_bytes",
    "retransmits",
)
# The contract caps a still-"infinite" ssthresh at 2^32 - 1.
SSTHRESH_INFINITE_BYTES = 2**32 - 1


def empty_trace() -> dict[str, list[Any]]:
    """The result's trace table with no rows yet."""
    return {column: [] for column in TRACE_COLUMNS}


def get_backend(name: str) -> ModuleType:
    """The backend module called `name`; BackendError if it is unknown or cannot load."""
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; accepted: {', '.join(BACKENDS)}")
    return importlib.import_module(f"tcplab.backends.{name}")
