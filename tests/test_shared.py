"""The names and constants Python reads from the Rust core (tcplab.shared), and the
backends' own tables that are keyed by them."""

from __future__ import annotations

from typing import get_args

import pytest

from tcplab import shared
from tcplab.analytic import wlan
from tcplab.backends import capabilities
from tcplab.calibrate import grid
from tcplab.calibrate import report as calibration_report
from tcplab.errors import SpecError
from tcplab.plan import resolve
from tcplab.spec import Spec, validate_spec


def test_the_spec_accepts_exactly_the_simulators_congestion_controls() -> None:
    for cc in shared.CONGESTION_CONTROLS:
        validate_spec(
            {
                "hosts": [{"name": "a", "tcp": {"cc": cc}}, {"name": "b"}],
                "links": [{"rate": "1Mbps", "delay": "1ms"}],
            }
        )
    with pytest.raises(SpecError, match="hosts.0.tcp.cc"):
        validate_spec(
            {
                "hosts": [{"name": "a", "tcp": {"cc": "vegas"}}, {"name": "b"}],
                "links": [{"rate": "1Mbps", "delay": "1ms"}],
            }
        )


def test_backend_tables_name_only_congestion_controls_the_simulator_has() -> None:
    # A name removed or misspelt in the core would otherwise linger in a backend's table.
    lists = [
        accepted
        for rule in capabilities.REGISTRY
        if rule.field.endswith("tcp.cc") and rule.accepted
        for accepted in rule.accepted.values()
    ]
    assert len(lists) == 3  # the simulator's, the model's and the emu backend's
    for accepted in lists:
        assert set(accepted) <= set(shared.CONGESTION_CONTROLS)
    assert set(capabilities.LINUX_CC) <= set(shared.CONGESTION_CONTROLS)
    # The calibration grid runs each point on the simulator and the kernel; its plots
    # colour each congestion control.
    assert set(get_args(grid.Cc)) <= set(capabilities.LINUX_CC)
    assert set(calibration_report.CC_COLOURS) <= set(shared.CONGESTION_CONTROLS)


def test_the_spec_offers_exactly_the_backends_there_are() -> None:
    assert get_args(Spec.model_fields["backend"].annotation) == capabilities.BACKENDS


def test_the_model_uses_the_simulators_802_11b_timings() -> None:
    # IEEE 802.11-1999 §9.2.3: DIFS = SIFS + 2 slots; 802.11b long PLCP 192 us.
    assert wlan.WLAN_DIFS_S == pytest.approx(wlan.WLAN_SIFS_S + 2 * wlan.WLAN_SLOT_S)
    assert wlan.WLAN_PLCP_S == {"long": 192e-6, "short": 96e-6}
    assert (wlan.WLAN_CW_MIN, wlan.WLAN_ACK_BYTES) == (31, 14)
    assert shared.TCP_IP_HEADER_BYTES == 40
    # RFC 7323 §3: a 10-byte option and two NOPs.
    assert shared.TIMESTAMP_OPTION_BYTES == 12


def test_the_abr_defaults_are_the_cores_tm4_parameters() -> None:
    # ATM Forum TM 4.0 §5.10.2, as crates/sim/src/atm/abr/source.rs has them: an [abr]
    # table left empty resolves to exactly those.
    spec = validate_spec(
        {
            "hosts": [{"name": "a"}, {"name": "b"}],
            "routers": [{"name": "sw", "switch": {}}],
            "links": [
                {"kind": "atm", "rate": "150Mbps", "delay": "1ms", "between": ["a", "sw"]},
                {"kind": "atm", "rate": "150Mbps", "delay": "1ms", "between": ["sw", "b"]},
            ],
            "flows": [{"src": "a", "dst": "b"}],
            "abr": {},
        }
    )
    # PCR and ICR are left to the core (null: the first link's cell rate, and PCR).
    assert resolve(spec)["abr"] == {**shared.ABR_TM4, "pcr_cells_s": None, "icr_cells_s": None}
