"""Resolve a validated scenario into the plan the backends run.

The plan is the contract with the Rust core (docs/internals/plan-and-result.md): integers
in ns, bit/s and bytes, and no names the core would have to look up. Everything that turns
a name into a number (link kind → framing, Eb/No + curve → BER) happens here and nowhere
else.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tcplab import profiles
from tcplab.analytic import ber_curves
from tcplab.analytic.framing import CELL_BITS, ENCAPSULATIONS, FRAMING, LLC_SNAP_BYTES
from tcplab.errors import SpecError
from tcplab.presets import leo, rain_fade
from tcplab.spec import (
    ERROR_MODEL_FIELDS,
    Abr,
    App,
    Efci,
    Erica,
    Host,
    Link,
    Pep,
    Queue,
    Router,
    Spec,
    Stream,
    Switch,
    Tcp,
    Trace,
)
from tcplab.spec.schedule import ScheduleRow, read_mahimahi_trace
from tcplab.spec.trace import LINK_PATH
from tcplab.spec.units import QueueLimit

SEED_MASK = 2**63 - 1
# A mahimahi delivery opportunity carries one MTU-sized packet: its PACKET_SIZE, 1504 bytes,
# is a 1500-byte IP datagram and the TUN's 4-byte header (link_queue.hh). Here it carries
# a 1500-byte datagram in the link's framing.
TRACE_OPPORTUNITY_IP_BYTES = 1500


def derive_seed(seed: int, repetition: int) -> int:
    """The seed of one repetition: the spec's seed for the first, a stable hash for the rest.

    Hashing (rather than seed + repetition) keeps repetitions of neighbouring seeds from
    sharing random streams; 63 bits fit both Rust's u64 and a signed 64-bit integer.
    """
    if repetition == 0:
        return seed
    digest = hashlib.sha256(f"tcplab-repetition:{seed}:{repetition}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & SEED_MASK


def _tcp(tcp: Tcp) -> dict[str, Any]:
    return {
        "cc": tcp.cc,
        "cubic_variant": tcp.cubic_variant,
        "reno_variant": tcp.reno_variant,
        "sndbuf": tcp.sndbuf,
        "sndbuf_accounting": tcp.sndbuf_accounting,
        "rcvbuf": tcp.rcvbuf,
        "mss": tcp.mss,
        "initial_window": tcp.initial_window,
        "window_scaling": tcp.window_scaling,
        "sack": tcp.sack,
        "timestamps": tcp.timestamps,
        "abc": tcp.abc,
        "hystart": tcp.hystart,
        "hystart_variant": tcp.hystart_variant,
        "delayed_ack": tcp.delayed_ack,
        "delack_timeout_ns": tcp.delack_timeout,
        "quickack": tcp.quickack,
        "initial_rwnd": tcp.initial_rwnd,
        "nagle": tcp.nagle,
        "nagle_variant": tcp.nagle_variant,
        "fast_retransmit": tcp.fast_retransmit,
        "min_rto_ns": tcp.min_rto,
        "rto_form": tcp.rto_form,
        "cwnd_validation": tcp.cwnd_validation,
        "handshake": tcp.handshake,
        "loss_recovery": tcp.loss_recovery,
        "dsack": tcp.dsack,
        "frto": tcp.frto,
        "slow_start_after_idle": tcp.slow_start_after_idle,
        "undo": tcp.undo,
        "gso": tcp.gso,
        "ecn": profiles.ecn(tcp.ecn, tcp.profile),
    }


def _queue_limit(limit: QueueLimit) -> dict[str, int]:
    return {limit.unit: limit.value}


def _aqm(queue: Queue) -> dict[str, Any] | None:
    """The plan's `aqm` of a queue: None for drop-tail, else its discipline in the plan's
    units (docs/internals/plan-and-result.md)."""
    kind = queue.kind or "droptail"
    s = queue.settings()
    if kind == "red":
        return {
            "kind": "red",
            "min_th": s["min_th"].value,
            "max_th": s["max_th"].value,
            "max_p": s["max_p"],
            "w_q": s["w_q"],
            "gentle": s["gentle"],
            "mean_packet_bytes": s["mean_packet_size"],
            "ecn": s["ecn"],
        }
    if kind in ("codel", "fq_codel"):
        plan = {
            "kind": kind,
            "target_ns": s["target"],
            "interval_ns": s["interval"],
            "ecn": s["ecn"],
        }
        if kind == "fq_codel":
            plan |= {"flows": s["flows"], "quantum": s["quantum"]}
        return plan
    if kind == "pie":
        return {
            "kind": "pie",
            "target_ns": s["target"],
            "t_update_ns": s["t_update"],
            "alpha": s["alpha"],
            "beta": s["beta"],
            "max_burst_ns": s["max_burst"],
            "ecn": s["ecn"],
        }
    return None


def _error(link: Link, index: int, prefix: str) -> dict[str, Any]:
    ber, loss, gilbert_elliott, ebno_db = (getattr(link, prefix + f) for f in ERROR_MODEL_FIELDS)
    clr = getattr(link, prefix + "clr")
    if clr is not None:
        # On an ATM link the per-unit loss applies to each cell.
        return {"kind": "loss", "p": clr}
    if ber is not None:
        return {"kind": "ber", "ber": ber}
    if loss is not None:
        return {"kind": "loss", "p": loss}
    if gilbert_elliott is not None:
        return {"kind": "gilbert_elliott", **gilbert_elliott.model_dump()}
    if ebno_db is not None:
        curve = getattr(link, prefix + "ber_curve")
        try:
            return {"kind": "ber", "ber": ber_curves.ber_from_ebno(curve, ebno_db)}
        except ValueError as error:
            # Validation already checks this; a Spec built with model_construct does not.
            raise SpecError([f"links.{index}.{prefix}ebno_db: {error}"]) from None
    return {"kind": "none"}


def _host(host: Host) -> dict[str, Any]:
    plan: dict[str, Any] = {"name": host.name, "tcp": _tcp(host.tcp), "cpu": None}
    if host.cpu is not None:
        cpu = host.cpu.resolved()
        # A host whose work costs nothing has no CPU model at all (the `modern` default).
        if not cpu.costs_nothing():
            plan["cpu"] = {
                "per_packet_ns": cpu.per_packet_ns,
                "per_byte_ns": cpu.per_byte_ns,
                "per_call_ns": cpu.per_call_ns,
                "storage_per_byte_ns": cpu.storage_per_byte_ns,
                "ring_packets": cpu.ring_packets,
            }
    return plan


def _app(app: App) -> dict[str, Any]:
    # Every field the core's AppPlan has, each written (the core takes no defaults).
    rr = app.kind == "rr"
    plan: dict[str, Any] = {
        "kind": app.kind,
        "message_size": app.message_size,
        "bytes": app.message_bytes(),
        "write_delay_ns": app.write_delay or 0,
        "read_size": app.read_size,
        "read_delay_ns": app.read_delay or 0,
        # netperf TCP_RR's default: one byte each way (-r 1,1).
        "request_size": (app.request_size or 1) if rr else None,
        "response_size": (app.response_size or 1) if rr else None,
        "streams": [_stream(stream) for stream in app.streams or ()],
        "shared_connection": app.connection == "shared",
    }
    # The path form's own keys, which topology_form turns into flows: which way a message
    # goes, and how many connections carry the app.
    if app.direction is not None:
        plan["direction"] = app.direction
    if app.parallel is not None and app.parallel > 1:
        plan["parallel"] = app.parallel
        if app.start_jitter:
            plan["start_jitter_ns"] = app.start_jitter
    # Only an emu scenario that runs iperf3 has the key (the simulator's plan has no such
    # field, and the spec refuses iperf3 on other backends).
    if app.tool not in (None, "tcplab"):
        plan["tool"] = app.tool
    return plan


def _wlan(link: Link) -> dict[str, Any]:
    wlan = link.wlan_settings()
    plan: dict[str, Any] = {
        "ap_end": 0 if wlan.ap == "first" else 1,
        "ack_rate_bps": wlan.ack_rate,
        "preamble": wlan.preamble,
        "retry_limit": wlan.retry_limit,
        "ap_queue": _queue_limit(wlan.ap_queue),
        "medium": wlan.medium,
    }
    return plan


def _stream(stream: Stream) -> dict[str, Any]:
    # The kind label and the objectives stay in the scenario: tcplab.analytic.media reads them when
    # it judges the stream, the backends never need them.
    # `direction` is the path form's: topology_form makes each stream's flow run its way.
    return {
        "name": stream.name,
        "transport": stream.transport,
        "interval_ns": stream.interval_ns(),
        "message_size": stream.message_bytes(),
        "max_message_size": stream.max_message_size,
        "start_ns": stream.start or 0,
        "direction": stream.direction,
        "skip_when_blocked": stream.when_blocked == "skip",
    }


def _link(link: Link, index: int, spec: Spec) -> dict[str, Any]:
    framing = FRAMING[link.kind]
    if link.kind == "wlan":
        framing = replace(
            framing, overhead_bytes=link.wlan_settings().mac_overhead + LLC_SNAP_BYTES
        )
    reverse_queue = link.queue if link.reverse_queue is None else link.reverse_queue
    forward = {
        "rate_bps": link.rate,
        "delay_ns": link.delay,
        "queue": _queue_limit(link.queue.limit),
        "error": _error(link, index, ""),
        "framing": asdict(framing),
        "atm": None,
        "aqm": _aqm(link.queue),
    }
    reverse = {
        "rate_bps": link.rate if link.reverse_rate is None else link.reverse_rate,
        "delay_ns": link.delay if link.reverse_delay is None else link.reverse_delay,
        "queue": _queue_limit(reverse_queue.limit),
        "error": _error(link, index, "reverse_"),
        "framing": asdict(framing),
        "atm": None,
        "aqm": _aqm(reverse_queue),
    }
    for prefix, channel in (("", forward), ("reverse_", reverse)):
        channel["schedule"] = _schedule(link, index, prefix, channel, spec)
    if link.kind == "wlan":
        return {"forward": forward, "reverse": reverse, "wlan": _wlan(link)}
    if link.kind == "atm":
        encapsulation = ENCAPSULATIONS[link.encapsulation or "llc-snap"]
        atm = {
            "slot_octets": 53 + (link.cell_overhead or 0),
            "encapsulation_bytes": encapsulation.header_bytes,
            "mtu": encapsulation.mtu,
        }
        forward["atm"] = reverse["atm"] = atm
    return {"forward": forward, "reverse": reverse, "wlan": None}


def _row_error(link: Link, index: int, prefix: str, row: ScheduleRow) -> dict[str, Any] | None:
    if row.loss is not None:
        return {"kind": "loss", "p": row.loss}
    if row.ber is not None:
        return {"kind": "ber", "ber": row.ber}
    if row.ebno_db is not None:
        try:
            ber = ber_curves.ber_from_ebno(getattr(link, prefix + "ber_curve"), row.ebno_db)
        except (TypeError, ValueError) as error:
            raise SpecError([f"links.{index}.{prefix}schedule: {error}"]) from None
        return {"kind": "ber", "ber": ber}
    return None


def schedule_rows(link: Link, index: int, prefix: str, spec: Spec) -> list[ScheduleRow]:
    """A direction's rows: the scenario's, or those a preset generates for the run."""
    forward = prefix == ""
    try:
        if link.leo is not None:
            return leo.rows(
                link.leo,
                link.delay if forward else link.reverse_delay or link.delay,
                spec.duration,
                spec.seed,
                f"links.{index}.leo",
            )
        if link.rain_fade is not None and forward:
            return rain_fade.rows(
                link.rain_fade,
                link.ebno_db,
                link.ber_curve,
                spec.duration,
                spec.seed,
                f"links.{index}.forward.rain_fade",
            )
    except ValueError as error:
        raise SpecError([f"links.{index}.{'leo' if link.leo else 'rain_fade'}: {error}"]) from None
    rows: list[ScheduleRow] = getattr(link, prefix + "schedule") or []
    return rows


def _schedule(
    link: Link, index: int, prefix: str, channel: dict[str, Any], spec: Spec
) -> dict[str, Any] | None:
    """The plan's schedule of one direction (crates/sim/src/plan/schedule.rs): each field a
    row sets becomes a table from time 0 (the link's own value until its first row); rate
    and delay follow the link's interpolation, the error model and state always step."""
    rows = schedule_rows(link, index, prefix, spec)
    plan: dict[str, Any] = {}

    def table(values: list[tuple[int, Any]], base: Any) -> list[list[Any]]:
        # [time, value] pairs, as JSON holds them.
        pairs = [[at, value] for at, value in values]
        return pairs if values[0][0] == 0 else [[0, base], *pairs]

    linear = link.schedule_interpolation == "linear"
    for name, key in (("rate", "rate_bps"), ("delay", "delay_ns")):
        values = [(row.at, getattr(row, name)) for row in rows if getattr(row, name) is not None]
        if values:
            plan[key] = {"linear": linear, "points": table(values, channel[key])}
    errors = [(row.at, _row_error(link, index, prefix, row)) for row in rows]
    known = [(at, error) for at, error in errors if error is not None]
    if known:
        plan["error"] = table(known, channel["error"])
    states = [(row.at, row.up) for row in rows if row.up is not None]
    if states:
        plan["up"] = table(states, True)
    trace = getattr(link, prefix + "trace")
    if trace is not None:
        try:
            opportunities = read_mahimahi_trace(Path(trace))
        except ValueError as error:  # validated, but the file may have changed since
            raise SpecError([f"links.{index}.{prefix}trace: {error}"]) from None
        plan["trace"] = {
            "opportunities_ns": opportunities,
            "bytes_per_opportunity": TRACE_OPPORTUNITY_IP_BYTES
            + channel["framing"]["overhead_bytes"],
        }
    if not plan:
        return None
    # Every part the core's SchedulePlan has, each written: null or empty for what is fixed.
    return {"rate_bps": None, "delay_ns": None, "error": [], "up": [], "trace": None, **plan}


def _router(router: Router) -> dict[str, Any]:
    switch = router.switch
    if switch is None:
        return _plain_router(router.name)
    return {
        "name": router.name,
        "switch": {
            "buffer_cells": switch.buffer_cells,
            "discard": switch.discard.replace("-", "_"),
            "epd_threshold_cells": switch.threshold(),
            "feedback": {"kind": "none"} if switch.feedback is None else _feedback(switch),
        },
    }


def _plain_router(name: str) -> dict[str, Any]:
    """A store-and-forward router that is no ATM switch (a PEP's node is one too)."""
    return {"name": name, "switch": None}


def _feedback(switch: Switch) -> dict[str, Any]:
    if switch.feedback == "efci":
        efci = switch.efci or Efci()
        low, high = switch.efci_thresholds()
        plan: dict[str, Any] = {
            "kind": "efci",
            "mark": efci.mark.replace("-", "_"),
            "q_hi_cells": high,
            "q_lo_cells": low,
            "q_ni_cells": efci.no_increase,
        }
        return plan
    erica = switch.erica or Erica()
    plan = {
        "kind": "erica",
        "target_utilization": erica.target_utilization,
        "delta": erica.delta,
        "interval_ns": erica.interval,
        "fair_share": erica.fair_share,
        "measure_ccr": erica.measure_ccr,
        "interval_cells": erica.interval_cells,
        "plus": None,
    }
    if erica.plus is not None:
        plus = erica.plus
        plan["plus"] = {"t0_ns": plus.t0, "qdlf": plus.qdlf, "a": plus.a, "b": plus.b}
    return plan


def _abr(abr: Abr) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "mcr_cells_s": abr.mcr / CELL_BITS,
        "tcr_cells_s": abr.tcr / CELL_BITS,
        "rif": abr.rif,
        "rdf": abr.rdf,
        "cdf": abr.cdf,
        "nrm": abr.nrm,
        "mrm": abr.mrm,
        "trm_ns": abr.trm,
        "adtf_ns": abr.adtf,
        "tbe_cells": abr.tbe,
        "frtt_ns": abr.frtt,
        # Null, PCR is the VC's first link's cell rate and ICR is PCR (the simulator knows
        # the links' cell slots).
        "pcr_cells_s": None if abr.pcr is None else abr.pcr / CELL_BITS,
        "icr_cells_s": None if abr.icr is None else abr.icr / CELL_BITS,
    }
    return plan


