"""Network namespaces joined through the link emulator.

A run creates namespaces `tcplab-<pid>-<n>-snd` and `-rcv` (`ip netns add`), starts the
Rust emulator (`tcplab._sim.emu_run`) on a thread of this process, which opens one TUN
device `tcplab0` inside each namespace, then gives the devices their addresses, routes and
sysctls. Addresses come from 198.18.0.0/15, the block RFC 2544 reserves for benchmarking
(RFC 6890), and exist only inside the namespaces, which hold nothing but `lo` and the TUN
devices: no packet can leave them.

A path with PEPs (docs/models/pep.md) has a namespace `-pepK` for each, between two
segments of the path: segment i runs on an emulator thread of its own between the
namespaces on either side, with TUN devices `tcplab<i>` and addresses 198.18.i.1 (the
sender's side) and 198.18.i.2, so a PEP's namespace holds two devices.

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
# A path's segment i (0 without PEPs) joins 198.18.i.1 (sender side) to 198.18.i.2.
MAX_SEGMENTS = 256
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


@dataclass(frozen=True)
class PepSetup:
    """A PEP's namespace between links `after_link` and `after_link + 1`: the setup of its
    side towards the sender (`client_side`) and towards the receiver (`server_side`). The
    namespace's sysctls are both sides' together, so where they share a name they must
    agree (the emu backend checks that)."""

    after_link: int
    client_side: HostSetup
    server_side: HostSetup


def segment_addresses(segment: int) -> tuple[str, str]:
    """The sender-side and receiver-side addresses of a path's segment."""
    return f"198.18.{segment}.1", f"198.18.{segment}.2"


