"""Network namespaces joined through the link emulator.

A run creates two unnamed network namespaces (the sender's and the receiver's), each
held by a file descriptor of this process only, starts the Rust emulator
(`tcplab._sim.emu_run`) on a thread of this process, which opens one TUN device `tcplab0`
inside each namespace, then gives the devices their addresses, routes and sysctls.
Addresses come from 198.18.0.0/15, the block RFC 2544 reserves for benchmarking
(RFC 6890), and exist only inside the namespaces, which hold nothing but `lo` and the TUN
devices: no packet can leave them.

A path with PEPs (docs/models/pep.md) has a namespace for each, between two
segments of the path: segment i runs on an emulator thread of its own between the
namespaces on either side, with TUN devices `tcplab<i>` and addresses 198.18.i.1 (the
sender's side) and 198.18.i.2, so a PEP's namespace holds two devices.

Nothing outlives the process that made it, however it ends (even SIGKILL):
- a namespace has no name (no bind mount under /run/netns): the kernel frees it when the
  last descriptor and the last process in it are gone;
- the TUN devices are not persistent: they vanish with the emulator's descriptors and
  with their namespaces;
- processes started in the namespaces get PR_SET_PDEATHSIG = SIGKILL, so they die with
  the thread that started them, and `close()` kills whatever else runs there.
`close()` runs on every way out (normal end, exception, Ctrl-C) with Ctrl-C and SIGTERM
held back until it is done. `cleanup()` (`tcplab emu cleanup`) removes named namespaces
`tcplab-<pid>-...` that versions before unnamed namespaces left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.errors import TcplabError
from tcplab.measure.common import start_clocks

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
_CLONE_NEWNET = 0x40000000
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


def _in_namespace(netns_fd: int, cpus: frozenset[int] | None = None) -> Callable[[], None]:
    """What a child runs between fork and exec: it enters the namespace, and gets SIGKILL
    when the thread that forked it ends, so a runner killed with SIGKILL takes its children
    along; with `cpus`, it runs on those CPUs only."""

    def enter() -> None:
        if _libc.setns(netns_fd, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns(CLONE_NEWNET)")
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    return enter


def placement(emulators: int, cpus: set[int]) -> tuple[int | None, frozenset[int] | None]:
    """The emulator's CPU and the endpoints' CPUs, out of the CPUs this process may use.

    With one emulator and two CPUs or more, the emulator has the first to itself and every
    process started in the namespaces runs on the others. Out of SCHED_FIFO (its real-time
    budget spent) the emulator then shares its CPU with no endpoint, whose time slices
    would otherwise stop it for milliseconds. Several emulators (a path split by PEPs), or
    a single CPU, are left to the scheduler: (None, None)."""
    if emulators != 1 or len(cpus) < 2:
        return None, None
    first = min(cpus)
    return first, frozenset(cpus - {first})


def _run_in(netns_fd: int, argv: Sequence[str]) -> str:
    """`argv` run to its end inside a namespace; its stdout, or EmuError."""
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        preexec_fn=_in_namespace(netns_fd),
    )
    if done.returncode != 0:
        raise EmuError(f"`{' '.join(argv)}` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def new_namespace() -> int:
    """A new network namespace without a name, held by the returned descriptor alone.

    A thread of its own unshares it (a namespace belongs to a thread), opens it and ends;
    the descriptor is close-on-exec, so no child holds the namespace."""
    made: dict[str, Any] = {}

    def make() -> None:
        if _libc.unshare(_CLONE_NEWNET) != 0:
            made["error"] = OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
            return
        made["fd"] = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)

    thread = threading.Thread(target=make, name="tcplab-netns")
    thread.start()
    thread.join()
    if "fd" not in made:
        raise EmuError(f"cannot create a network namespace: {made['error']}")
    return int(made["fd"])


def namespace_id(netns_fd: int) -> int:
    """The namespace's inode number, as /proc/PID/ns/net shows it (net:[N])."""
    return os.fstat(netns_fd).st_ino