def _capture(path: str, hosts: list[str]) -> dict[str, Any]:
    # "links.N" captures both directions; "links.N.forward" or "links.N.reverse" one;
    # anything else names a host.
    if not LINK_PATH.fullmatch(path):
        return {"host": hosts.index(path)}
    _, link, *direction = path.split(".")
    return {"link": int(link), "direction": direction[0] if direction else "both"}


def _trace(trace: Trace, hosts: list[str]) -> dict[str, Any]:
    return {
        "pcap": [_capture(path, hosts) for path in trace.pcap],
        "snaplen": trace.snaplen,
    }


def resolve(spec: Spec, seed: int | None = None) -> dict[str, Any]:
    """The plan for one run of `spec`; `seed` replaces the spec's seed (for repetitions)."""
    plan = {
        "seed": spec.seed if seed is None else seed,
        "duration_ns": spec.duration,
        "interval_ns": spec.interval,
        "trace_interval_ns": spec.trace_interval,
        "hosts": [_host(host) for host in spec.hosts],
        "links": [_link(link, index, spec) for index, link in enumerate(spec.links)],
        "trace": None,
        "abr": None,
    }
    if spec.trace is not None:
        plan["trace"] = _trace(spec.trace, [host.name for host in spec.hosts])
    # The ABR sources' parameters, TM 4.0's defaults unless given, where some switch
    # gives ABR feedback (and where [abr] is given, so that the simulator checks them).
    feedback = any(r.switch is not None and r.switch.feedback for r in spec.routers)
    if spec.abr is not None or feedback:
        plan["abr"] = _abr(spec.abr or Abr())
    return _with_flows(spec, plan)


