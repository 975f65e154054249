"""How two backends' results of one scenario compare: notes that account for a difference."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tcplab.report import display

# Differences beyond this share are explained under the comparison table.
AGREEMENT = 0.10

def _number(summary: Mapping[str, Any], key: str) -> float | None:
    value = display.lookup(summary, key)[0]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

def _transaction_notes(a: str, b: str, sa: Mapping[str, Any], sb: Mapping[str, Any]) -> list[str]:
    """How two request/response results compare: rate and mean latency."""
    notes = []
    for key, what in (
        ("rr.transactions_per_s", "transactions/s"),
        ("rr.latency_mean_s", "mean latency"),
    ):
        va, vb = _number(sa, key), _number(sb, key)
        if va is None or vb is None or va == 0:
            continue
        gap = vb / va - 1
        within = "within" if abs(gap) <= AGREEMENT else "beyond"
        notes.append(f"{what}: {b} {100 * gap:+.1f} % against {a} ({within} {AGREEMENT:.0%})")
    return notes

def explain(summaries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Notes that account for a goodput difference beyond AGREEMENT, from the results'
    own numbers (and, where the difference is a known modelling choice, its source)."""
    names = list(summaries)
    a, b = names[0], names[1]
    sa, sb = summaries[a], summaries[b]
    ga, gb = _number(sa, "goodput_bps"), _number(sb, "goodput_bps")
    if ga is None or gb is None or ga == 0:
        return []
    transactions = _transaction_notes(a, b, sa, sb)
    gap = gb / ga - 1
    if abs(gap) <= AGREEMENT:
        return [
            f"goodput agrees within {100 * AGREEMENT:.0f} % ({100 * gap:+.1f} %)",
            *transactions,
        ]
    notes = [f"goodput differs by {100 * gap:+.1f} % ({b} vs {a}); what differs:", *transactions]
    for key, what in (("retransmits", "retransmitted segments"), ("timeouts", "timeouts")):
        va, vb = _number(sa, key), _number(sb, key)
        if va is not None and vb is not None and va != vb:
            notes.append(f"{what}: {a} {va:g}, {b} {vb:g}")
    shares = {}
    for name, summary in ((a, sa), (b, sb)):
        limited = summary.get("limited_by") or {}
        if limited:
            shares[name] = max(limited, key=lambda k: limited[k] or 0)
    if len(shares) == 2 and shares[a] != shares[b]:
        notes.append(f"the main limit differs: {a} {shares[a]}, {b} {shares[b]}")
    for name, summary in ((a, sa), (b, sb)):
        emu = summary.get("emu")
        if isinstance(emu, Mapping):
            timing = emu.get("timing_error_us", {})
            notes.append(
                f"{name}: Linux {emu.get('sender_cc')} on kernel {emu.get('kernel')}; the "
                f"emulator delivered packets {timing.get('p99_us', math.nan):.0f} µs late at "
                f"p99 (max {timing.get('max_us', math.nan):.0f} µs). Linux mechanisms no "
                "scenario field controls: CUBIC's HyStart (tcp_cubic.c, hystart=1), the "
                "receiver's gradual window growth (rcv_ssthresh, tcp_grow_window), quick "
                "ACKs at connection start, RACK-TLP, and RTO >= SRTT + rto_min (docs/emu.md)"
            )
    return notes
