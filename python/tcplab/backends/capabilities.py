"""What each backend honours: one registry of plan fields and values, checked once per run.

A backend that cannot honour a field of a valid scenario refuses it before anything runs,
with `tcplab.errors.Unsupported` naming the field, its value and the backends that do
honour it (DESIGN: a backend never silently ignores a field). Every such decision lives
here, as one `Capability` per rule, in the order they are checked; the backends run only
plans that passed `check`. Left to others: the spec's own checks (a scenario that no
backend could run), the plan checks of the Rust core (`PlanError`: plans the simulator
cannot run whatever the scenario) and what depends on this machine rather than on the
backend (the emu backend's `check_machine`: the kernel's congestion controls, CUBIC's
machine-wide HyStart switch, iperf3 being installed).

Fields are plan paths (docs/internals/plan-and-result.md); `*` stands for every index of a
list or every key of an object, and a rule on `tcp.<name>` applies to every TCP
configuration of the plan: each host's (`hosts.N.tcp`) and each PEP side's
(`peps.N.client_side`, `peps.N.server_side`). Adding a congestion control or a capability
touches this file only (docs/internals/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tcplab.backends import BACKENDS  # noqa: E402
from tcplab.errors import Unsupported
from tcplab.measure.media import HEADER
from tcplab.shared import CONGESTION_CONTROLS
from tcplab.spec.fields import AUTO_BUFFER

NS_PER_S = 1_000_000_000

# --------------------------------------------------------------------------------------
# Facts the rules name
# --------------------------------------------------------------------------------------

# The congestion controls each backend runs. The simulator runs every one the Rust core
# has. The model has a closed-form loss response for Reno's (PFTK, Mathis) and CUBIC's
# (RFC 9438 §5.1); loss-free, CUBIC is standard slow start up to the window limit (RFC 9438
# §4.10) and fits the fluid model; Hybla's ρ-scaled growth and BBR do not.
MODEL_CC = ("tahoe", "reno", "newreno", "cubic")
# The emu backend: spec names → the Linux module it loads. Linux's "reno" is NewReno
# (RFC 6582 partial-ACK handling in tcp_input.c), so both of tcplab's names run on it.
LINUX_CC = {"reno": "reno", "newreno": "reno", "cubic": "cubic", "bbr": "bbr", "hybla": "hybla"}
# The app kinds each backend runs (sim: all the spec has).
MODEL_KINDS = ("bulk", "file")
# The [hosts.tcp] fields the model's formulas do not read, and why each value is still
# honoured (the rules below refuse the values for which that is not so):
# - sack: PFTK and Mathis count loss events, one window halving each, which is what SACK
#   recovery (RFC 6675) does with several losses of one window as well.
# - hystart, hystart_variant: both end slow start when the queue starts to grow (delay
#   increase) or the ACK train spans the path (Linux), i.e. at about the path's BDP, where
#   the model's fluid sender already sends at the link's rate.
# - nagle_variant: with messages of at least an MSS (the model's bulk and file apps), both
#   variants send only whole segments but the last; they differ on small writes.
# - gso: Linux's GSO sends segments in bursts from the host; the model's sender is a fluid.
# - cubic_variant, reno_variant, cwnd_validation, quickack, initial_rwnd,
#   delack_timeout_ns, rto_form: they shape the first round trips or a timer the model's
#   steady-state bounds and slow-start ramp (with its gamma from delayed ACKs and ABC) do
#   not include.
# - dsack, undo, frto: they change what a sender does after a spurious retransmission or
#   timeout, which the model's loss events (each a real loss) do not include.
# - slow_start_after_idle: the model's bulk and file apps never leave the connection idle.
# - loss_recovery: on a path without losses nothing is recovered; with losses PFTK's
#   timeout term is recovery by duplicate ACKs', so RACK-TLP with SACK is refused there.
# - sndbuf_accounting: the model's window takes sndbuf as payload either way. With
#   Linux's accounting a sender holds more (up to about twice sndbuf, as its skbs and
#   writer wake-ups allow), so where sndbuf sets the window the model's bound is a lower
#   bound of the sim's and the kernel's (docs/models/analytic-tcp.md).
EMU_KINDS = ("bulk", "file", "rr", "media")
# Linux's delayed-ACK timer adapts between TCP_DELACK_MIN (40 ms) and TCP_DELACK_MAX
# (200 ms) (include/net/tcp.h) and cannot be set per socket.
LINUX_DELACK_NS = (40_000_000, 200_000_000)
IPERF3_MAX_BLOCK = 1024 * 1024  # MAX_BLOCKSIZE in iperf3's iperf.h
# The measurement tool's media messages start with a sequence number, a timestamp and a
# length.
MEDIA_HEADER_BYTES = HEADER.size
# Sysctls of a namespace, which a PEP's two sides therefore share on the emu backend.
PEP_NAMESPACE_TCP_FIELDS = (
    "window_scaling",
    "sack",
    "timestamps",
    "ecn",
    "dsack",
    "frto",
    "slow_start_after_idle",
)
# The plan fields the emu backend reads; any other is refused there, so that a field added
# to the plan later is never silently ignored by the real-kernel runs.
EMU_PLAN_FIELDS = frozenset(
    {
        "seed",
        "duration_ns",
        "interval_ns",
        "trace_interval_ns",
        "hosts",
        "links",
        "app",
        "emu",
        "trace",
        "peps",
    }  # fmt: skip
)
EMU_TCP_FIELDS = frozenset(
    {
        "cc",
        "sndbuf",
        "rcvbuf",
        "mss",
        "initial_window",
        "window_scaling",
        "sack",
        "timestamps",
        "abc",
        "delayed_ack",
        "delack_timeout_ns",
        "nagle",
        "fast_retransmit",
        "min_rto_ns",
        "hystart",
        "cwnd_validation",
        "nagle_variant",
        "handshake",
        "loss_recovery",
        "dsack",
        "frto",
        "undo",
        "slow_start_after_idle",
        "hystart_variant",
        "quickack",
        "initial_rwnd",
        "rto_form",
        "cubic_variant",
        "reno_variant",
        "gso",
        "ecn",
        "sndbuf_accounting",
    }  # fmt: skip
)
TCP_OBJECTS = ("hosts.*.tcp", "peps.*.client_side", "peps.*.server_side")


# --------------------------------------------------------------------------------------
# The rules' shape
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class At:
    """One place of a plan a rule looks at: its path, value, the object holding it, and
    the whole plan (for rules that depend on other fields)."""

    path: str
    value: Any
    holder: Mapping[str, Any]
    plan: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]


Condition = Callable[[At], bool]


def present(at: At) -> bool:
    """The field is there and not empty, zero or false."""
    return bool(at.value)


@dataclass(frozen=True)
class Capability:
    """A field (a plan path pattern) and, for each backend, whether it honours the value
    found there. `reason` says why a backend does not (per backend where they differ); it
    may name {value}, {backend} and {accepted} (the values that backend takes).
    `unconditional` names the backends that honour the field whatever its value, whose
    check need not look at the plan for it."""

    field: str
    honours: Callable[[str, At], bool]
    reason: str | Mapping[str, str]
    accepted: Mapping[str, tuple[Any, ...]] | None = None
    unconditional: frozenset[str] = frozenset()

    def why(self, backend: str, at: At) -> str:
        text = self.reason if isinstance(self.reason, str) else self.reason[backend]
        accepted = ", ".join(map(str, (self.accepted or {}).get(backend, ())))
        return text.format(value=at.value, backend=backend, accepted=accepted)


def only(
    field: str,
    backends: tuple[str, ...],
    reason: str | Mapping[str, str],
    when: Condition = present,
) -> Capability:
    """Where `when` holds, only `backends` honour the field."""
    return Capability(
        field,
        lambda backend, at: backend in backends or not when(at),
        reason,
        unconditional=frozenset(backends),
    )


def values(field: str, accepted: Mapping[str, tuple[Any, ...]], reason: str) -> Capability:
    """Each backend named in `accepted` honours only those values; the others, all."""
    return Capability(
        field,
        lambda backend, at: backend not in accepted or at.value in accepted[backend],
        reason,
        accepted,
        frozenset(BACKENDS) - set(accepted),
    )


def known(field: str, backend: str, names: frozenset[str], reason: str) -> Capability:
    """`backend` honours only the keys `names` of the object at `field` (a `*` pattern); a
    key written as null asks for nothing (the plan writes every field of the core's)."""
    return Capability(
        field,
        lambda b, at: b != backend or at.name in names or at.value is None,
        reason,
        unconditional=frozenset(BACKENDS) - {backend},
    )


# Conditions on other fields of the same plan.


def _tool(at: At) -> str:
    return str(at.plan.get("app", {}).get("tool", "tcplab"))


def _iperf3(at: At) -> bool:
    return _tool(at) == "iperf3"


def _iperf3_and_present(at: At) -> bool:
    return _iperf3(at) and present(at)


def _pep_sides_differ(at: At) -> bool:
    pep = at.plan["peps"][int(at.path.split(".")[1])]
    return bool(pep["client_side"][at.name] != pep["server_side"][at.name])


def _iperf3_buffers_differ(at: At) -> bool:
    sizes = {h["tcp"][name] for h in at.plan["hosts"] for name in ("sndbuf", "rcvbuf")}
    return _iperf3(at) and len(sizes) > 1


def _autotuned(at: At) -> bool:
    """A buffer left to the kernel's autotuning."""
    return bool(at.value == AUTO_BUFFER)


def _lossy(plan: Mapping[str, Any]) -> bool:
    """Some link direction has an error model (the model's loss response applies)."""
    return any(
        link[direction]["error"]["kind"] != "none"
        for link in plan["links"]
        for direction in ("forward", "reverse")
    )


def _linux_module(tcp: Mapping[str, Any]) -> str | None:
    """The kernel module that runs the connection's `cc` on emu (None if none does)."""
    return LINUX_CC.get(str(tcp["cc"]))


_EMU_RUNS = "the emu backend runs on this machine's kernel"

# --------------------------------------------------------------------------------------
# The registry, in the order it is checked
# --------------------------------------------------------------------------------------

REGISTRY: tuple[Capability, ...] = (
    # Packet captures: the simulator's packets.
    only(
        "trace.pcap",
        ("sim",),
        "packet captures come from the sim backend; the {backend} backend has no simulated"
        " packets to capture",
    ),
    only(
        "trace",
        ("sim", "model"),
        "packet captures are the simulator's; the emu backend writes its own packet log"
        " (docs/emu.md)",
    ),
    only(
        "app.tool",
        ("emu",),
        '"iperf3" runs only on the emu backend; the {backend} backend models the application'
        ' itself (use tool = "tcplab", the default)',
        when=_iperf3,
    ),
    # The shape of the network.
    only(
        "flows",
        ("sim",),
        "the {backend} backend models a single connection on a path; run several flows on"
        " the sim backend",
    ),
    known("*", "emu", EMU_PLAN_FIELDS, "the emu backend does not know this plan field"),
    only(
        "peps",
        ("sim", "emu"),
        "the model backend models one end-to-end connection; run a PEP on the sim or emu backend",
    ),
    only(
        "links.*.wlan",
        ("sim", "model"),
        "the 802.11b medium is the simulator's; the emu link emulator has no DCF (run a wlan"
        " link on the sim backend)",
    ),
    only(
        "links.*.*.aqm",
        ("sim", "emu"),
        "the model's bounds assume a drop-tail queue; run an AQM (queue.kind ="
        " {value[kind]!r}) on the sim or emu backend",
    ),
    only(
        "links.*.forward.atm",
        ("sim", "model"),
        'the emu backend forwards IP packets; ATM cells (kind = "atm") run on the sim backend',
    ),
    *(
        only(
            f"links.*.{direction}.schedule",
            ("sim", "emu"),
            "the model backend's formulas take one rate, delay and loss for the whole run;"
            " run a schedule or a delivery trace on the sim or emu backend",
        )
        for direction in ("forward", "reverse")
    ),
    *(
        only(
            f"links.*.{direction}.schedule",
            ("sim",),
            "the emu backend starts a schedule's clock with the measurement tool's data"
            ' connection; iperf3 and media streams have none to start it (use tool = "tcplab"'
            " with a bulk, file or rr app, or the sim backend)",
            when=lambda at: (
                present(at) and (_iperf3(at) or at.plan.get("app", {}).get("kind") == "media")
            ),
        )
        for direction in ("forward", "reverse")
    ),
    only(
        "hosts.*.cpu",
        ("sim",),
        {
            "model": 'the model backend assumes hosts whose work costs nothing (cpu = "modern");'
            " run CPU profiles on the sim backend",
            "emu": "the emu backend runs on this machine's CPU; a CPU profile cannot be imposed"
            " on it",
        },
    ),
    # TCP: the model's formulas follow the sender's congestion control.
    values(
        "hosts.0.tcp.cc",
        {"model": MODEL_CC},
        "the model backend has no model of {value!r}; accepted: {accepted}",
    ),
    values(
        "tcp.cc",
        {"sim": CONGESTION_CONTROLS, "emu": tuple(LINUX_CC)},
        "Linux has no {value!r}; the emu backend runs {accepted} (reno and newreno are both"
        " Linux reno; hybla where the kernel has it)",
    ),
    only(
        "tcp.fast_retransmit",
        ("sim", "model"),
        "Linux always does fast retransmit; false cannot be emulated",
        when=lambda at: not at.value,
    ),
    known("tcp.*", "emu", EMU_TCP_FIELDS, "the emu backend has no Linux setting for this field"),
    only(
        "tcp.delack_timeout_ns",
        ("sim", "model"),
        "Linux's delayed-ACK timer adapts between 40 and 200 ms and cannot be set per socket;"
        " the emu backend accepts only values in that range",
        when=lambda at: not LINUX_DELACK_NS[0] <= at.value <= LINUX_DELACK_NS[1],
    ),
    only(
        "tcp.hystart_variant",
        ("sim", "model"),
        "Linux's CUBIC runs its own HyStart (ACK train and delay increase, tcp_cubic.c), not"
        " RFC 9406's HyStart++; set hystart_variant = 'linux' to run this scenario on emu",
        when=lambda at: (
            _linux_module(at.holder) == "cubic" and at.holder["hystart"] and at.value != "linux"
        ),
    ),
    only(
        "tcp.abc",
        ("sim", "model"),
        "Linux's slow start always counts the segments an ACK covers (tcp_slow_start), as"
        " byte counting does, so abc = false cannot be emulated; set abc = true to run this"
        " scenario on emu (examples/geo-emu.toml does so for the windows-nt4 profile)",
        when=lambda at: not at.value,
    ),
    only(
        "tcp.nagle_variant",
        ("sim", "model"),
        "Linux's Nagle is always Minshall's variant (tcp_nagle_check), so nagle_variant ="
        " 'rfc896' with nagle = true cannot be emulated; set nagle_variant = 'minshall' (or"
        " nagle = false) to run this scenario on emu",
        when=lambda at: at.holder["nagle"] and at.value != "minshall",
    ),
    only(
        "tcp.cwnd_validation",
        ("sim", "model"),
        "Linux always grows cwnd only while it limits the sender (tcp_is_cwnd_limited, RFC"
        " 7661), so cwnd_validation = false cannot be emulated; set cwnd_validation = true to"
        " run this scenario on emu",
        when=lambda at: not at.value,
    ),
    only(
        "tcp.loss_recovery",
        ("sim", "model"),
        "Linux finds losses with RACK-TLP (net.ipv4.tcp_recovery = 1) whenever SACK is on, so"
        " loss_recovery = 'classic' with sack = true cannot be emulated; set loss_recovery ="
        " 'rack' (or sack = false) to run this scenario on emu",
        when=lambda at: at.holder["sack"] and at.value != "rack",
    ),
    only(
        "tcp.loss_recovery",
        ("sim", "emu"),
        "the model's loss response (PFTK) counts the timeouts that recovery by duplicate ACKs"
        " leaves, and RACK-TLP's probes avoid most of them: the model has no formula for"
        " loss_recovery = 'rack' with sack = true on a lossy path; set loss_recovery ="
        " 'classic' or run on the sim backend",
        when=lambda at: at.holder["sack"] and at.value == "rack" and _lossy(at.plan),
    ),
    only(
        "tcp.quickack",
        ("sim", "model"),
        "a Linux receiver always acknowledges the first segments one by one"
        " (tcp_incr_quickack), so quickack = false with delayed_ack = true cannot be emulated;"
        " set quickack = true to run this scenario on emu",
        when=lambda at: at.holder["delayed_ack"] and not at.value,
    ),
    only(
        "tcp.cubic_variant",
        ("sim", "model"),
        "Linux's CUBIC is tcp_cubic.c's, not RFC 9438 as written, so cubic_variant = 'rfc9438'"
        " cannot be emulated; set cubic_variant = 'linux' to run this scenario on emu",
        when=lambda at: _linux_module(at.holder) == "cubic" and at.value != "linux",
    ),
    only(
        "tcp.reno_variant",
        ("sim", "model"),
        "Linux's Reno is tcp_cong.c's, in whole segments, so reno_variant = 'rfc5681'"
        " cannot be emulated; set reno_variant = 'linux' to run this scenario on emu",
        when=lambda at: _linux_module(at.holder) == "reno" and at.value != "linux",
    ),
    only(
        "tcp.rto_form",
        ("sim", "model"),
        "Linux puts its minimum RTO on the variance term (RTO = SRTT + max(4·RTTVAR, rto_min)),"
        " so rto_form = 'rfc6298' cannot be emulated; set rto_form = 'linux' to run this"
        " scenario on emu",
        when=lambda at: at.value != "linux",
    ),
    *(
        only(
            f"tcp.{name}",
            ("sim", "emu"),
            f"the model's window is a buffer's size; Linux's autotuning of {name} (\"auto\")"
            " grows with the connection, which its formulas do not follow: give a size, or"
            " run this scenario on sim or emu",
            when=_autotuned,
        )
        for name in ("sndbuf", "rcvbuf")
    ),
    *(
        only(
            f"peps.*.{side}.{name}",
            ("sim",),
            "the emu backend's PEP relay sets its buffers (tcplab.measure.relay); give this"
            " PEP side's buffer a size, or run it on sim",
            when=_autotuned,
        )
        for side in ("client_side", "server_side")
        for name in ("sndbuf", "rcvbuf")
    ),
    only(
        "tcp.sndbuf_accounting",
        ("sim", "model"),
        "Linux doubles SO_SNDBUF and charges each skb's memory against it (tcp_sendmsg), so"
        " sndbuf_accounting = 'payload' cannot be emulated; set sndbuf_accounting = 'linux'"
        " to run this scenario on emu",
        when=lambda at: at.value != "linux",
    ),
    only(
        "tcp.undo",
        ("sim", "model"),
        "Linux always undoes a reduction that proves spurious (tcp_try_undo_*, no sysctl),"
        " which it can tell by D-SACKs or timestamps, so undo = false with sack or timestamps"
        " on cannot be emulated; set undo = true to run this scenario on emu",
        when=lambda at: not at.value and (at.holder["sack"] or at.holder["timestamps"]),
    ),
    only(
        "tcp.handshake",
        ("sim", "model"),
        "a real connect() always sends a SYN and waits for the SYN-ACK, so handshake = false"
        " cannot be emulated; set handshake = true to run this scenario on emu",
        when=lambda at: not at.value,
    ),
    *(
        only(
            f"peps.*.server_side.{name}",
            ("sim",),
            f"a PEP's namespace has one net.ipv4.tcp_{name} for both its sides; give"
            " client_side and server_side the same value",
            when=_pep_sides_differ,
        )
        for name in PEP_NAMESPACE_TCP_FIELDS
    ),
    # The application.
    values("app.kind", {"model": MODEL_KINDS, "emu": EMU_KINDS}, "{value!r}; accepted: {accepted}"),
    only(
        "app.tool",
        (),
        'iperf3 has no media mode; use tool = "tcplab"',
        when=lambda at: _iperf3(at) and at.plan["app"]["kind"] == "media",
    ),
    only(
        "app.shared_connection",
        ("sim",),
        "the measurement tool gives each TCP stream its own connection; streams sharing one"
        " run on the sim backend",
    ),
    only(
        "app.streams.*.direction",
        ("sim",),
        "the emu backend sends streams from the first host only (upstream)",
        when=lambda at: at.value != "upstream",
    ),
    only(
        "app.streams.*.message_size",
        ("sim",),
        f"the measurement tool's messages carry a {MEDIA_HEADER_BYTES}-byte header (sequence"
        f" number, timestamp, length); give at least {MEDIA_HEADER_BYTES} bytes",
        when=lambda at: at.value < MEDIA_HEADER_BYTES,
    ),
    only(
        "app.tool",
        (),
        'iperf3 has no request/response test; kind = "rr" runs on tcplab\'s own tool'
        ' (tool = "tcplab", the default)',
        when=lambda at: _iperf3(at) and at.plan["app"]["kind"] == "rr",
    ),
    only(
        "app.parallel",
        ("sim", "emu"),
        "the model backend models a single connection; run parallel connections on the sim"
        " or emu backend",
    ),
    only(
        "app.start_jitter_ns",
        ("sim", "emu"),
        "the model backend models a single connection, which opens at time 0; run parallel"
        " connections that open apart on the sim or emu backend",
    ),
    only(
        "app.write_delay_ns",
        ("sim", "emu"),
        "the model backend has no model of an application that sleeps between writes",
    ),
    only(
        "app.write_delay_ns",
        ("sim",),
        "an rr client writes each request as soon as the last response is read (netperf"
        " TCP_RR); there is no pause between writes to set",
        when=lambda at: present(at) and at.plan["app"]["kind"] == "rr",
    ),
    only(
        "app.read_delay_ns",
        ("sim", "emu"),
        "the model backend has no model of an application that sleeps between reads",
    ),
    only(
        "app.parallel",
        (),
        'parallel connections run on tcplab\'s own tool (tool = "tcplab", the default)',
        when=_iperf3,
    ),
    only(
        "app.parallel",
        ("sim",),
        "the emu backend's PEP relays one connection; run parallel connections through a PEP"
        " on the sim backend",
        when=lambda at: bool(at.plan.get("peps")),
    ),
    only(
        "app.tool",
        (),
        "iperf3 sets one size (-w) for both buffers of both hosts, or none: give every sndbuf"
        ' and rcvbuf the same size, or all "auto", or use tool = "tcplab"',
        when=_iperf3_buffers_differ,
    ),
    only(
        "duration_ns",
        ("sim", "model"),
        "iperf3 -t takes whole seconds",
        when=lambda at: (
            _iperf3(at) and at.plan["app"]["kind"] != "file" and at.value % NS_PER_S > 0
        ),
    ),
    only(
        "app.message_size",
        (),
        "iperf3 -l takes at most 1 MiB per write",
        when=lambda at: _iperf3(at) and at.value > IPERF3_MAX_BLOCK,
    ),
    *(
        only(
            f"app.{name}",
            (),
            'iperf3 has no such option; use tool = "tcplab", which honours it',
            when=_iperf3_and_present,
        )
        for name in ("write_delay_ns", "read_delay_ns", "read_size")
    ),
)


# --------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------


def _places(
    node: Any, parts: list[str], prefix: str, holder: Any
) -> Iterator[tuple[str, Any, Any]]:
    """(path, value, holder) of every place `parts` names below `node`."""
    if not parts:
        yield prefix, node, holder
        return
    head, rest = parts[0], parts[1:]
    if isinstance(node, Mapping):
        keys = list(node) if head == "*" else [head] if head in node else []
    elif isinstance(node, list):
        keys = [str(i) for i in range(len(node))] if head == "*" else [head]
        keys = [k for k in keys if k.isdigit() and int(k) < len(node)]
    else:
        return
    for key in keys:
        child = node[key] if isinstance(node, Mapping) else node[int(key)]
        yield from _places(child, rest, f"{prefix}.{key}" if prefix else key, node)


def places(plan: Mapping[str, Any], field: str) -> Iterator[At]:
    """Every place of `plan` that `field` (a registry pattern) names."""
    patterns = (
        [f"{tcp}.{field.removeprefix('tcp.')}" for tcp in TCP_OBJECTS]
        if field.startswith("tcp.")
        else [field]
    )
    for pattern in patterns:
        for path, value, holder in _places(plan, pattern.split("."), "", plan):
            yield At(path, value, holder, plan)


def supported_by(plan: Mapping[str, Any], at: At) -> tuple[str, ...]:
    """The backends that honour the value at `at` under every rule on its field."""
    rules = [rule for rule in REGISTRY if any(p.path == at.path for p in places(plan, rule.field))]
    return tuple(b for b in BACKENDS if all(rule.honours(b, at) for rule in rules))


def check(plan: Mapping[str, Any], backend: str) -> None:
    """Refuse, with Unsupported, the first field of `plan` that `backend` does not honour."""
    for rule in REGISTRY:
        if backend in rule.unconditional:
            continue
        for at in places(plan, rule.field):
            if not rule.honours(backend, at):
                raise Unsupported(
                    at.path, backend, at.value, rule.why(backend, at), supported_by(plan, at)
                )