def processes_in(namespace: int) -> list[int]:
    """Processes whose network namespace is `namespace` (an inode number)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "ns" / "net").stat().st_ino == namespace:
                    found.append(int(entry.name))
            except OSError:
                pass  # it ended meanwhile
    return found


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while the namespaces are taken down, and raise them
    after; only the main thread may set signal handlers, elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda n, _: received.append(n)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if signal.SIGINT in received:
        raise KeyboardInterrupt
    if received:
        raise SystemExit(128 + received[0])


@dataclass(frozen=True)
class HostSetup:
    """One namespace's TCP settings: sysctls (net.ipv4.* names), options of its route to
    the other host (ip-route(8): initcwnd, initrwnd, rto_min, quickack, ...) and of its
    device towards it (ip-link(8): gso_max_segs)."""

    sysctls: Mapping[str, str] = field(default_factory=dict)
    route_options: Sequence[str] = ()
    link_options: Sequence[str] = ()


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
        "realtime_demotions": sum(r["realtime_demotions"] for r in reports),
        "realtime_off_s": sum(r["realtime_off_s"] for r in reports),
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
    tun_name, first_link, ready_fd, stop_fd, clock_fd); its `links` are the whole path's. After
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
        # The namespaces' descriptors, in path order: sender, PEPs, receiver.
        self._count = len(peps) + 2
        self.namespaces: list[int] = []
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
        self._emulator_cpu, self._endpoint_cpus = placement(
            len(self._segments), os.sched_getaffinity(0)
        )
        self._mtu = mtu
        self._children: list[subprocess.Popen[str]] = []
        self._threads: list[threading.Thread] = []
        self._outcomes: list[dict[str, Any]] = []
        self._stops: list[int] = []
        self._clocks: list[int] = []
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
        for _ in range(self._count):
            self.namespaces.append(new_namespace())
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
        clock_r, clock_w = os.pipe()
        self._fds += [ready_r, ready_w, stop_r, stop_w, clock_r, clock_w]
        self._stops.append(stop_w)
        self._clocks.append(clock_w)
        config = {
            **self._config,
            "links": self._config["links"][first:last],
            "first_link": first,
            "netns": [f"/proc/{os.getpid()}/fd/{fd}" for fd in self.namespaces[i : i + 2]],
            "tun_name": f"tcplab{i}",
            "mtu": self._mtu,
            "ready_fd": ready_w,
            "stop_fd": stop_r,
            "clock_fd": clock_r,
        }
        if self._emulator_cpu is not None:
            config["cpu"] = self._emulator_cpu
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

    @property
    def clock_fds(self) -> list[int]:
        """Where the links' schedules take their time 0 (`start_clock`), for a process that
        starts them itself: 8 bytes, CLOCK_MONOTONIC ns, little-endian, to each."""
        return list(self._clocks)

    def start_clock(self, origin_ns: int) -> None:
        """Start the links' schedules (docs/models/schedules.md): their time 0 is
        `origin_ns` on CLOCK_MONOTONIC, the clock of every namespace."""
        start_clocks(self._clocks, origin_ns)

    def _configure(self, namespace: int, ends: Sequence[tuple[int, int]]) -> None:
        """Sysctls and `lo` of a namespace, then its device, address and route for each
        segment end (segment, 0 for its sender side or 1 for its receiver side) it has."""

        def ip(*args: str) -> None:
            _run_in(namespace, ["ip", *args])

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
        _run_in(namespace, ["sh", "-ec", script])
        ip("link", "set", "lo", "up")
        for segment, side in ends:
            tun = f"tcplab{segment}"
            address, peer = self.addresses[segment][side], self.addresses[segment][1 - side]
            setup = self._segments[segment][2][side]
            ip("link", "set", tun, "mtu", str(self._mtu), *setup.link_options)
            ip("link", "set", tun, "txqueuelen", str(TUN_TXQUEUELEN), "up")
            ip("addr", "add", f"{address}/32", "dev", tun)
            ip("route", "add", f"{peer}/32", "dev", tun, "src", address, *setup.route_options)

    def popen(
        self, side: int, argv: Sequence[str], pass_fds: Sequence[int] = ()
    ) -> subprocess.Popen[str]:
        """Start `argv` in namespace `side` (0: the sender's, then the PEPs', -1 or the last:
        the receiver's; without PEPs 1 is the receiver's), stdout piped, with `pass_fds`
        open in it under the same numbers."""
        child = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            pass_fds=pass_fds,
            preexec_fn=_in_namespace(self.namespaces[side], self._endpoint_cpus),
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
        """Stop the emulator, kill what runs in the namespaces, let them go. Every step is
        tried whatever happened before; Ctrl-C and SIGTERM wait until the end, and an
        error of a step is raised after the others ran."""
        failed: BaseException | None = None
        with _interrupts_held():
            for step in (self._stop_emulator, self._kill_children, self._release_namespaces):
                try:
                    step()
                except BaseException as error:
                    failed = failed or error
            for fd in self._fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._fds = []
        if failed is not None:
            raise failed

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

    def _release_namespaces(self) -> None:
        """Kill whatever still runs in the namespaces (a child's children), then close
        their descriptors: the kernel frees each namespace with its last reference."""
        try:
            for fd in self.namespaces:
                for pid in processes_in(namespace_id(fd)):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        finally:
            for fd in self.namespaces:
                os.close(fd)
            self.namespaces = []
