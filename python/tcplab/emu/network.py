"""Two network namespaces joined through the link emulator.

A run creates namespaces `tcplab-<pid>-<n>-snd` and `-rcv` (`ip netns add`), starts the
Rust emulator (`tcplab._sim.emu_run`) on a thread of this process, which opens one TUN
device `tcplab0` inside each namespace, then gives the devices their addresses, routes and
sysctls. Addresses come from 198.18.0.0/15, the block RFC 2544 reserves for benchmarking
(RFC 6890), and exist only inside the two namespaces, which hold nothing but `lo` and the
TUN device: no packet can leave them.

What can outlive a run, and what removes it:
- the TUN devices are not persistent: they vanish with the emulator's descriptors, so even
  SIGKILL of this process removes them;
- processes started in the namespaces get PR_SET_PDEATHSIG = SIGKILL, so they die with
  the thread that started them, and `close()` kills whatever else runs there;
- the namespaces are bind mounts under /run/netns that only `ip netns del` removes: `close()`
  does it on every way out (normal end, exception, Ctrl-C), and `cleanup()` (`tcplab emu
  cleanup`) does it for the namespaces of a process that no longer exists.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.errors import TcplabError

PREFIX = "tcplab-"
TUN_NAME = "tcplab0"
SENDER_ADDRESS = "198.18.0.1"
RECEIVER_ADDRESS = "198.18.0.2"
NETNS_DIR = Path("/run/netns")
# The kernel's tun ring holds txqueuelen packets before the emulator reads them; a large
# ring keeps a burst of a big initial window from being dropped there, where the link
# model cannot see it.
TUN_TXQUEUELEN = 20000
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
_PR_SET_PDEATHSIG = 1
_counter = itertools.count()
_libc = ctypes.CDLL(None, use_errno=True)


class EmuError(TcplabError):
    """The emulator cannot run here, or its setup failed; the message says what to do."""


def require_root() -> None:
    """Refuse clearly where the emulator cannot work."""
    if os.geteuid() != 0:
        raise EmuError(
            "the emu backend needs root: it creates network namespaces and TUN devices "
            "(run as root, or use the sim backend)"
        )
    if shutil.which("ip") is None:
        raise EmuError("the emu backend needs iproute2's `ip` command (apt-get install iproute2)")
    if not Path("/dev/net/tun").exists():
        raise EmuError("the emu backend needs /dev/net/tun (modprobe tun)")


def _run(argv: Sequence[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise EmuError(f"`{' '.join(argv)}` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: the child gets SIGKILL when the thread that
    # forked it ends, so a runner killed with SIGKILL takes its children along.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass(frozen=True)
class HostSetup:
    """One namespace's TCP settings: sysctls (net.ipv4.* names) and options of its route to
    the other host (ip-route(8): initcwnd, initrwnd, rto_min, quickack, ...)."""

    sysctls: Mapping[str, str] = field(default_factory=dict)
    route_options: Sequence[str] = ()


def _owner_pid(namespace: str) -> int | None:
    parts = namespace.split("-")
    if len(parts) >= 2 and parts[1].isdigit():
        return int(parts[1])
    return None


def leftovers() -> list[str]:
    """Every tcplab namespace on this machine (whoever made it)."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(PREFIX))
    except FileNotFoundError:
        return []


def _kill_namespace(namespace: str) -> None:
    pids = subprocess.run(
        ["ip", "netns", "pids", namespace], capture_output=True, text=True, check=False
    ).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


def cleanup(include_live: bool = False) -> list[str]:
    """Remove tcplab namespaces (killing what runs in them) of processes that no longer
    exist, or all of them with `include_live`; returns what was removed. TUN devices go
    with their namespaces."""
    removed = []
    for namespace in leftovers():
        owner = _owner_pid(namespace)
        alive = owner is not None and Path(f"/proc/{owner}").exists()
        if alive and not include_live:
            continue
        _kill_namespace(namespace)
        removed.append(namespace)
    return removed


