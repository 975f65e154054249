"""The ``model`` backend: closed-form bounds and models of one TCP transfer on a plan's path.

``run(plan)`` takes a *resolved* plan (see ``docs/internals/plan-and-result.md``: integer
ns, bit/s and bytes; framing and error models per link direction) and returns a result
dict with the simulator's schema. What a closed-form model cannot know (retransmissions,
timeouts, packet counts, queue peaks) is ``None``; every intermediate bound is reported
under ``summary["model"]`` so a user can see *why* the number is what it is.

The models are small pure functions in ``tcplab.analytic``, each with its source; the page
``docs/models/analytic-tcp.md`` describes them, their limits and their tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from tcplab.analytic.framing import direction_wire_bytes
from tcplab.analytic.loss import (
    cubic_response_bps,
    direction_packet_error_rate,
    mathis_bps,
    path_loss_probability,
    pftk_approx_bps,
    pftk_bps,
    pftk_unconstrained_window,
    rto_after_first_sample_s,
)
from tcplab.analytic.path import (
    MAX_UNSCALED_WINDOW_BYTES,
    NS_PER_S,
    ack_path_goodput_bps,
    effective_rtt_s,
    header_rtt_s,
    link_goodput_bps,
    send_s,
)
from tcplab.analytic.slow_start import FluidTransfer, slow_start_gamma, slow_start_rounds
from tcplab.analytic.window import window_bound_bps, window_in_flight_bytes, window_limit_bytes
from tcplab.analytic.wlan import wlan_goodput_bps
from tcplab.backends import rows
from tcplab.errors import FieldRefused
from tcplab.shared import TCP_IP_HEADER_BYTES, TIMESTAMP_OPTION_BYTES

Plan = Mapping[str, Any]


# --------------------------------------------------------------------------------------
# Plan reading
# --------------------------------------------------------------------------------------


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise FieldRefused(field, message)


def _check_plan(plan: Plan) -> None:
    """Refuse a plan the formulas cannot read, naming the plan field. What the model
    honours of a valid scenario is declared in tcplab.backends.capabilities, checked
    before a run; this guards the formulas against hand-made plans, as the Rust core's
    PlanError checks guard the simulator."""
    hosts = plan.get("hosts")
    if not (isinstance(hosts, list) and len(hosts) == 2):
        raise FieldRefused("hosts", "exactly two hosts expected")
    links = plan.get("links")
    if not (isinstance(links, list) and len(links) >= 1):
        raise FieldRefused("links", "at least one link expected")
    for i, host in enumerate(hosts):
        tcp = host["tcp"]
        for name in ("mss", "initial_window", "sndbuf", "rcvbuf"):
            _check(tcp[name] > 0, f"hosts.{i}.tcp.{name}", "must be > 0")
    for i, link in enumerate(links):
        for name in ("forward", "reverse"):
            d = link[name]
            where = f"links.{i}.{name}"
            _check(d["rate_bps"] > 0, f"{where}.rate_bps", "must be > 0")
            _check(d["delay_ns"] >= 0, f"{where}.delay_ns", "must be >= 0")
            kind = d["error"].get("kind")
            _check(
                kind in ("none", "loss", "ber", "gilbert_elliott"),
                f"{where}.error.kind",
                f"{kind!r} unknown; accepted: none, loss, ber, gilbert_elliott",
            )
    app = plan["app"]
    if app["kind"] == "file":
        _check(
            isinstance(app.get("bytes"), int) and app["bytes"] > 0,
            "app.bytes",
            "a file transfer needs a byte count > 0",
        )
    for key in ("duration_ns", "interval_ns", "trace_interval_ns"):
        _check(plan[key] > 0, key, "must be > 0")


def _queue_payload_bytes(queue: Mapping[str, Any], mss: int, data_wire: int) -> int:
    """Payload a drop-tail queue of full segments holds."""
    if "packets" in queue:
        return int(queue["packets"]) * mss
    return (int(queue["bytes"]) // data_wire) * mss


# --------------------------------------------------------------------------------------
# The backend
# --------------------------------------------------------------------------------------


def run(plan: Plan) -> dict[str, Any]:
    """Evaluate the closed-form models for ``plan`` (one that passed the capability
    registry's check for this backend); result in the simulator's schema."""
    _check_plan(plan)
    sender, receiver = plan["hosts"][0], plan["hosts"][-1]
    stcp, rtcp = sender["tcp"], receiver["tcp"]
    links = plan["links"]
    forward = [link["forward"] for link in links]
    reverse = [link["reverse"] for link in links]
    app = plan["app"]
    notes: list[str] = []

    # Each side announces its MSS in the SYN and the sender uses the smaller (RFC 9293 §3.7.1).
    # With timestamps every segment carries 12 option bytes, taken out of the payload
    # (RFC 6691 §2), so the datagram size stays MSS + 40.
    timestamps = bool(stcp.get("timestamps")) and bool(rtcp.get("timestamps"))
    options = TIMESTAMP_OPTION_BYTES if timestamps else 0
    header = TCP_IP_HEADER_BYTES + options
    mss = min(stcp["mss"], rtcp["mss"]) - options
    b = 2 if rtcp["delayed_ack"] else 1
    data_ip = mss + header

    # --- path ---
    rtt = effective_rtt_s(links, mss, header)
    # A connection opened without a handshake (tcp.handshake = false) sends at once.
    handshake = header_rtt_s(links) if stcp.get("handshake", True) else 0.0
    # A wlan link's data and ACKs share its medium: its bound counts both.
    per_link_goodput = [
        wlan_goodput_bps(link, mss, b, header)
        if link["wlan"] is not None
        else link_goodput_bps(link["forward"], mss, header)
        for link in links
    ]
    link_bound = min(per_link_goodput)
    bottleneck = per_link_goodput.index(link_bound)
    ack_bound = min(
        (
            ack_path_goodput_bps(link["reverse"], mss, b, header)
            for link in links
            if link["wlan"] is None
        ),
        default=math.inf,
    )
    path_bound = min(link_bound, ack_bound)

    # --- window ---
    scaling = bool(stcp["window_scaling"]) and bool(rtcp["window_scaling"])
    window, window_term = window_limit_bytes(stcp["sndbuf"], rtcp["rcvbuf"], scaling)
    w_eff = window_in_flight_bytes(window, mss, bool(stcp["nagle"]))
    w_bound = window_bound_bps(w_eff, rtt)

    # --- loss ---
    data_pers = [direction_packet_error_rate(d, data_ip) for d in forward]
    ack_pers = [direction_packet_error_rate(d, header) for d in reverse]
    p = path_loss_probability(data_pers)
    p_ack = path_loss_probability(ack_pers)
    t0 = rto_after_first_sample_s(rtt, stcp["min_rto_ns"] / NS_PER_S)
    w_max = max(1, w_eff // mss)
    mathis = pftk = pftk_approx = cubic = loss_bps = None
    pftk_window_limited = None
    if p > 0:
        mathis = mathis_bps(mss, rtt, p, b)
        pftk = pftk_bps(mss, rtt, p, b, w_max, t0, bool(stcp["fast_retransmit"]))
        pftk_approx = pftk_approx_bps(mss, rtt, p, b, w_max, t0)
        pftk_window_limited = pftk_unconstrained_window(p, b) >= w_max
        loss_bps = pftk
        if stcp["cc"] == "cubic":
            cubic = cubic_response_bps(mss, rtt, p, w_max)
            loss_bps = max(pftk, cubic)
        if any(d["error"]["kind"] == "gilbert_elliott" for d in forward):
            notes.append(
                "Gilbert-Elliott losses come in bursts; PFTK takes the mean per-packet loss "
                "as the loss-event rate, which is pessimistic for bursts"
            )
    if p_ack > 0:
        notes.append("ACK losses are not modelled (cumulative ACKs cover them)")

    # --- the binding bound ---
    if p == 0:
        steady, binding = (w_bound, "window") if w_bound <= path_bound else (path_bound, "path")
    else:
        assert loss_bps is not None  # p > 0
        steady, binding = (loss_bps, "loss") if loss_bps <= path_bound else (path_bound, "path")
    if binding == "path":
        binding = "link" if link_bound <= ack_bound else "ack_path"

    # Which sender limit a simulator would see blocking it.
    if binding == "window" or (binding == "loss" and pftk_window_limited):
        limiter = window_term
    elif binding == "loss":
        limiter = "cwnd"
    else:
        # The window exceeds the pipe; the excess waits in the bottleneck queue. If the
        # queue cannot hold it, drop-tail losses make congestion control the limit.
        fwd_b = forward[bottleneck]
        holds = link_bound * rtt / 8.0 + _queue_payload_bytes(
            fwd_b["queue"], mss, direction_wire_bytes(fwd_b, data_ip)
        )
        # An ATM path has no switch: its cells wait in the sender's segmentation queue,
        # which holds whatever the window lets TCP send.
        if binding == "link" and fwd_b["atm"] is None and w_eff > holds:
            limiter = "cwnd"
            notes.append(
                f"window {w_eff} B exceeds pipe + queue of link {bottleneck} "
                f"({holds:.0f} B): drop-tail losses expected, loss-free numbers are optimistic"
            )
        else:
            limiter = window_term
    limited_by = {k: 0.0 for k in ("rwnd", "sndbuf", "cwnd", "app")}
    limited_by[limiter] = 1.0

    # --- time evolution ---
    # Byte counting (RFC 3465) credits both segments of a delayed ACK: doubling again.
    gamma = slow_start_gamma(bool(rtcp["delayed_ack"]) and not bool(stcp.get("abc")))
    iw_bytes = float(stcp["initial_window"] * mss)
    total = float(app["bytes"]) if app["kind"] == "file" else None
    fluid = FluidTransfer(
        start_s=handshake,
        rtt_s=rtt,
        iw_bytes=iw_bytes,
        gamma=gamma,
        cap_bytes=steady * rtt / 8.0,
        rate_bytes_per_s=steady / 8.0,
        total_bytes=total,
    )
    duration = plan["duration_ns"] / NS_PER_S
    done_at = fluid.time_to_deliver(total) if total is not None else None
    completed = total is None or (done_at is not None and done_at <= duration)
    elapsed = done_at if done_at is not None and completed else duration
    if total is not None and completed:
        delivered_total = int(total)
    else:
        delivered_total = math.floor(fluid.delivered(elapsed))

    series = _series(fluid, elapsed, plan["interval_ns"], delivered_total)
    trace = _trace(fluid, elapsed, plan["trace_interval_ns"], rtt, rtcp, scaling)
    goodput = 8.0 * delivered_total / elapsed if elapsed > 0 else 0.0

    file_segments = math.ceil(total / mss) if total is not None else None
    model = {
        "mss_bytes": mss,
        "segments_per_ack": b,
        "rtt_eff_s": rtt,
        "handshake_s": handshake,
        "window_bytes": window,
        "window_limited_by": window_term,
        "window_in_flight_bytes": w_eff,
        "window_bound_bps": w_bound,
        "link_goodput_bps": per_link_goodput,
        "link_bound_bps": link_bound,
        "bottleneck_link": bottleneck,
        "ack_path_bound_bps": ack_bound,
        "data_loss_per_link": data_pers,
        "loss_probability": p,
        "ack_loss_probability": p_ack,
        "rto_s": t0,
        "w_max_segments": w_max,
        "mathis_bps": mathis,
        "pftk_bps": pftk,
        "pftk_approx_bps": pftk_approx,
        "cubic_bps": cubic,
        "pftk_window_limited": pftk_window_limited,
        "steady_goodput_bps": steady,
        "binding": binding,
        "slow_start_gamma": gamma,
        "initial_window_bytes": int(iw_bytes),
        "slow_start_rounds": fluid.ss_rounds,
        "slow_start_bytes": fluid.ss_bytes,
        "slow_start_end_s": fluid.ss_end_s,
        "file_segments": file_segments,
        # Whole slow-start rounds for the file, when it ends before the window is capped.
        "file_slow_start_rounds": (
            slow_start_rounds(file_segments, stcp["initial_window"], gamma)
            if file_segments is not None and total is not None and total <= fluid.ss_bytes
            else None
        ),
        "notes": notes,
    }

    summary = rows.Summary(
        goodput_bps=goodput,
        elapsed_s=elapsed,
        bytes_delivered=delivered_total,
        bytes_written=int(total) if total is not None and completed else None,
        completed=completed,
        events=0,
        limited_by=limited_by,
        # Hosts whose work costs nothing (the only kind accepted): no CPU time, no ring drops.
        cpu_utilisation=0.0,
        counts=rows.Counts(ring_drops=0),
        backend=("model", model),
    )
    flow = rows.FlowRow(
        flow=0,
        src=sender["name"],
        dst=receiver["name"],
        goodput_bps=goodput,
        bytes_delivered=delivered_total,
        sender=rows.SenderState(
            srtt_s=rtt, min_rtt_s=rtt, final_cwnd_bytes=int(fluid.cwnd(elapsed))
        ),
        completed_s=elapsed if total is not None and completed else None,
    )
    return rows.Result(
        summary=summary,
        flows=[flow],
        hosts=[
            rows.HostRow(host["name"], cpu_utilisation=0.0, ring_drops=0)
            for host in (sender, receiver)
        ],
        links=_link_rows(links, delivered_total, mss, header, b, elapsed),
        series=series,
        trace=trace,
    ).to_dict()


def _link_rows(
    links: Sequence[Mapping[str, Any]],
    delivered: int,
    mss: int,
    header: int,
    b: int,
    elapsed_s: float,
) -> list[rows.LinkRow]:
    """Per link direction: only the utilisation is modelled.

    Forward: the data segments that carried the delivered bytes; reverse: one ACK per b
    of them. Retransmissions, handshake segments and queue behaviour are not counted, so
    counts, drops and queue peaks are None.
    """
    segments = math.ceil(delivered / mss)
    out = []
    for i, link in enumerate(links):
        for name, count, ip in (
            ("forward", segments, mss + header),
            ("reverse", math.ceil(segments / b), header),
        ):
            busy = count * send_s(link, name, ip)
            out.append(rows.LinkRow(i, name, busy / elapsed_s if elapsed_s > 0 else 0.0))
    return out


def _series(
    fluid: FluidTransfer, elapsed_s: float, interval_ns: int, final_bytes: int
) -> dict[str, list[Any]]:
    """Bytes delivered per interval, stamped with each interval's end; last partial kept.

    Cumulative counts are floored to whole bytes and differenced, so the intervals add up
    to exactly ``final_bytes``.
    """
    ends: list[float] = []
    i = 1
    while i * interval_ns < elapsed_s * NS_PER_S:
        ends.append(i * interval_ns / NS_PER_S)
        i += 1
    ends.append(elapsed_s)
    cumulative = [math.floor(fluid.delivered(t)) for t in ends[:-1]] + [final_bytes]
    per_interval = [c - prev for c, prev in zip(cumulative, [0, *cumulative[:-1]], strict=True)]
    return {"t_s": ends, "interval_bytes": per_interval}


def _trace(
    fluid: FluidTransfer,
    elapsed_s: float,
    trace_interval_ns: int,
    rtt_s: float,
    rtcp: Mapping[str, Any],
    scaling: bool,
) -> dict[str, list[Any]]:
    """Sender state every trace interval up to the end, from the fluid evolution."""
    rwnd = rtcp["rcvbuf"] if scaling else min(rtcp["rcvbuf"], MAX_UNSCALED_WINDOW_BYTES)
    out = rows.empty_trace()
    i = 1
    while i * trace_interval_ns <= elapsed_s * NS_PER_S:
        t = i * trace_interval_ns / NS_PER_S
        cwnd = int(fluid.cwnd(t))
        remaining = (
            math.inf if fluid.total_bytes is None else fluid.total_bytes - fluid.delivered(t)
        )
        flowing = fluid.start_s <= t and remaining > 0
        out["flow"].append(0)
        out["segment"].append(0)
        out["t_s"].append(t)
        out["cwnd_bytes"].append(cwnd)
        # The loss-free evolution never leaves slow start by a loss.
        out["ssthresh_bytes"].append(rows.SSTHRESH_INFINITE_BYTES)
        # srtt is 0 until the handshake gives the first sample (result contract).
        out["srtt_s"].append(rtt_s if t >= fluid.start_s else 0.0)
        out["flight_bytes"].append(int(min(cwnd, remaining)) if flowing else 0)
        out["rwnd_bytes"].append(rwnd)
        out["acked_bytes"].append(int(fluid.delivered(t)))
        # The fluid evolution has no losses to count; the model's retransmits are not traced.
        out["retransmits"].append(None)
        i += 1
    return out
