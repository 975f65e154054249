"""Shared test helpers."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from snapshots import JsonSnapshot
from syrupy.assertion import SnapshotAssertion

# A valid plan (docs/internals/plan-and-result.md): the GEO path of Kim & Song (2000), a
# 2.048 Mb/s link with 275 ms one way, PPP framing, 32 KiB buffers, no window scaling.
_TCP: dict[str, Any] = {
    "cc": "newreno",
    "cubic_variant": "rfc9438",
    "reno_variant": "rfc5681",
    "sndbuf": 32768,
    "rcvbuf": 32768,
    "mss": 1460,
    "initial_window": 2,
    "window_scaling": False,
    "sack": False,
    "timestamps": False,
    "abc": False,
    "hystart": False,
    "hystart_variant": "rfc9406",
    "delayed_ack": False,
    "delack_timeout_ns": 200_000_000,
    "quickack": False,
    "initial_rwnd": None,
    "nagle": True,
    "nagle_variant": "rfc896",
    "fast_retransmit": True,
    "min_rto_ns": 200_000_000,
    "rto_form": "rfc6298",
    "cwnd_validation": False,
    "handshake": True,
    "loss_recovery": "classic",
    "dsack": False,
    "frto": False,
    "undo": False,
    "slow_start_after_idle": False,
    "gso": False,
    "sndbuf_accounting": "payload",
    "ecn": "off",
}
_DIRECTION: dict[str, Any] = {
    "rate_bps": 2_048_000,
    "delay_ns": 275_000_000,
    "queue": {"packets": 100},
    "error": {"kind": "none"},
    "framing": {"overhead_bytes": 2, "min_payload_bytes": 0},
    "atm": None,
    "aqm": None,
    "schedule": None,
}
PLAIN_APP: dict[str, Any] = {
    "write_delay_ns": 0,
    "read_size": None,
    "read_delay_ns": 0,
    "request_size": None,
    "response_size": None,
    "streams": [],
    "shared_connection": False,
}
"""The fields of a plan's app (the core's AppPlan) that an app without pauses, reads of a
set size, requests or streams has, as tcplab.plan writes them."""
_PLAN: dict[str, Any] = {
    "seed": 1,
    "duration_ns": 100_000_000_000,
    "interval_ns": 1_000_000_000,
    "trace_interval_ns": 10_000_000,
    # Copies, so that the deep copy in make_plan gives each its own dict.
    "hosts": [
        {"name": "client", "tcp": dict(_TCP), "cpu": None},
        {"name": "server", "tcp": dict(_TCP), "cpu": None},
    ],
    "links": [
        {"forward": copy.deepcopy(_DIRECTION), "reverse": copy.deepcopy(_DIRECTION), "wlan": None}
    ],
    "trace": None,
    "abr": None,
    "peps": [],
    "app": {"kind": "bulk", "message_size": 2_097_152, "bytes": None, **PLAIN_APP},
}


def make_plan(**overrides: Any) -> dict[str, Any]:
    """A fresh, valid plan dict, with overrides.

    Each keyword is a path into the plan, parts joined by ``__``, list indices as numbers:
    ``make_plan(duration_ns=10**9, hosts__0__tcp__sndbuf=4096,
    links__0__forward__error={"kind": "loss", "p": 0.01})``. A path that names a whole
    sub-object (``app={...}``, ``links=[...]``) replaces it. ``tcp__<field>`` sets the
    field on every host. Paths are applied in the order given; a path to a key that the
    plan does not have raises KeyError, so a typo cannot pass silently.
    """
    plan = copy.deepcopy(_PLAN)
    for path, value in overrides.items():
        parts = path.split("__")
        if parts[0] == "tcp":
            for host in plan["hosts"]:
                _set(host["tcp"], parts[1:], value, path)
        else:
            _set(plan, parts, value, path)
    return plan


def _set(node: Any, parts: list[str], value: Any, path: str) -> None:
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = copy.deepcopy(value)
    else:
        if last not in node:
            raise KeyError(f"make_plan: {path!r} is not a plan field")
        node[last] = copy.deepcopy(value)


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's snapshot, stored as one JSON file per test (tests/snapshots.py)."""
    return snapshot.use_extension(JsonSnapshot)