def merge_reports(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One emulator report for a path whose segments ran on emulators of their own: link
    rows and counts added up, the timing error's quantiles and maximum those of the worse
    segment (an upper bound), the mean weighted by packets."""
    if len(reports) == 1:
        return dict(reports[0])
    timings = [r["timing_error"] for r in reports]
    packets = sum(t["packets"] for t in timings)
    return {
        **reports[0],
        "start_monotonic_ns": min(r["start_monotonic_ns"] for r in reports),
        "end_monotonic_ns": max(r["end_monotonic_ns"] for r in reports),
        "links": [row for r in reports for row in r["links"]],
        "directions": [
            {
                key: sum(r["directions"][d][key] for r in reports)
                for key in reports[0]["directions"][d]
            }
            for d in range(2)
        ],
        "timing_error": {
            "packets": packets,
            "mean_us": sum(t["mean_us"] * t["packets"] for t in timings) / packets
            if packets
            else 0.0,
            **{key: max(t[key] for t in timings) for key in ("p50_us", "p99_us", "max_us")},
        },
        "packet_buffers": sum(r["packet_buffers"] for r in reports),
        "cpu_s": sum(r["cpu_s"] for r in reports),
        "realtime": all(r["realtime"] for r in reports),
        "log_records": sum(r["log_records"] for r in reports),
        "log_truncated": any(r["log_truncated"] for r in reports),
    }


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
    """A sender and a receiver namespace joined by the emulated path, with a namespace for
    each PEP in between (`peps`, in path order); a context manager.

    `config` is the emulator's JSON config without the parts this class fills in (netns,
    tun_name, first_link, ready_fd, stop_fd); its `links` are the whole path's. After
    `with`, `report` holds the emulator's report (of all segments together).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        hosts: tuple[HostSetup, HostSetup],
        mtu: int,
        peps: Sequence[PepSetup] = (),
    ) -> None:
        require_root()
        tag = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        middle = tuple(f"{tag}-pep{k}" for k in range(len(peps)))
        self.namespaces = (f"{tag}-snd", *middle, f"{tag}-rcv")
        # Each segment's links and the setups of its two ends.
        cuts = [0, *(pep.after_link + 1 for pep in peps), len(config["links"])]
        ends = [hosts[0], *(side for pep in peps for side in (pep.client_side, pep.server_side))]
        ends.append(hosts[1])
        self._segments = [
            (cuts[i], cuts[i + 1], (ends[2 * i], ends[2 * i + 1])) for i in range(len(cuts) - 1)
        ]
        if len(self._segments) > MAX_SEGMENTS or any(a >= b for a, b, _ in self._segments):
            raise EmuError("peps: each PEP sits after a different link, in path order")
        # Per segment: the sender-side and the receiver-side address.
        self.addresses = [segment_addresses(i) for i in range(len(self._segments))]
        self._config = dict(config)
        self._mtu = mtu
        self._children: list[subprocess.Popen[str]] = []
        self._threads: list[threading.Thread] = []
        self._outcomes: list[dict[str, Any]] = []
        self._stops: list[int] = []
        self._fds: list[int] = []
        self.report: dict[str, Any] | None = None

    @property
    def receiver_address(self) -> str:
        return self.addresses[-1][1]

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
        for namespace in self.namespaces:
            _run(["ip", "netns", "add", namespace])
        for i in range(len(self._segments)):
            self._start_emulator(i)
        for side, namespace in enumerate(self.namespaces):
            # A namespace ends the segment before it and begins the one after it.
            before = [(side - 1, 1)] if side > 0 else []
            after = [(side, 0)] if side < len(self._segments) else []
            self._configure(namespace, before + after)

    def _start_emulator(self, i: int) -> None:
        from tcplab import _sim

        first, last, _ = self._segments[i]
        ready_r, ready_w = os.pipe()
        stop_r, stop_w = os.pipe()
        self._fds += [ready_r, ready_w, stop_r, stop_w]
        self._stops.append(stop_w)
        config = {
            **self._config,
            "links": self._config["links"][first:last],
            "first_link": first,
            "netns": [str(NETNS_DIR / n) for n in self.namespaces[i : i + 2]],
            "tun_name": f"tcplab{i}",
            "mtu": self._mtu,
            "ready_fd": ready_w,
            "stop_fd": stop_r,
        }
        log = config.get("packet_log")
        if log and i > 0:
            # Each segment's emulator writes its own CSV; the mahimahi logs are per link.
            config["packet_log"] = {**log, "csv": str(Path(log["csv"]).with_suffix(f".seg{i}.csv"))}
        outcome: dict[str, Any] = {}
        self._outcomes.append(outcome)

        def emulate() -> None:
            try:
                outcome["report"] = json.loads(_sim.emu_run(json.dumps(config)))
            except BaseException as error:  # handed to the caller's thread in close()
                outcome["error"] = error
                os.write(ready_w, b"x")

        thread = threading.Thread(target=emulate, name=f"tcplab-emu{i}", daemon=True)
        self._threads.append(thread)
        thread.start()
        readable, _, _ = select.select([ready_r], [], [], READY_TIMEOUT_S)
        if not readable or os.read(ready_r, 1) != b"r":
            raise EmuError(f"the emulator did not start: {outcome.get('error', 'timeout')}")

    def _configure(self, namespace: str, ends: Sequence[tuple[int, int]]) -> None:
        """Sysctls and `lo` of a namespace, then its device, address and route for each
        segment end (segment, 0 for its sender side or 1 for its receiver side) it has."""
        ip = ["ip", "-n", namespace]
        # IPv6 off first: the device would otherwise send router and neighbour
        # solicitations into the emulated link as soon as it is up.
        sysctls = {"net.ipv6.conf.all.disable_ipv6": "1"}
        for segment, side in ends:
            sysctls.update(self._segments[segment][2][side].sysctls)
        # Written to /proc/sys from a shell inside the namespace (the net.* entries there
        # are the namespace's own), so that nothing beyond a POSIX sh is needed.
        script = "; ".join(
            f"printf '%s' {shlex.quote(value)} > /proc/sys/{name.replace('.', '/')}"
            for name, value in sysctls.items()
        )
        _run(["ip", "netns", "exec", namespace, "sh", "-ec", script])
        _run([*ip, "link", "set", "lo", "up"])
        for segment, side in ends:
            tun = f"tcplab{segment}"
            address, peer = self.addresses[segment][side], self.addresses[segment][1 - side]
            _run([*ip, "link", "set", tun, "mtu", str(self._mtu)])
            _run([*ip, "link", "set", tun, "txqueuelen", str(TUN_TXQUEUELEN), "up"])
            _run([*ip, "addr", "add", f"{address}/32", "dev", tun])
            route_options = self._segments[segment][2][side].route_options
            _run([*ip, "route", "add", f"{peer}/32", "dev", tun, "src", address, *route_options])

    def popen(self, side: int, argv: Sequence[str]) -> subprocess.Popen[str]:
        """Start `argv` in namespace `side` (0: the sender's, then the PEPs', -1 or the last:
        the receiver's; without PEPs 1 is the receiver's), stdout piped."""
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
        for stop in self._stops:
            os.write(stop, b"s")
        for thread in self._threads:
            thread.join(STOP_TIMEOUT_S)
        self._threads, self._stops = [], []
        errors = [outcome.pop("error") for outcome in self._outcomes if "error" in outcome]
        reports = [outcome["report"] for outcome in self._outcomes if "report" in outcome]
        if reports and len(reports) == len(self._outcomes):
            self.report = merge_reports(reports)
        if errors:
            raise EmuError(f"the emulator failed: {errors[0]}")

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
