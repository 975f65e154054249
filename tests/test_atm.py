"""ATM at cell level (docs/models/atm.md): the scenario fields, the plan, and runs that check
the cell-tax bound (issue 4 items 1 and 2) and what EPD does for many VCs."""

from __future__ import annotations

from typing import Any

import pytest

import tcplab
from tcplab.errors import SpecError
from tcplab.plan import resolve
from tcplab.spec import validate_spec

CELL_BITS = 53 * 8


def path(link: dict[str, Any], mss: int = 2000, buffers: str = "4MiB") -> dict[str, Any]:
    tcp = {"mss": mss, "sndbuf": buffers, "rcvbuf": buffers, "timestamps": False}
    return {
        "name": "atm",
        "duration": "3s",
        "interval": "500ms",
        "hosts": [{"name": "a", "tcp": tcp}, {"name": "b", "tcp": tcp}],
        "links": [{"kind": "atm", "delay": "1ms", **link}],
        "app": {"kind": "bulk"},
    }


def dumbbell(vcs: int, discard: str) -> dict[str, Any]:
    """Seed 001's Fig. 3 at 1 km: each source on its own 150 Mb/s access link (n · 0.56 km)
    into switch 1, a trunk to switch 2, a destination per source; YATS hosts (300 µs per
    packet), 64000-byte buffers, MSS 3000, 4096-cell output buffers, EPD threshold 3500."""
    tcp = {
        "profile": "windows-95",
        "mss": 3000,
        "sndbuf": 64000,
        "rcvbuf": 64000,
        "min_rto": "100ms",
    }
    access = {"kind": "atm", "rate": "150Mbps", "delay": f"{int(vcs * 0.56 * 5000)}ns"}
    links = [{"between": [f"src{i}", "sw1"], **access} for i in range(vcs)]
    links.append({"between": ["sw1", "sw2"], "kind": "atm", "rate": "150Mbps", "delay": "5us"})
    links += [{"between": ["sw2", f"dst{i}"], **access} for i in range(vcs)]
    switch: dict[str, Any] = {"buffer_cells": 4096, "discard": discard}
    if discard == "epd":
        switch["epd_threshold"] = 3500
    hosts = [{"name": f"{end}{i}", "cpu": "yats-300us", "tcp": tcp}
             for end in ("src", "dst") for i in range(vcs)]  # fmt: skip
    return {
        "name": "dumbbell",
        "duration": "300ms",
        "hosts": hosts,
        "routers": [{"name": "sw1", "switch": switch}, {"name": "sw2", "switch": switch}],
        "links": links,
        "flows": [{"src": f"src{i}", "dst": f"dst{i}"} for i in range(vcs)],
        "app": {"kind": "bulk"},
    }


def test_an_atm_link_resolves_to_cell_slots_and_its_encapsulation() -> None:
    plan = resolve(validate_spec(path({"rate": "25.6Mbps", "encapsulation": "lane",
                                        "cell_overhead": 1, "clr": 1e-4}, mss=1460)))  # fmt: skip
    forward = plan["links"][0]["forward"]
    assert forward["atm"] == {"slot_octets": 54, "encapsulation_bytes": 16, "mtu": 1500}
    assert forward["error"] == {"kind": "loss", "p": 1e-4}
    assert plan["links"][0]["reverse"]["atm"] == forward["atm"]


def test_a_switch_resolves_with_its_epd_threshold() -> None:
    routers = resolve(validate_spec(dumbbell(2, "epd")))["routers"]
    assert routers[0]["switch"] == {
        "buffer_cells": 4096,
        "discard": "epd",
        "epd_threshold_cells": 3500,
    }
    # Default: 0.8 of the buffer (models.md §2).
    spec = dumbbell(2, "epd")
    del spec["routers"][0]["switch"]["epd_threshold"]
    assert resolve(validate_spec(spec))["routers"][0]["switch"]["epd_threshold_cells"] == 3276


