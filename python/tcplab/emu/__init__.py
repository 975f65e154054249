"""The emulator's plumbing: network namespaces, TUN devices, addresses, routes and sysctls
around the Rust link emulator (crates/emu), and the cleanup of what a crashed run left.

See docs/emu.md for how a run is put together and why it cannot leak.
"""

from tcplab.emu.network import (
    PREFIX,
    RECEIVER_ADDRESS,
    SENDER_ADDRESS,
    EmuError,
    EmuNetwork,
    HostSetup,
    PepSetup,
    cleanup,
    leftovers,
    require_root,
)

__all__ = [
    "PREFIX",
    "RECEIVER_ADDRESS",
    "SENDER_ADDRESS",
    "EmuError",
    "EmuNetwork",
    "HostSetup",
    "PepSetup",
    "cleanup",
    "leftovers",
    "require_root",
]