def _with_flows(spec: Spec, plan: dict[str, Any]) -> dict[str, Any]:
    """The path form's one app, or the topology form's routers, link nodes and flows (node
    ids count the hosts first, then the routers)."""
    if not spec.flows:
        # The router after link k is node k + 2.
        peps = [
            _pep(pep, pep.after_link + 2) for pep in spec.peps or () if pep.after_link is not None
        ]
        return {**plan, "app": _app(spec.app), "peps": peps}
    # Node ids: the hosts, the scenario's routers, then its PEPs (routers that split
    # connections).
    proxies = list(spec.peps or ())
    names = [h.name for h in spec.hosts] + [r.name for r in spec.routers]
    names += [p.name for p in proxies]
    node = {name: index for index, name in enumerate(names)}
    for link_plan, link in zip(plan["links"], spec.links, strict=True):
        link_plan["nodes"] = [node[name] for name in link.between or ()]
    flows = [
        _flow(node[flow.src], node[flow.dst], _one_way(_app(app)), flow.after)
        | {"start_ns": flow.start or 0, "start_jitter_ns": flow.start_jitter or 0}
        for flow, app in zip(spec.flows, spec.flow_apps(), strict=True)
    ]
    routers = [_router(r) for r in spec.routers] + [_plain_router(pep.name) for pep in proxies]
    peps = [_pep(pep, node[pep.name]) for pep in proxies]
    return {**plan, "routers": routers, "flows": flows, "peps": peps}