@pytest.mark.parametrize(
    ("link", "problem"),
    [
        ({"rate": "150Mbps", "loss": 0.01}, "loss: an ATM link loses cells"),
        ({"rate": "150Mbps", "queue": {"limit": "10p"}}, "queue: an ATM link buffers cells"),
        ({"rate": "150Mbps", "encapsulation": "ip"}, 'encapsulation: "ip" is not accepted'),
        ({"rate": "150Mbps", "clr": 0.1, "ber": 1e-6}, "ber and clr are both given"),
        ({"kind": "p2p", "rate": "1Mbps", "clr": 0.1}, 'clr: only for kind = "atm"'),
    ],
)
def test_atm_link_fields_are_checked(link: dict[str, Any], problem: str) -> None:
    with pytest.raises(SpecError, match=problem):
        validate_spec(path(link))


def test_a_switch_joins_only_atm_links() -> None:
    spec = dumbbell(2, "drop-tail")
    spec["links"][2]["kind"] = "p2p"
    with pytest.raises(SpecError, match='links.2.kind: joins ATM switch .sw1., so "atm"'):
        validate_spec(spec)


def test_the_mss_must_fit_the_encapsulations_mtu() -> None:
    # LANE carries 1500-byte datagrams: MSS 2000 does not fit.
    with pytest.raises(SpecError, match=r"hosts.0.tcp.mss: 2000 \+ 40 bytes .* 1500-byte MTU"):
        validate_spec(path({"rate": "150Mbps", "encapsulation": "lane"}))
    # A host behind a router: the simulator finds the ATM link on the flow's path.
    spec = dumbbell(1, "drop-tail")
    spec["routers"] = [{"name": "sw1"}, {"name": "sw2"}]
    spec["links"][1]["encapsulation"] = "lane"
    spec["links"][0] = {"between": ["src0", "sw1"], "rate": "150Mbps", "delay": "1us"}
    spec["links"][2] = {"between": ["sw2", "dst0"], "rate": "150Mbps", "delay": "1us"}
    with pytest.raises(tcplab.errors.BackendError, match=r"hosts.0.tcp.mss: 3000 \+ 40"):
        tcplab.run(spec)


def test_one_flow_on_a_loss_free_path_reaches_the_cell_tax_bound() -> None:
    # Issue 4 item 2. MSS 2000 with LLC/SNAP: 43 cells a segment on a 150 Mb/s cell
    # stream, so at most 150e6 · 2000 / 2279 = 131.64 Mb/s of goodput (models.md §1.5).
    result = tcplab.run(path({"rate": "150Mbps"}))
    bound = 150e6 * 2000 / 2279
    assert result.summary["atm"]["max_goodput_bps"] == pytest.approx(bound, rel=1e-9)
    series = result.to_pandas()
    steady = series[series["t_s"] > 0.5]["goodput_bps"]
    # Out of slow start (the first 0.5 s), every interval is within 1 % of the bound.
    assert steady.min() > 0.99 * bound
    assert steady.max() <= bound * 1.0001
    assert result.summary["atm"]["cells_dropped"] == 0
    assert result.summary["atm"]["frames_lost"] == 0


def test_epd_raises_efficiency_over_plain_ubr_with_many_vcs() -> None:
    # Romanow & Floyd 1995 (and seed 001's Table 2): with 30 VCs through a 4096-cell port
    # plain UBR wastes the trunk on cells of frames already damaged; EPD drops whole frames.
    ubr = tcplab.run(dumbbell(30, "drop-tail")).summary["atm"]
    epd = tcplab.run(dumbbell(30, "epd")).summary["atm"]
    assert ubr["cells_dropped"] > 0 and epd["cells_dropped"] > 0
    assert epd["efficiency"] > 1.03 * ubr["efficiency"]
    # Damaged frames: plain UBR loses more frames for its cells dropped.
    assert ubr["frames_lost"] > epd["frames_lost"]
