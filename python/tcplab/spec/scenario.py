"""A whole scenario ([Spec]) and the checks that involve several of its tables."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from tcplab.analytic.framing import (
    ENCAPSULATIONS,
)
from tcplab.shared import TCP_IP_HEADER_BYTES
from tcplab.spec.apps import App
from tcplab.spec.atm import Abr
from tcplab.spec.fields import Name, PositiveDuration, StrictModel
from tcplab.spec.hosts import Host
from tcplab.spec.links import Link
from tcplab.spec.sweep import Sweep
from tcplab.spec.topology import Flow, Pep, Router
from tcplab.spec.trace import LINK_PATH, Trace


def _default_hosts() -> list[Host]:
    return [Host(name="client"), Host(name="server")]


# Most repetitions of one scenario: each is a whole run, and their results are all kept.
MAX_REPETITIONS = 10_000


class Spec(StrictModel):
    """A whole scenario: who talks, over which path, for how long."""

    name: Name = Field("scenario", description="default: the scenario file's name")
    backend: Literal["sim", "model", "emu"] = "sim"
    duration: PositiveDuration = Field("60s", validate_default=True)
    seed: int = Field(1, ge=0, le=2**63 - 1)
    repetitions: int = Field(1, ge=1, le=MAX_REPETITIONS)
    interval: PositiveDuration = Field(
        "1s", validate_default=True, description="period of the per-interval series"
    )
    trace_interval: PositiveDuration = Field(
        "10ms", validate_default=True, description="period of cwnd/srtt samples"
    )
    hosts: list[Host] = Field(
        default_factory=_default_hosts,
        description="without [[flows]], exactly two: sender first, receiver last",
    )
    routers: list[Router] = Field(
        default_factory=list, description="with [[flows]]: the nodes between links"
    )
    links: list[Link] = Field(
        default_factory=list,
        validate_default=True,
        description="the path, sender to receiver; with [[flows]], each names its nodes",
    )
    app: App = Field(default_factory=App)
    flows: list[Flow] | None = Field(
        None, description="several connections, each between two hosts, over the links"
    )
    trace: Trace | None = Field(None, description="packet captures (sim backend)")
    # None rather than an empty list, so that scenarios without PEPs hash as before.
    peps: list[Pep] | None = Field(
        None, description="split-connection proxies between links (sim and emu backends)"
    )
    abr: Abr | None = Field(
        None, description="ABR source parameters of VCs crossing a switch with feedback"
    )
    sweep: Sweep | None = Field(None, description="run the scenario over a grid of field values")

    @field_validator("hosts")
    @classmethod
    def _distinct_hosts(cls, hosts: list[Host]) -> list[Host]:
        if len(hosts) < 2:
            raise ValueError(
                f"exactly 2 hosts without [[flows]] (the first sends, the last receives),"
                f" at least 2 with them; {len(hosts)} given"
            )
        first: dict[str, int] = {}
        for index, host in enumerate(hosts):
            if host.name in first:
                raise ValueError(
                    f"host name {host.name!r} is used twice "
                    f"(hosts.{first[host.name]}.name and hosts.{index}.name)"
                )
            first[host.name] = index
        return hosts

    @field_validator("trace")
    @classmethod
    def _captured_links_exist(cls, trace: Trace | None, info: ValidationInfo) -> Trace | None:
        links, hosts = info.data.get("links"), info.data.get("hosts")
        if trace is None or links is None or hosts is None:
            return trace  # invalid links or hosts are reported on their own
        names = [host.name for host in hosts]
        problems = []
        for index, path in enumerate(trace.pcap):
            link = int(path.split(".")[1]) if LINK_PATH.fullmatch(path) else None
            if link is not None and link >= len(links):
                problems.append(
                    (index, path, f"there is no link {link}; the path has {len(links)}")
                )
            elif link is None and path not in names:
                problems.append(
                    (
                        index,
                        path,
                        f"{path!r} is neither a link path (links.N, links.N.forward,"
                        f" links.N.reverse) nor a host; hosts: {', '.join(names)}",
                    )
                )
            elif path in trace.pcap[:index]:
                problems.append((index, path, f"{path} is listed twice"))
        if problems:
            # Raised as a ValidationError so that each problem is located on its own entry,
            # trace.pcap.N, like a problem found by the entry's own validator.
            raise ValidationError.from_exception_data(
                "Trace",
                [
                    InitErrorDetails(
                        type=PydanticCustomError("value_error", "{error}", {"error": message}),
                        loc=("pcap", index),
                        input=path,
                    )
                    for index, path, message in problems
                ],
            )
        return trace

    @model_validator(mode="after")
    def _abr_over_atm(self) -> Spec:
        if self.abr is not None and not any(link.kind == "atm" for link in self.links):
            raise ValueError('abr: ABR VCs run over ATM links (kind = "atm"), and no link is one')
        return self

    @field_validator("links")
    @classmethod
    def _at_least_one_link(cls, links: list[Link]) -> list[Link]:
        if not links:
            raise ValueError("at least one link is required")
        return links

    @model_validator(mode="after")
    def _who_talks_to_whom(self) -> Spec:
        # Problems that involve several fields name their field in the message itself.
        problems = _topology_problems(self) + _wlan_problems(self) + _pep_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def flow_apps(self) -> list[App]:
        """Each flow's app (the scenario's [app] where a flow gives none)."""
        return [flow.app or self.app for flow in self.flows or []]


def _topology_problems(spec: Spec) -> list[str]:
    """Cross-field checks: hosts, routers, links and flows agree."""
    hosts = [h.name for h in spec.hosts]
    problems = _mtu_problems(spec)
    if not spec.flows:
        if len(hosts) != 2:
            problems.append(
                f"hosts: exactly 2 hosts without [[flows]] (the first sends, the last"
                f" receives); {len(hosts)} given: add [[flows]] to say who talks to whom"
            )
        if spec.routers:
            problems.append("routers: only with [[flows]]; a path's routers sit between links")
        problems += [
            f"links.{i}.between: only with [[flows]]"
            for i, link in enumerate(spec.links)
            if link.between is not None
        ]
        return problems
    # A PEP is a node that links name too (its own problems are _pep_problems').
    nodes = set(hosts) | {pep.name for pep in spec.peps or ()}
    atm_switches = {r.name for r in spec.routers if r.switch is not None}
    for i, router in enumerate(spec.routers):
        if router.name in nodes:
            problems.append(f"routers.{i}.name: {router.name!r} is already a host or router")
        nodes.add(router.name)
    if spec.app.direction not in (None, "upstream"):
        problems.append(
            "app.direction: with [[flows]], a message goes from src to dst; give each leg"
            " its own flow and start the second with `after`"
        )
    for i, link in enumerate(spec.links):
        if link.between is None:
            problems.append(f"links.{i}.between: required with [[flows]]")
            continue
        for j, name in enumerate(link.between):
            if name not in nodes:
                problems.append(f"links.{i}.between.{j}: {name!r} is not a host or router")
        if link.between[0] == link.between[1]:
            problems.append(f"links.{i}.between: a link joins two different nodes")
        switches = [name for name in link.between if name in atm_switches]
        if switches and link.kind != "atm":
            problems.append(f'links.{i}.kind: joins ATM switch {switches[0]!r}, so "atm"')
    sized = ("file", "message")
    apps = spec.flow_apps()
    host_names = set(hosts)
    for i, flow in enumerate(spec.flows):
        for field in ("src", "dst"):
            if getattr(flow, field) not in host_names:
                problems.append(f"flows.{i}.{field}: {getattr(flow, field)!r} is not a host")
        if flow.src == flow.dst:
            problems.append(f"flows.{i}.dst: a flow joins two different hosts")
        if flow.app is not None and flow.app.direction not in (None, "upstream"):
            problems.append(
                f"flows.{i}.app.direction: a message goes from src to dst; give each leg its"
                " own flow and start the second with `after`"
            )
        if apps[i].parallel is not None:
            problems.append(
                f"flows.{i}.app.parallel: with [[flows]], give each connection its own flow"
            )
        if apps[i].kind == "media":
            problems.append(
                f"flows.{i}.app.kind: media streams run on the path form (no [[flows]]),"
                " where each stream is its own flow"
            )
        if flow.after is not None and flow.start_jitter:
            problems.append(
                f"flows.{i}.start_jitter: a flow that opens `after` another has no start "
                "time to jitter"
            )
        if flow.after is not None and (flow.after >= i or apps[flow.after].kind not in sized):
            problems.append(
                f"flows.{i}.after: must be the index of an earlier file or message flow"
            )
    return problems


def _wlan_problems(spec: Spec) -> list[str]:
    """Links on one medium share one access point and the medium's own settings, and join
    it to different stations."""
    problems = []
    # Per medium: the first link on it, its AP node and its station node.
    first: dict[tuple[str, str | int], tuple[int, str | int, str | int]] = {}
    for i, link in enumerate(spec.links):
        if link.kind != "wlan":
            continue
        wlan = link.wlan_settings()
        # Nodes by name with [[flows]], else by position along the path.
        ends: tuple[str | int, str | int] = (
            (link.between[0], link.between[1]) if link.between else (i, i + 1)
        )
        ap, station = ends if wlan.ap == "first" else ends[::-1]
        key = ("named", wlan.medium) if wlan.medium is not None else ("ap", ap)
        if key not in first:
            first[key] = (i, ap, station)
            continue
        j, other_ap, other_station = first[key]
        other = spec.links[j].wlan_settings()
        if other_ap != ap:
            problems.append(
                f"links.{i}.wlan.medium: medium {wlan.medium!r} already has the access point"
                f" of links.{j}; a medium has one"
            )
        elif other_station == station:
            problems.append(
                f"links.{i}: the station is already associated with this access point by links.{j}"
            )
        for name in _MEDIUM_SETTINGS:
            if getattr(wlan, name) != getattr(other, name):
                problems.append(
                    f"links.{i}.wlan.{name}: the medium's setting, which must equal that of"
                    f" links.{j} on the same medium"
                )
    return problems


def _mtu_problems(spec: Spec) -> list[str]:
    """A host's segments must fit the encapsulation of each ATM link it sends on: every link
    of a path, or a host's own links with [[flows]] (the simulator checks whole routes)."""
    problems = []
    index_of = {host.name: index for index, host in enumerate(spec.hosts)}
    for i, link in enumerate(spec.links):
        if link.kind != "atm":
            continue
        mtu = ENCAPSULATIONS[link.encapsulation or "llc-snap"].mtu
        ends = (
            range(len(spec.hosts))
            if not spec.flows
            else sorted({index_of[name] for name in link.between or () if name in index_of})
        )
        for index in ends:
            host = spec.hosts[index]
            if host.tcp.mss + TCP_IP_HEADER_BYTES > mtu:
                problems.append(
                    f"hosts.{index}.tcp.mss: {host.tcp.mss} + {TCP_IP_HEADER_BYTES} bytes of"
                    f" TCP/IP headers exceed the {mtu}-byte MTU of links.{i}"
                    f" ({link.encapsulation or 'llc-snap'}); at most {mtu - TCP_IP_HEADER_BYTES}"
                )
    return problems