def topology_form(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as the simulator takes it: every link naming its two nodes, every connection a
    flow. A path-form plan (two hosts, links in order, one app) becomes the topology it
    describes: host 0 is node 0, host 1 node 1, the router after link k node k + 2 (named
    ``after-links.k``); its app becomes one flow from host 0 to host 1 (`parallel` of them
    if it says so, each with the app's `start_jitter_ns`), or one per leg of a
    message sent both ways (the second opening once the first is received), or one per
    media stream (TCP streams of one direction sharing one when the app says so).
    """
    if "flows" in plan:
        return plan
    count = len(plan["links"])

    def node(k: int) -> int:
        return 0 if k == 0 else 1 if k == count else k + 1

    path = {key: value for key, value in plan.items() if key != "app"}
    links = plan["links"]
    return {
        **path,
        "links": [{**link, "nodes": [node(k), node(k + 1)]} for k, link in enumerate(links)],
        "routers": [_plain_router(f"after-links.{k}") for k in range(count - 1)],
        "flows": _path_flows(plan["app"]),
    }


def _flow(src: int, dst: int, app: dict[str, Any], after: int | None = None) -> dict[str, Any]:
    return {"src": src, "dst": dst, "app": app, "start_ns": 0, "start_jitter_ns": 0, "after": after}


def _one_way(app: dict[str, Any]) -> dict[str, Any]:
    """A flow's app: the path form's app without the keys that say how it becomes flows."""
    path_keys = ("direction", "parallel", "start_jitter_ns")
    return {key: value for key, value in app.items() if key not in path_keys}


def _path_flows(app: dict[str, Any]) -> list[dict[str, Any]]:
    """The flows of a path-form app, each carrying its data from its src to its dst."""
    one_way = _one_way(app)
    if app.get("parallel"):
        jitter = {"start_jitter_ns": app.get("start_jitter_ns", 0)}
        return [_flow(0, 1, one_way) | jitter for _ in range(app["parallel"])]
    if app["kind"] == "media":
        return _media_flows(one_way)
    if app["kind"] == "message" and app.get("direction") == "downstream":
        return [_flow(1, 0, one_way)]
    if app["kind"] == "message" and app.get("direction") == "both":
        return [_flow(0, 1, one_way), _flow(1, 0, one_way, after=0)]
    return [_flow(0, 1, one_way)]


def _media_flows(app: dict[str, Any]) -> list[dict[str, Any]]:
    flows: list[dict[str, Any]] = []
    for stream in app["streams"]:
        src, dst = (1, 0) if stream["direction"] == "downstream" else (0, 1)
        carried = {key: value for key, value in stream.items() if key != "direction"}
        shared = app.get("shared_connection", False) and stream["transport"] == "tcp"
        joined = next(
            (
                f
                for f in flows
                if shared and f["src"] == src and f["app"]["streams"][0]["transport"] == "tcp"
            ),
            None,
        )
        if joined is not None:
            joined["app"]["streams"].append(carried)
        else:
            flows.append(_flow(src, dst, {**app, "streams": [carried]}))
    return flows


def _pep(pep: Pep, node: int) -> dict[str, Any]:
    return {
        "name": pep.name,
        "node": node,
        "buffer": pep.buffer,
        "client_side": _tcp(pep.tcp_client_side),
        "server_side": _tcp(pep.tcp_server_side),
    }
