"""Names and constants the Python side shares with the simulator, read from the Rust core
(`tcplab._sim.constants()`) so that each is defined once: the congestion controls the
simulator implements, the TCP/IP header size, the 802.11b PHY timings, and the columns of
a result."""

from __future__ import annotations

import json

from tcplab._sim import constants

_CONSTANTS = constants()

CONGESTION_CONTROLS: tuple[str, ...] = tuple(_CONSTANTS["congestion_controls"])
"""Every `[hosts.tcp] cc` the simulator runs (crates/sim/src/tcp/cc/mod.rs: NAMES)."""
TCP_IP_HEADER_BYTES: int = _CONSTANTS["tcp_ip_header_bytes"]
"""IPv4 + TCP headers without options (RFC 791, RFC 9293): the per-segment header cost."""
WLAN_SLOT_NS: int = _CONSTANTS["wlan"]["slot_ns"]
WLAN_SIFS_NS: int = _CONSTANTS["wlan"]["sifs_ns"]
WLAN_DIFS_NS: int = _CONSTANTS["wlan"]["difs_ns"]
WLAN_CW_MIN: int = _CONSTANTS["wlan"]["cw_min"]
WLAN_ACK_BYTES: int = _CONSTANTS["wlan"]["ack_bytes"]
WLAN_PLCP_NS: dict[str, int] = dict(_CONSTANTS["wlan"]["plcp_ns"])
"""802.11b (IEEE 802.11-1999 §9.2.3, §15.3.3, §18.2.2): crates/sim/src/wlan/phy.rs."""
ABR_TM4: dict[str, float] = dict(_CONSTANTS["abr_tm4"])
"""ATM Forum TM 4.0's ABR source parameters (§5.10.2) but PCR, rates in cells/s and times
in ns: crates/sim/src/atm/abr/source.rs, SourceParams::tm4_defaults."""
RESULT_COLUMNS: dict[str, tuple[str, ...]] = {
    part: tuple(empty) for part, empty in json.loads(_CONSTANTS["result_columns"]).items()
}
"""The columns of each part of a run's result (summary, each kind of row, series, trace) in
the order crates/sim/src/result.rs declares them, optional ones left out."""
