"""ATM at cell level (docs/models/atm.md): the scenario fields, the plan, and runs that check
the cell-tax bound (issue 4 items 1 and 2) and what EPD does for many VCs."""

from __future__ import annotations

from typing import Any

import pytest

import tcplab
from tcplab.analytic.framing import atm_cells, atm_wire_bytes
from tcplab.errors import SpecError
from tcplab.plan import resolve
from tcplab.spec import canonical_dict, validate_spec

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


def test_seed_001_segment_takes_43_cells_and_2279_bytes() -> None:
    # Issue 4 item 1 / seed 001 §3.2: 2000 bytes of data + 40 of TCP/IP + 8 of LLC/SNAP
    # (RFC 2684) + the 8-byte AAL5 trailer (I.363.5) fill 43 cells of 48, 43 × 53 = 2279.
    assert atm_cells(2040, 8) == 43
    assert atm_wire_bytes(2040, {"slot_octets": 53, "encapsulation_bytes": 8}) == 2279


def model_bound(link: dict[str, Any], mss: int) -> float:
    spec = {**path(link, mss=mss), "backend": "model"}
    return float(tcplab.run(spec).summary["model"]["link_bound_bps"])


@pytest.mark.parametrize(
    ("link", "mss", "mbps"),
    [
        # Seed 001: MSS 2000 over LLC/SNAP on a 150 Mb/s cell stream, 150 · 2000 / 2279.
        ({"rate": "150Mbps"}, 2000, 131.637),
        # models.md §1.5: OC-3c payload (149.76 Mb/s) with MSS 1460 and 9140.
        ({"rate": "149.76Mbps"}, 1460, 128.92),
        ({"rate": "149.76Mbps", "encapsulation": "clip"}, 9140, 134.51),
        # ATM25 with its start-of-cell command octet (af-phy-0040.000): 54 octets a cell.
        ({"rate": "25.6Mbps", "cell_overhead": 1, "encapsulation": "lane"}, 1460, 21.63),
        ({"rate": "25.6Mbps", "cell_overhead": 1, "encapsulation": "clip"}, 9140, 22.57),
    ],
)
def test_the_model_gives_the_cell_tax_bound(link: dict[str, Any], mss: int, mbps: float) -> None:
    # Issue 4 item 1: goodput_max = cell rate · MSS · 8 / cells(MSS + 40 + H).
    assert model_bound(link, mss) / 1e6 == pytest.approx(mbps, abs=0.005)


def test_the_simulator_and_the_model_agree_on_the_bound() -> None:
    link = {"rate": "25.6Mbps", "cell_overhead": 1, "encapsulation": "lane"}
    sim = tcplab.run({**path(link, mss=1460), "duration": "10ms"}).summary["atm"]
    assert sim["max_goodput_bps"] == pytest.approx(model_bound(link, 1460), rel=1e-12)


def test_the_model_counts_cell_losses_per_cell() -> None:
    # A CLR of 1e-3 loses a 43-cell frame with probability 1 − 0.999^43.
    spec = {**path({"rate": "150Mbps", "clr": 1e-3}), "backend": "model"}
    # Recovery by duplicate ACKs, whose timeouts PFTK counts (the model refuses RACK-TLP).
    for host in spec["hosts"]:
        host["tcp"]["loss_recovery"] = "classic"
    p = tcplab.run(spec).summary["model"]["loss_probability"]
    assert p == pytest.approx(1 - 0.999**43, rel=1e-9)


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
        "feedback": {"kind": "none"},
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


def test_an_atm_scenario_validates_again_from_its_canonical_form() -> None:
    spec = validate_spec(dumbbell(2, "epd"))
    assert validate_spec(canonical_dict(spec)) == spec


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
    # Plain UBR carries the rest of a damaged frame to the receiver for nothing; EPD drops
    # frames whole and, once the buffer is full, PPD the rest of the damaged one.
    assert ubr["frames_lost"] > epd["frames_lost"]
    assert ubr["cells_dead"] > 5 * epd["cells_dead"]


def test_a_cell_loss_ratio_loses_that_share_of_cells_and_their_frames() -> None:
    result = tcplab.run({**path({"rate": "150Mbps", "clr": 1e-3}), "duration": "1s"})
    atm = result.summary["atm"]
    assert atm["cells_dropped"] == 0
    assert atm["cell_loss_ratio"] == pytest.approx(1e-3, rel=0.1)
    # A frame is lost with any of its cells: 43-cell data frames and 2-cell ACKs.
    frames = atm["frames_delivered"] + atm["frames_lost"]
    assert 2 * 1e-3 < atm["frames_lost"] / frames < 43 * 1e-3
    assert result.summary["retransmits"] > 0
