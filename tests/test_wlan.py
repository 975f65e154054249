"""The 802.11b DCF medium (`kind = "wlan"`, docs/models/wlan.md) against the airtime
arithmetic of its DCF exchanges (issue 7, item 1), and its scenario fields."""

from __future__ import annotations

from typing import Any

import pytest

import tcplab
from tcplab.analytic.wlan import wlan_goodput_bps
from tcplab.backends import capabilities
from tcplab.errors import Unsupported
from tcplab.plan import resolve
from tcplab.spec import SpecError, validate_spec

MSS = 1460


def one_station(delayed_ack: bool, **wlan: Any) -> dict[str, Any]:
    """A station sends bulk data to the access point's own host at 11 Mb/s. A 64 KiB
    window stays inside the station's 100-packet queue, so TCP loses nothing and the
    medium alone sets the pace."""
    tcp = {"timestamps": False, "rcvbuf": "64KiB", "sndbuf": "64KiB"}
    return {
        "name": "wlan-one",
        "duration": "20s",
        "hosts": [
            {"name": "sta", "tcp": tcp},
            {"name": "ap", "tcp": {**tcp, "delayed_ack": delayed_ack}},
        ],
        "links": [
            {"kind": "wlan", "rate": "11Mbps", "delay": "1us", "wlan": {"ap": "second", **wlan}}
        ],
        "app": {"kind": "bulk"},
    }


@pytest.mark.parametrize("delayed_ack", [True, False])
def test_one_flow_lands_between_the_dcf_airtime_bounds(delayed_ack: bool) -> None:
    """Every b segments (b = 2 with delayed ACKs) cost b data exchanges and one TCP ACK
    exchange, each DIFS + backoff + PLCP + MPDU at 11 Mb/s + SIFS + MAC ACK at 2 Mb/s:
    1927.09 µs for a 1536-byte MPDU (1500 IP + 8 LLC/SNAP + 28 MAC) and 865.27 µs for a
    76-byte one (a 40-byte TCP ACK). With every backoff at its mean of 15.5 slots, one after
    another, that is 2·1460·8 / (2·1927.09 + 865.27) = 4.95 Mb/s (b = 2) and 4.18 Mb/s
    (b = 1): the lower end. The receiver's ACK counts its backoff down in the same idle
    slots as the sender's post-backoff, so at best it costs no idle time of its own:
    2·1460·8 / (2·1927.09 + 555.27) = 5.30 Mb/s and 4.71 Mb/s, the upper end. Collisions
    between the two cost airtime but stay rare: two fresh draws from 0..31 end in the same
    slot with probability 1/32, and the two contend for only part of the frames."""
    scenario = one_station(delayed_ack)
    link = resolve(validate_spec(scenario))["links"][0]
    b = 2 if delayed_ack else 1
    low = wlan_goodput_bps(link, MSS, b)
    high = wlan_goodput_bps(link, MSS, b, ack_backoff_slots=0)
    assert low == pytest.approx(4.95e6 if delayed_ack else 4.18e6, abs=0.01e6)
    result = tcplab.run(scenario)
    goodput = result.summary["goodput_bps"]
    assert low < goodput < high, (low, goodput, high)
    assert result.summary["retransmits"] == 0
    data, acks = result.links
    assert data["collisions"] == acks["collisions"] > 0
    assert data["collisions"] < 0.08 * data["packets"]
    wlan = result.summary["wlan"]
    assert wlan["frames"] == data["packets"] + acks["packets"]
    assert wlan["retries"] == data["retries"] + acks["retries"]
    assert wlan["retry_drops"] == wlan["queue_drops"] == 0


def two_stations(direction: str) -> dict[str, Any]:
    """Two stations on one access point, each with a bulk flow to or from a wired server."""
    tcp = {"rcvbuf": "64KiB", "sndbuf": "64KiB"}
    flows = [{"src": sta, "dst": "server"} for sta in ("sta1", "sta2")]
    if direction == "downstream":
        flows = [{"src": "server", "dst": sta} for sta in ("sta1", "sta2")]
    return {
        "name": "wlan-two",
        "duration": "20s",
        "hosts": [{"name": name, "tcp": tcp} for name in ("sta1", "sta2", "server")],
        "routers": [{"name": "ap"}],
        "links": [
            {"kind": "wlan", "between": ["ap", "sta1"], "rate": "11Mbps", "delay": "1us"},
            {"kind": "wlan", "between": ["ap", "sta2"], "rate": "11Mbps", "delay": "1us"},
            {"kind": "ethernet", "between": ["ap", "server"], "rate": "100Mbps", "delay": "100us"},
        ],
        "app": {"kind": "bulk"},
        "flows": flows,
    }


@pytest.mark.parametrize("direction", ["upstream", "downstream"])
def test_two_stations_share_the_channel_fairly(direction: str) -> None:
    """DCF gives contending stations equal chances (each draws from the same CW), so two
    stations' flows split the medium: Jain's index at least 0.95. Together they get no
    more than the medium gives one flow with the receiver's ACK backoff hidden."""
    result = tcplab.run(two_stations(direction))
    summary = result.summary
    assert summary["fairness"] >= 0.95
    link = resolve(validate_spec(one_station(True)))["links"][0]
    assert summary["goodput_bps"] < wlan_goodput_bps(link, 1448, 2, ack_backoff_slots=0)
    # Both stations' links carried frames; with one AP queue downstream it overflows.
    stations = [row for row in result.links if row["link"] < 2]
    assert all(row["packets"] > 0 for row in stations)


