"""The emulator runs the simulator's queue disciplines (docs/models/aqm.md, docs/emu.md):
the real Linux CUBIC through a 10 Mb/s hop with 500 packets of buffer keeps its queue near
FQ-CoDel's 5 ms target, where drop-tail lets it fill the buffer; with ECN asked for, the
kernel's ECT packets are marked instead of dropped. Needs root (CI has it), TUN devices
and network namespaces; run under the shared emu lock on a shared machine."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tcplab
from tcplab.api import prepare
from tcplab.backends import emu
from tcplab.plan import resolve

# The path's bare round trip: 2 × 20 ms.
BASE_RTT_S = 0.040


def scenario(kind: str, ecn: str = "passive") -> dict[str, Any]:
    tcp = {"cc": "cubic", "ecn": ecn}
    return {
        "name": f"emu-{kind}-{ecn}",
        "duration": "8s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "10Mbps", "delay": "20ms", "queue": {"kind": kind, "limit": "500p"}}],
        "app": {"kind": "bulk"},
    }


def run_emu(spec: dict[str, Any]) -> tcplab.RunResult:
    raw = emu.run(resolve(prepare(spec)))
    return tcplab.RunResult.from_backend(raw, {"backend": "emu", "name": spec["name"]})


def standing_delay_s(result: tcplab.RunResult) -> float:
    """The bulk flow's median srtt from 3 s on, over the bare round trip."""
    trace = result.trace_frame()
    return float(trace[trace["t_s"] >= 3.0]["srtt_s"].median()) - BASE_RTT_S


def test_the_kernels_cubic_meets_fq_codel_in_the_emulator() -> None:
    specs = {
        "fq_codel": scenario("fq_codel"),
        "droptail": scenario("droptail"),
        "ecn": scenario("fq_codel", ecn="on"),
    }
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        futures = {key: pool.submit(run_emu, spec) for key, spec in specs.items()}
        results = {key: future.result() for key, future in futures.items()}
    delay = {key: standing_delay_s(r) for key, r in results.items()}
    # FQ-CoDel holds the standing queue near 5 ms; under drop-tail CUBIC's sawtooth fills
    # the 500 packets (0.6 s) and drains part of them after each loss.
    assert delay["fq_codel"] < 0.015, delay
    assert delay["droptail"] > 0.2, delay
    # With ECN the same short queue, held by marks: (almost) nothing to retransmit.
    assert delay["ecn"] < 0.015, delay
    assert results["ecn"].summary["retransmits"] <= 2, results["ecn"].summary
    assert results["fq_codel"].summary["retransmits"] > results["ecn"].summary["retransmits"]
    for result in results.values():
        assert result.summary["goodput_bps"] > 8e6, result.summary