_MEDIUM_SETTINGS = ("ack_rate", "preamble", "retry_limit", "ap_queue")


def _pep_problems(spec: Spec) -> list[str]:
    """PEPs sit between two links: at a position of the path, or at a node links name."""
    problems = []
    taken = {h.name for h in spec.hosts} | {r.name for r in spec.routers}
    positions: dict[int, int] = {}
    for i, pep in enumerate(spec.peps or ()):
        if pep.name in taken:
            problems.append(f"peps.{i}.name: {pep.name!r} is already a host, router or PEP")
        taken.add(pep.name)
        if spec.flows:
            if pep.after_link is not None:
                problems.append(
                    f"peps.{i}.after_link: only without [[flows]]; with them, name the PEP in"
                    " the `between` of the links it joins"
                )
            elif not any(pep.name in (link.between or ()) for link in spec.links):
                problems.append(f"peps.{i}.name: no link's `between` names {pep.name!r}")
            continue
        last = len(spec.links) - 2
        if pep.after_link is None:
            problems.append(
                f"peps.{i}.after_link: required without [[flows]]: the PEP sits between links"
                " after_link and after_link + 1"
            )
        elif pep.after_link > last:
            problems.append(
                f"peps.{i}.after_link: {pep.after_link} has no link after it; the path's"
                f" links are 0 to {len(spec.links) - 1}, so 0 to {last}"
                if last >= 0
                else f"peps.{i}.after_link: a PEP needs a link on each side; the path has one"
            )
        elif pep.after_link in positions:
            problems.append(
                f"peps.{i}.after_link: peps.{positions[pep.after_link]} already sits after"
                f" link {pep.after_link}"
            )
        else:
            positions[pep.after_link] = i
    # An rr flow carries data both ways, and a media stream's messages are timed at its
    # destination's receiver; the topology form's flows are checked on their routes by the
    # simulator.
    if spec.peps and not spec.flows and spec.app.kind in ("rr", "media"):
        problems.append(
            f"app.kind: a PEP relays one-way transfers (bulk, file, message), not {spec.app.kind!r}"
        )
    return problems