def upstream_and_downstream(ap_queue: str, loss_recovery: str = "rack") -> list[float]:
    """Two stations upload and two download through one AP; each flow's goodput."""
    tcp = {"rcvbuf": "64KiB", "sndbuf": "64KiB", "loss_recovery": loss_recovery}
    stations = ("sta1", "sta2", "sta3", "sta4")
    links: list[dict[str, Any]] = [
        {"kind": "wlan", "between": ["ap", sta], "rate": "11Mbps", "delay": "1us",
         "wlan": {"ap_queue": ap_queue}}
        for sta in stations
    ]  # fmt: skip
    links.append({"kind": "ethernet", "between": ["ap", "server"], "rate": "100Mbps",
                  "delay": "100us"})  # fmt: skip
    scenario = {
        "name": "wlan-mixed",
        "duration": "20s",
        "hosts": [{"name": name, "tcp": tcp} for name in (*stations, "server")],
        "routers": [{"name": "ap"}],
        "links": links,
        "app": {"kind": "bulk"},
        "flows": [
            {"src": "sta1", "dst": "server"},
            {"src": "sta2", "dst": "server"},
            {"src": "server", "dst": "sta3"},
            {"src": "server", "dst": "sta4"},
        ],
    }
    return [flow["goodput_bps"] for flow in tcplab.run(scenario).flows]


def test_a_small_ap_queue_starves_the_downstream_flows() -> None:
    """The AP is one DCF station with one queue: it wins about one transmission in five
    against four busy stations, and that queue holds both downstream flows' data and the
    upstream flows' ACKs. When it overflows, the downstream flows lose data segments and
    back off, while the upstream flows lose only cumulative ACKs, which the next ACK
    covers (Pilosof et al., INFOCOM 2003: up to an order of magnitude). A queue that holds
    every window (4 × 64 KiB ≈ 180 packets) drops nothing, and the four flows share.
    How far the downstream flows fall depends on their loss recovery: recovering by
    duplicate ACKs, their lost retransmissions wait for the timer and they keep under a
    tenth of the upstream goodput; with the linux profile's RACK-TLP (RFC 8985) they repair
    them within a round trip and keep about an eighth."""
    up1, up2, down1, down2 = upstream_and_downstream("10p", loss_recovery="classic")
    assert up1 + up2 > 10 * (down1 + down2)
    up1, up2, down1, down2 = upstream_and_downstream("10p")
    assert up1 + up2 > 5 * (down1 + down2)
    flows = upstream_and_downstream("200p")
    assert min(flows) > 0.9 * max(flows)


def test_bit_errors_cost_retries_and_the_retry_limit_drops_frames() -> None:
    """A BER turns into a frame error rate of 1 − (1 − BER)^bits over each MPDU; a failed
    frame is retried with a doubled window, and one that fails retry_limit times is lost
    to TCP."""
    scenario = one_station(True, retry_limit=1)
    scenario["links"][0]["ber"] = 2e-5  # about 22 % of 1536-byte frames
    result = tcplab.run(scenario)
    data = result.links[0]
    assert data["retries"] == 0  # one attempt only
    assert data["drops_error"] > 0.15 * data["packets"]
    assert result.summary["retransmits"] > 0


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ({"rate": "54Mbps"}, r"links\.0\.rate: 54Mbps is not an 802\.11b data rate"),
        ({"wlan": {"ack_rate": "11Mbps"}}, r"links\.0\.wlan\.ack_rate: .*accepted: 1Mbps, 2Mbps"),
        ({"reverse_queue": {"limit": "5p"}}, r"links\.0\.reverse_queue: .*wlan\.ap_queue"),
        ({"kind": "p2p", "wlan": {}}, r'links\.0\.wlan: only for kind = "wlan"'),
        ({"wlan": {"ap": "middle"}}, r"links\.0\.wlan\.ap: .*'first' or 'second'"),
    ],
)
def test_bad_wlan_fields_name_the_field(link: dict[str, Any], message: str) -> None:
    scenario = one_station(True)
    scenario["links"][0].update(link)
    with pytest.raises(SpecError, match=message):
        validate_spec(scenario)


def test_links_on_one_medium_agree_on_its_settings() -> None:
    scenario = two_stations("upstream")
    scenario["links"][1]["wlan"] = {"ap_queue": "10p"}
    with pytest.raises(SpecError, match=r"links\.1\.wlan\.ap_queue: .*links\.0 on the same"):
        validate_spec(scenario)
    # On media of their own (two radios in one AP), they need not.
    scenario["links"][1]["wlan"]["medium"] = "second-radio"
    validate_spec(scenario)


def test_the_emu_backend_refuses_the_medium_by_name() -> None:
    with pytest.raises(Unsupported, match=r"links\.0\.wlan: the 802\.11b medium is the simulator"):
        capabilities.check(resolve(validate_spec(one_station(True))), "emu")


def test_a_capture_of_a_wlan_link_shows_each_packet_once() -> None:
    scenario = one_station(True)
    scenario.update(duration="1s", trace={"pcap": ["links.0"]})
    result = tcplab.run(scenario)
    pcap = result.captures["links.0"]
    # 24-byte file header, then a 16-byte record header and the packet per packet.
    records, offset = 0, 24
    while offset < len(pcap):
        offset += 16 + int.from_bytes(pcap[offset + 8 : offset + 12], "little")
        records += 1
    data, acks = result.links
    delivered = data["packets"] - data["retries"] + acks["packets"] - acks["retries"]
    assert records == delivered


def test_the_model_backend_bounds_a_wlan_path_by_its_airtime() -> None:
    """models.md §6.3: 4.95 Mb/s for MSS 1460 at 11 Mb/s with delayed ACKs."""
    result = tcplab.run(one_station(True), backend="model")
    model = result.summary["model"]
    assert model["link_goodput_bps"] == [pytest.approx(4.95e6, abs=0.01e6)]
    assert model["binding"] == "link"
    assert result.summary["goodput_bps"] <= model["link_bound_bps"]