class EmuNetwork:
    """A sender and a receiver namespace joined by the emulated path; a context manager.

    `config` is the emulator's JSON config without the parts this class fills in (netns,
    tun_name, ready_fd, stop_fd). After `with`, `report` holds the emulator's report.
    """

    def __init__(
        self, config: Mapping[str, Any], hosts: tuple[HostSetup, HostSetup], mtu: int
    ) -> None:
        require_root()
        tag = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.namespaces = (f"{tag}-snd", f"{tag}-rcv")
        self.addresses = (SENDER_ADDRESS, RECEIVER_ADDRESS)
        self._config = dict(config)
        self._hosts = hosts
        self._mtu = mtu
        self._children: list[subprocess.Popen[str]] = []
        self._thread: threading.Thread | None = None
        self._outcome: dict[str, Any] = {}
        self._stop_w: int | None = None
        self._fds: list[int] = []
        self.report: dict[str, Any] | None = None

    def __enter__(self) -> EmuNetwork:
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> None:
        from tcplab import _sim

        for namespace in self.namespaces:
            _run(["ip", "netns", "add", namespace])
        ready_r, ready_w = os.pipe()
        stop_r, self._stop_w = os.pipe()
        self._fds += [ready_r, ready_w, stop_r, self._stop_w]
        config = {
            **self._config,
            "netns": [str(NETNS_DIR / n) for n in self.namespaces],
            "tun_name": TUN_NAME,
            "mtu": self._mtu,
            "ready_fd": ready_w,
            "stop_fd": stop_r,
        }

        def emulate() -> None:
            try:
                self._outcome["report"] = json.loads(_sim.emu_run(json.dumps(config)))
            except BaseException as error:  # handed to the caller's thread in close()
                self._outcome["error"] = error
                os.write(ready_w, b"x")

        self._thread = threading.Thread(target=emulate, name="tcplab-emu", daemon=True)
        self._thread.start()
        readable, _, _ = select.select([ready_r], [], [], READY_TIMEOUT_S)
        if not readable or os.read(ready_r, 1) != b"r":
            raise EmuError(f"the emulator did not start: {self._outcome.get('error', 'timeout')}")
        for side, namespace in enumerate(self.namespaces):
            self._configure(namespace, self._hosts[side], self.addresses[side], side)

    def _configure(self, namespace: str, host: HostSetup, address: str, side: int) -> None:
        peer = self.addresses[1 - side]
        ip = ["ip", "-n", namespace]
        # IPv6 off first: the device would otherwise send router and neighbour
        # solicitations into the emulated link as soon as it is up.
        sysctls = {"net.ipv6.conf.all.disable_ipv6": "1", **host.sysctls}
        # Written to /proc/sys from a shell inside the namespace (the net.* entries there
        # are the namespace's own), so that nothing beyond a POSIX sh is needed.
        script = "; ".join(
            f"printf '%s' {shlex.quote(value)} > /proc/sys/{name.replace('.', '/')}"
            for name, value in sysctls.items()
        )
        _run(["ip", "netns", "exec", namespace, "sh", "-ec", script])
        _run([*ip, "link", "set", "lo", "up"])
        _run([*ip, "link", "set", TUN_NAME, "mtu", str(self._mtu)])
        _run([*ip, "link", "set", TUN_NAME, "txqueuelen", str(TUN_TXQUEUELEN), "up"])
        _run([*ip, "addr", "add", f"{address}/32", "dev", TUN_NAME])
        _run(
            [*ip, "route", "add", f"{peer}/32", "dev", TUN_NAME, "src", address]
            + list(host.route_options)
        )

    def popen(self, side: int, argv: Sequence[str]) -> subprocess.Popen[str]:
        """Start `argv` in the sender's (0) or the receiver's (1) namespace, stdout piped."""
        child = subprocess.Popen(
            ["ip", "netns", "exec", self.namespaces[side], *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            preexec_fn=_die_with_parent,
        )
        self._children.append(child)
        return child

    def exec(self, side: int, argv: Sequence[str], timeout_s: float) -> str:
        """Run `argv` in a namespace to its end; its stdout, or EmuError if it fails."""
        child = self.popen(side, argv)
        try:
            out, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise EmuError(f"`{' '.join(argv)}` did not finish in {timeout_s} s") from None
        if child.returncode != 0:
            raise EmuError(f"`{' '.join(argv)}` failed: {err.strip() or child.returncode}")
        return out

    def close(self) -> None:
        """Stop the emulator, kill what runs in the namespaces, delete them. Every step is
        tried whatever happened before; a Ctrl-C during cleanup is re-raised after it."""
        interrupted: BaseException | None = None
        steps = [self._stop_emulator, self._kill_children, self._delete_namespaces]
        for step in steps:
            try:
                step()
            except BaseException as error:
                interrupted = interrupted or error
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []
        if interrupted is not None:
            raise interrupted

    def _stop_emulator(self) -> None:
        if self._stop_w is not None and self._thread is not None:
            os.write(self._stop_w, b"s")
            self._thread.join(STOP_TIMEOUT_S)
            self._thread = None
        error = self._outcome.pop("error", None)
        self.report = self._outcome.get("report", self.report)
        if error is not None:
            raise EmuError(f"the emulator failed: {error}")

    def _kill_children(self) -> None:
        for child in self._children:
            if child.poll() is None:
                child.kill()
            try:
                child.communicate(timeout=STOP_TIMEOUT_S)
            except (subprocess.TimeoutExpired, ValueError):
                pass
        self._children = []

    def _delete_namespaces(self) -> None:
        for namespace in self.namespaces:
            if (NETNS_DIR / namespace).exists():
                _kill_namespace(namespace)
