#!/usr/bin/env python3
"""Run one tcplab plan in ns-3 3.44 (PyPI `ns3`, cppyy bindings) and print the result as JSON.

Run it with bench/.venv-ns3/bin/python (bench/setup-ns3.sh creates that venv):

    bench/.venv-ns3/bin/python bench/ns3_peer.py plan.json [--verbose] [--trace]
    ... | bench/.venv-ns3/bin/python bench/ns3_peer.py -      # plan on stdin
    ... | bench/.venv-ns3/bin/python bench/ns3_peer.py --serve  # one plan per line

The plan is tcplab's resolved plan (docs/internals/plan-and-result.md). This script builds
the ns-3 scenario that means the same thing, mirroring tcplab's semantics:

- hosts[0] sends to hosts[-1]; links[i] is a point-to-point link between node i and i+1,
  the nodes between the two hosts being routers (global routing).
- Each link direction has its own rate, drop-tail queue at its transmit side and error
  model at its receiving device. ns-3 p2p channels have a single propagation delay, so
  the two directions of a link must have the same delay_ns.
- Goodput counts the bytes the receiving application (PacketSink) read.

Output (stdout, one JSON object): goodput_bps, elapsed_s, bytes_delivered, bytes_written,
completed, segments_sent, retransmits, fast_retransmits, timeouts, series {t_s,
interval_bytes}, links [...], events, wall_s_import, warm (an earlier plan of this process
paid the import), wall_s_run and cpu_s_run (Simulator::Run only), wall_s_total, settings [[scope,
attribute, value, why], ...], warnings [...], and trace {...} with --trace. Exit status 2
for a plan ns-3 cannot mirror.

retransmits counts the sender's "Retransmission" trace; fast_retransmits counts entries
into CA_RECOVERY; timeouts counts expiries of the retransmission timer (each doubles RTO).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

# Start of wall_s_total. The standard-library imports above cost milliseconds; the import
# that costs seconds (the cppyy bindings, `from ns import ns`) is timed on its own.
_T_START = time.perf_counter()

SINK_PORT = 5000

# ns-3 congestion-control TypeIds for tcplab's plan names. TcpNewReno is RFC 5681/6582:
# one MSS per ACK in slow start (no ABC), MSS*MSS/cwnd per ACK in congestion avoidance.
CC_TYPES = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "hybla": "ns3::TcpHybla",
}

# Algorithm attributes set so that ns-3's algorithm is tcplab's (docs/models/tcp.md), as
# (attribute, value kind, value, why). Each is set with Config::SetDefault, which reaches
# the algorithm object that TcpL4Protocol::SocketType creates for every socket.
CC_ATTRIBUTES: dict[str, list[tuple[str, str, Any, str]]] = {
    "ns3::TcpNewReno": [],
    "ns3::TcpCubic": [
        # HyStart itself follows the plan's `hystart` (see cc_attributes).
        ("TcpCubic::FastConvergence", "bool", True, "RFC 9438 section 4.7, as tcplab"),
        ("TcpCubic::TcpFriendliness", "bool", True, "Reno-friendly region, RFC 9438 4.3"),
        ("TcpCubic::C", "double", 0.4, "RFC 9438 C, as tcplab"),
        ("TcpCubic::Beta", "double", 0.7, "RFC 9438 beta_cubic, as tcplab"),
    ],
    "ns3::TcpHybla": [
        (
            "TcpHybla::RRTT",
            "time",
            25_000_000,
            "reference RTT of the paper and Linux, as tcplab (ns-3 default 50 ms)",
        ),
    ],
}


def cc_attributes(cc_type: str, tcp: dict[str, Any]) -> list[tuple[str, str, Any, str]]:
    """CC_ATTRIBUTES for one ns-3 algorithm, with TcpCubic's HyStart from the plan's
    `hystart`. ns-3's is the 2008 HyStart (ack trains and delay), tcplab's HyStart++ (RFC
    9406): only `hystart = false` makes the two alike, and check_plan warns otherwise."""
    rows = list(CC_ATTRIBUTES.get(cc_type, []))
    if cc_type == "ns3::TcpCubic":
        on = bool(tcp.get("hystart", False))
        rows.insert(0, ("TcpCubic::HyStart", "bool", on, "plan hystart (ns-3 default on)"))
    return rows


# Whether ns-3's algorithm counts bytes in slow start, i.e. what tcplab's `abc` must be
# for the two to grow alike. TcpNewReno adds one MSS per ACK; TcpCubic adds
# segmentsAcked*MSS per ACK (its comment: an approximation of Linux's quick ACKs), which
# is tcplab's abc (L = 2 SMSS) whenever an ACK covers at most two segments, as every
# delayed ACK does; TcpHybla adds 2^rho - 1 segments per ACK whatever it covers, as tcplab
# does with or without abc.
NS3_SLOW_START_COUNTS_BYTES = {"newreno": False, "cubic": True}

# C++ side of the run. Trace sinks are C++ because a Python callable invoked per packet
# through cppyy is both slow and unreliable (the bindings cannot always wrap it), and the
# sender is C++ because BulkSendApplication only writes whole SendSize chunks, which would
# leave up to SendSize-1 bytes of a 32 KiB send buffer unused.
_CPP = r"""
#include <algorithm>
#include <vector>

namespace tcplab_peer {
using namespace ns3;

struct LinkDirCounters {
    uint64_t txPackets = 0;
    uint64_t txBytes = 0;
    uint64_t dropsQueue = 0;
    uint64_t dropsError = 0;
    uint64_t maxQueueBytes = 0;  // device queue plus the packet being serialized
    uint32_t inService = 0;      // bytes of the packet on the wire, 0 when idle
    Ptr<Queue<Packet>> queue;
};

struct Run {
    // receiver
    uint64_t intervalNs = 1000000000ULL;
    std::vector<uint64_t> bins;
    uint64_t delivered = 0;
    uint64_t target = 0;       // file app: stop once this many bytes were read; 0 = bulk
    int64_t doneNs = -1;
    // sender
    Ptr<Socket> sender;
    Address remote;
    uint64_t toWrite = 0;      // 0 = unlimited (bulk)
    uint64_t written = 0;
    bool closed = false;
    uint64_t segmentsSent = 0;
    uint64_t retransmits = 0;
    uint64_t fastRecoveries = 0;
    uint64_t timeouts = 0;
    // latest sender state, for the sampled trace
    uint32_t cwnd = 0, ssthresh = 0, flight = 0, rwnd = 0;
    int64_t srttNs = 0;
    double rho = -1.0;         // TcpHybla's rho, the last value it traced; -1 = other cc
    uint64_t traceIntervalNs = 0;
    std::vector<double> trT;
    std::vector<uint32_t> trCwnd, trSsthresh, trFlight, trRwnd;
    std::vector<double> trSrtt;
    std::vector<LinkDirCounters> links;  // index 2*i = forward of link i, 2*i+1 reverse
};

Run g;
int64_t fixRhoRttNs = 0;  // TcpHybla::RRTT in ns when the rho diagnostic is on, else 0

void Reset(uint64_t intervalNs, uint64_t durationNs, uint64_t target, uint64_t toWrite,
           uint64_t traceIntervalNs, uint32_t nLinkDirs) {
    g = Run();
    fixRhoRttNs = 0;
    g.intervalNs = intervalNs;
    g.bins.assign((durationNs + intervalNs - 1) / intervalNs, 0);
    g.target = target;
    g.toWrite = toWrite;
    g.traceIntervalNs = traceIntervalNs;
    g.links.resize(nLinkDirs);
}

// --- receiver -------------------------------------------------------------------------
void OnSinkRx(Ptr<const Packet> p, const Address&) {
    uint64_t now = Simulator::Now().GetNanoSeconds();
    uint64_t bin = now / g.intervalNs;
    if (bin >= g.bins.size()) {
        bin = g.bins.size() - 1;
    }
    g.bins[bin] += p->GetSize();
    g.delivered += p->GetSize();
    if (g.target > 0 && g.doneNs < 0 && g.delivered >= g.target) {
        g.doneNs = (int64_t)now;
        Simulator::Stop();
    }
}

void HookSink(Ptr<Application> app) {
    app->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
}

// --- sender: writes whatever the send buffer has room for ---------------------------
void Fill(Ptr<Socket> s, uint32_t) {
    while (!g.closed) {
        uint64_t room = s->GetTxAvailable();
        if (g.toWrite > 0) {
            room = std::min<uint64_t>(room, g.toWrite - g.written);
        }
        if (room == 0) {
            break;
        }
        int sent = s->Send(Create<Packet>((uint32_t)room));
        if (sent <= 0) {
            break;
        }
        g.written += (uint64_t)sent;
    }
    if (g.toWrite > 0 && g.written >= g.toWrite && !g.closed) {
        g.closed = true;
        s->Close();
    }
}

// --- diagnostic: TcpHybla's rho -------------------------------------------------------
// TcpHybla recomputes rho only in PktsAcked when the RTT it is handed (the SRTT) equals the
// minimum SRTT. The handshake's sample sets that minimum, and every data sample is larger
// (serialization, delayed ACKs), so rho stays at its initial 1 for the whole run. With
// fixRhoRttNs > 0 the connected callback sets rho once to what TcpHybla::RecalcParam would
// compute from that minimum: max(whole ms of minimum RTT / whole ms of RRTT, 1). rho is
// private; an explicit template instantiation may name a private member (C++ exempts
// explicit instantiations from access checks), which is how the pointer to it is taken.
template <typename Tag, typename Tag::type Member>
struct Expose {
    friend typename Tag::type MemberOf(Tag) { return Member; }
};
struct HyblaRho {
    using type = TracedValue<double> TcpHybla::*;
    friend type MemberOf(HyblaRho);
};
template struct Expose<HyblaRho, &TcpHybla::m_rho>;

void FixHyblaRho(Ptr<Socket> s) {
    PointerValue ops;
    s->GetAttribute("CongestionOps", ops);
    Ptr<TcpHybla> hybla = DynamicCast<TcpHybla>(ops.Get<TcpCongestionOps>());
    if (!hybla || g.srttNs <= 0) {
        return;
    }
    // At connection the SRTT is the handshake's sample, the minimum SRTT of the run.
    double minMs = (double)(g.srttNs / 1000000);
    double refMs = (double)(fixRhoRttNs / 1000000);
    PeekPointer(hybla)->*MemberOf(HyblaRho()) = std::max(minMs / refMs, 1.0);
}

void OnConnected(Ptr<Socket> s) {
    if (fixRhoRttNs > 0) {
        FixHyblaRho(s);
    }
    Fill(s, s->GetTxAvailable());
}
void OnConnectFailed(Ptr<Socket>) {}

void OnTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
    if (p->GetSize() > 0) {
        g.segmentsSent++;
    }
}
void OnRetx(Ptr<const Packet> p, const TcpHeader&, const Address&, const Address&,
            Ptr<const TcpSocketBase>) {
    g.retransmits++;
}
void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
    if (now == TcpSocketState::CA_RECOVERY) {
        g.fastRecoveries++;
    }
}
// Every expiry of the retransmission timer doubles RTO (TcpSocketBase::ReTxTimeout, capped
// at 60 s), while recomputations from SRTT/RTTVAR practically never double it exactly; a
// CA_LOSS count would miss a timeout repeated while already in CA_LOSS.
void OnRto(Time before, Time after) {
    if (before.IsStrictlyPositive() &&
        (after == before + before || (after == Seconds(60) && before >= Seconds(30)))) {
        g.timeouts++;
    }
}
void OnCwnd(uint32_t, uint32_t v) { g.cwnd = v; }
void OnSsthresh(uint32_t, uint32_t v) { g.ssthresh = v; }
void OnFlight(uint32_t, uint32_t v) { g.flight = v; }
void OnRwnd(uint32_t, uint32_t v) { g.rwnd = v; }
void OnSrtt(Time, Time v) { g.srttNs = v.GetNanoSeconds(); }
void OnRho(double, double v) { g.rho = v; }

void Sample() {
    g.trT.push_back(Simulator::Now().GetSeconds());
    g.trCwnd.push_back(g.cwnd);
    g.trSsthresh.push_back(g.ssthresh);
    g.trFlight.push_back(g.flight);
    g.trRwnd.push_back(g.rwnd);
    g.trSrtt.push_back(g.srttNs / 1e9);
    Simulator::Schedule(NanoSeconds(g.traceIntervalNs), &Sample);
}

void Connect(Ptr<Socket> s) { s->Connect(g.remote); }

void ConnectTo(Ptr<Socket> s, Ipv4Address dst, uint16_t port) {
    s->Connect(InetSocketAddress(dst, port));
}

// One bulk sender of a plan with several flows: its counters add to the run's, it fills
// its own send buffer, and it connects at t = 0 (no cwnd trace: that follows one sender).
void ArmFlow(Ptr<Socket> s, Ipv4Address dst, uint16_t port) {
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    s->SetConnectCallback(MakeCallback(&OnConnected), MakeCallback(&OnConnectFailed));
    s->SetSendCallback(MakeCallback(&Fill));
    s->Bind();
    Simulator::Schedule(Seconds(0), &ConnectTo, s, dst, port);
}

// Hooks the sender socket (created before Run, so no "just after t = 0" dance) and
// connects it at t = 0, the time tcplab's application starts.
void ArmSender(Ptr<Socket> s, Ipv4Address dst, uint16_t port) {
    g.sender = s;
    g.remote = InetSocketAddress(dst, port);
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetx));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthresh));
    s->TraceConnectWithoutContext("BytesInFlight", MakeCallback(&OnFlight));
    s->TraceConnectWithoutContext("RWND", MakeCallback(&OnRwnd));
    s->TraceConnectWithoutContext("RTT", MakeCallback(&OnSrtt));
    // Hybla's rho decides its growth; which value ns-3 used is worth reporting.
    PointerValue ops;
    s->GetAttribute("CongestionOps", ops);
    Ptr<TcpCongestionOps> cc = ops.Get<TcpCongestionOps>();
    if (cc && cc->TraceConnectWithoutContext("Rho", MakeCallback(&OnRho))) {
        g.rho = 1.0;  // TcpHybla's initial value, until it recomputes rho
    }
    s->SetConnectCallback(MakeCallback(&OnConnected), MakeCallback(&OnConnectFailed));
    s->SetSendCallback(MakeCallback(&Fill));
    s->Bind();
    Simulator::Schedule(Seconds(0), &Connect, s);
    if (g.traceIntervalNs > 0) {
        Simulator::Schedule(NanoSeconds(g.traceIntervalNs), &Sample);
    }
}

// --- links ------------------------------------------------------------------------------
void OnPhyTxBegin(uint32_t k, Ptr<const Packet> p) {
    LinkDirCounters& c = g.links[k];
    c.txPackets++;
    c.txBytes += p->GetSize();
    c.inService = p->GetSize();
    uint64_t occ = c.queue->GetNBytes() + c.inService;
    c.maxQueueBytes = std::max(c.maxQueueBytes, occ);
}
void OnPhyTxEnd(uint32_t k, Ptr<const Packet>) { g.links[k].inService = 0; }
void OnEnqueue(uint32_t k, Ptr<const Packet>) {
    LinkDirCounters& c = g.links[k];
    uint64_t occ = c.queue->GetNBytes() + c.inService;
    c.maxQueueBytes = std::max(c.maxQueueBytes, occ);
}
void OnQueueDrop(uint32_t k, Ptr<const Packet>) { g.links[k].dropsQueue++; }
void OnErrorDrop(uint32_t k, Ptr<const Packet>) { g.links[k].dropsError++; }

// k: link direction index; tx: its transmitting device; rx: its receiving device.
void HookLinkDir(uint32_t k, Ptr<PointToPointNetDevice> tx, Ptr<PointToPointNetDevice> rx) {
    Ptr<Queue<Packet>> q = tx->GetQueue();
    g.links[k].queue = q;
    tx->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnPhyTxBegin, k));
    tx->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&OnPhyTxEnd, k));
    q->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnEnqueue, k));
    q->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnQueueDrop, k));
    rx->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&OnErrorDrop, k));
}

// Ipv4AddressHelper::Assign installs FqCoDel only on devices with a NetDeviceQueueInterface,
// which DisableFlowControl leaves out; remove any root queue disc all the same, so the
// device's drop-tail queue is the only queue whatever the helper did. Returns how many
// were removed.
uint32_t RemoveQueueDiscs(NetDeviceContainer devs) {
    uint32_t removed = 0;
    for (uint32_t i = 0; i < devs.GetN(); i++) {
        Ptr<NetDevice> d = devs.Get(i);
        Ptr<TrafficControlLayer> tc = d->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(d)) {
            tc->DeleteRootQueueDiscOnDevice(d);
            removed++;
        }
    }
    return removed;
}

// Small accessors: reading std::vector<uint64_t> element by element through cppyy is
// fine at these sizes, but plain getters keep the Python side free of template types.
void SetFixHyblaRho(int64_t rrttNs) { fixRhoRttNs = rrttNs; }
uint64_t NBins() { return g.bins.size(); }
uint64_t Bin(uint64_t i) { return g.bins[i]; }
}  // namespace tcplab_peer
"""


class Unsupported(Exception):
    """The plan asks for something ns-3 cannot mirror faithfully."""


def load_plan(arg: str) -> dict[str, Any]:
    if arg == "-":
        return json.load(sys.stdin)
    with open(arg) as fh:
        return json.load(fh)


def fmt_ns(ns_value: int) -> str:
    """Nanoseconds as a readable ns-3 style time string for the settings table."""
    if ns_value % 1_000_000_000 == 0:
        return f"{ns_value // 1_000_000_000}s"
    if ns_value % 1_000_000 == 0:
        return f"{ns_value // 1_000_000}ms"
    if ns_value % 1_000 == 0:
        return f"{ns_value // 1_000}us"
    return f"{ns_value}ns"


def fmt_rate(bps: int) -> str:
    for unit, div in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps % div == 0:
            return f"{bps // div}{unit}"
    return f"{bps}bps"


def queue_size_for_ns3(queue: dict[str, int], ip_bytes: int) -> tuple[str, str]:
    """The ns-3 DropTailQueue MaxSize holding what tcplab's queue limit holds.

    Neither counts the packet being serialized (tcplab's plan contract; ns-3's
    PointToPointNetDevice dequeues a packet before transmitting it), so a packet limit
    carries over as it is. A tcplab byte limit counts IP bytes while ns-3's device queue
    sees frames with the 2-byte PPP header, so a byte limit is converted through the number
    of full-size packets it holds (`ip_bytes` = MSS + 40). Returns (QueueSize string,
    explanation)."""
    frame = ip_bytes + 2
    if "packets" in queue:
        n = int(queue["packets"])
        return f"{n}p", f"tcplab {n} packets waiting"
    if "bytes" in queue:
        b = int(queue["bytes"])
        full = max(b // ip_bytes, 1)
        return (
            f"{full * frame}B",
            f"tcplab {b} B of IP = {full} x {ip_bytes} B -> {full} x {frame} B frames",
        )
    raise Unsupported(f"queue {queue!r}: expected {{'packets': N}} or {{'bytes': N}}")


def tcp_attributes(tcp: dict[str, Any]) -> list[tuple[str, Any, str, str]]:
    """ns-3 socket attributes for one host's plan `tcp` block.

    Returns (attribute, value kind, value, why). Attribute names are relative to
    ns3::TcpSocket / ns3::TcpSocketBase (the same names work for Config::SetDefault with
    the class prefix and for Object::SetAttribute on a socket)."""
    delayed = bool(tcp.get("delayed_ack", True))
    fast_rtx = bool(tcp.get("fast_retransmit", True))
    return [
        (
            "TcpSocket::SegmentSize",
            "uint",
            int(tcp["mss"]),
            "payload bytes; with timestamps off, IP packet = MSS + 40",
        ),
        ("TcpSocket::SndBufSize", "uint", int(tcp["sndbuf"]), "plan sndbuf"),
        ("TcpSocket::RcvBufSize", "uint", int(tcp["rcvbuf"]), "plan rcvbuf"),
        (
            "TcpSocket::InitialCwnd",
            "uint",
            int(tcp["initial_window"]),
            "segments (ns-3 default 10)",
        ),
        ("TcpSocket::InitialSlowStartThreshold", "uint", 2**32 - 1, "'infinite', as tcplab"),
        (
            "TcpSocket::DelAckCount",
            "uint",
            2 if delayed else 1,
            "ACK every 2nd segment" if delayed else "delayed ACKs off: ACK every segment",
        ),
        (
            "TcpSocket::DelAckTimeout",
            "time",
            int(tcp.get("delack_timeout_ns", 200_000_000)),
            "plan delack_timeout_ns",
        ),
        (
            "TcpSocket::TcpNoDelay",
            "bool",
            not bool(tcp.get("nagle", True)),
            "Nagle on in plan => NoDelay false (ns-3 default is true)",
        ),
        (
            "TcpSocket::DataRetries",
            "uint",
            1_000_000,
            "never abort the connection (ns-3 default 6)",
        ),
        ("TcpSocketBase::MinRto", "time", int(tcp["min_rto_ns"]), "plan min_rto_ns (ns-3 1 s)"),
        (
            "TcpSocketBase::WindowScaling",
            "bool",
            bool(tcp["window_scaling"]),
            "plan window_scaling",
        ),
        ("TcpSocketBase::Sack", "bool", bool(tcp["sack"]), "plan sack (ns-3 default on)"),
        (
            "TcpSocketBase::Timestamp",
            "bool",
            bool(tcp["timestamps"]),
            "plan timestamps (ns-3 default on: +12 B/segment)",
        ),
        ("TcpSocketBase::LimitedTransmit", "bool", False, "tcplab has no RFC 3042 yet"),
        (
            "TcpSocketBase::ReTxThreshold",
            "uint",
            3 if fast_rtx else 1_000_000,
            "3 dupACKs" if fast_rtx else "fast retransmit off",
        ),
        ("TcpSocketBase::UseEcn", "enum", "Off", "no ECN in tcplab"),
    ]


_BINDINGS: tuple[Any, Any, float] | None = None


def bindings() -> tuple[Any, Any, float, bool]:
    """(ns, tcplab_peer, seconds the import took, whether an earlier plan paid for it).

    The import (cppyy and the ns-3 libraries) costs 7-12 s on an idle machine and our C++
    can be defined only once per process, so a serving process does both once."""
    global _BINDINGS
    warm = _BINDINGS is not None
    if _BINDINGS is None:
        t_import = time.perf_counter()
        import cppyy
        from ns import ns

        wall_import = time.perf_counter() - t_import
        cppyy.cppdef(_CPP)
        _BINDINGS = (ns, cppyy.gbl.tcplab_peer, wall_import)
    ns, peer, wall_import = _BINDINGS
    return ns, peer, wall_import, warm


def serve(trace: bool, cc_override: str | None) -> int:
    """One plan per stdin line, one result per stdout line, until stdin closes: the import
    is paid once for many plans. An unsupported plan gives {"error": ...} and the loop goes
    on; anything else ends the process (the caller sees the exit status)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run_plan(json.loads(line), trace=trace, cc_override=cc_override)
        except Unsupported as exc:
            result = {"error": str(exc)}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan", nargs="?", default="-", help="plan JSON file, or - for stdin")
    ap.add_argument(
        "--verbose", "-v", action="store_true", help="print the ns-3 settings table to stderr"
    )
    ap.add_argument(
        "--trace",
        action="store_true",
        help="sample sender cwnd/ssthresh/flight/rwnd/srtt every trace_interval_ns",
    )
    ap.add_argument(
        "--cc",
        default=None,
        help="override the ns-3 congestion-control TypeId (e.g. ns3::TcpLinuxReno)",
    )
    ap.add_argument(
        "--hybla-rho-fix",
        action="store_true",
        help="diagnostic: set TcpHybla's rho from the handshake RTT, which ns-3 3.44 never "
        "does on a path whose data RTT exceeds it (plan key ns3_options.hybla_rho_fix)",
    )
    ap.add_argument(
        "--serve",
        action="store_true",
        help="read one plan JSON per stdin line and write one result per stdout line",
    )
    args = ap.parse_args(argv)
    if args.serve:
        return serve(args.trace, args.cc)
    plan = load_plan(args.plan)
    try:
        result = run_plan(
            plan,
            trace=args.trace,
            cc_override=args.cc,
            verbose=args.verbose,
            options={"hybla_rho_fix": True} if args.hybla_rho_fix else None,
        )
    except Unsupported as exc:
        print(json.dumps({"error": str(exc)}))
        print(f"ns3_peer: unsupported plan: {exc}", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


def check_plan(plan: dict[str, Any]) -> list[str]:
    """Refuse what ns-3 cannot mirror; return warnings for what it mirrors approximately."""
    warnings: list[str] = []
    hosts, links = plan["hosts"], plan["links"]
    if "flows" in plan:
        if any(
            f["app"]["kind"] != "bulk" or f["start_ns"] or f["start_jitter_ns"] or f["after"]
            for f in plan["flows"]
        ):
            raise Unsupported("a plan with flows: only bulk flows that all start at 0")
        if any(h["tcp"] != hosts[0]["tcp"] for h in hosts):
            raise Unsupported("a plan with flows: every host needs the same tcp settings")
    elif len(hosts) != 2:
        raise Unsupported("exactly two hosts are supported")
    if not links:
        raise Unsupported("at least one link is needed")
    for i, link in enumerate(links):
        fwd, rev = link["forward"], link["reverse"]
        if int(fwd["delay_ns"]) != int(rev["delay_ns"]):
            raise Unsupported(
                f"links[{i}]: ns-3 point-to-point channels have one delay for both directions"
            )
        for dname, d in (("forward", fwd), ("reverse", rev)):
            fr = d.get("framing", {"overhead_bytes": 2, "min_payload_bytes": 0})
            if int(fr.get("overhead_bytes", 2)) != 2 or int(fr.get("min_payload_bytes", 0)):
                raise Unsupported(
                    f"links[{i}].{dname}.framing {fr}: ns-3 point-to-point adds "
                    "exactly a 2-byte PPP header and no padding"
                )
            kind = d.get("error", {"kind": "none"})["kind"]
            if kind not in ("none", "loss", "ber"):
                raise Unsupported(
                    f"links[{i}].{dname}.error kind {kind!r} has no ns-3 "
                    "equivalent (ns-3 has no Gilbert-Elliott model)"
                )
            if "bytes" in d["queue"]:
                warnings.append(
                    f"links[{i}].{dname}: byte queue limit mirrored for full-size "
                    "packets (ns-3 counts PPP frames, tcplab IP bytes)"
                )
    for h in hosts:
        cc = h["tcp"]["cc"]
        if cc not in CC_TYPES:
            raise Unsupported(f"cc {cc!r} has no ns-3 mapping")
        if h["tcp"].get("hystart", False):
            warnings.append(
                f"host {h['name']}: plan hystart is tcplab's HyStart++ (RFC 9406); ns-3 has "
                + (
                    "only TcpCubic's 2008 HyStart, set on instead"
                    if cc == "cubic"
                    else f"none for {CC_TYPES[cc]}"
                )
            )
        counts = NS3_SLOW_START_COUNTS_BYTES.get(cc)
        if counts is not None and bool(h["tcp"].get("abc", False)) != counts:
            warnings.append(
                f"host {h['name']}: plan abc={h['tcp'].get('abc')} but ns-3's "
                f"{CC_TYPES[cc]} {'counts bytes' if counts else 'adds one MSS per ACK'} "
                "in slow start"
            )
    if "flows" not in plan and plan["app"]["kind"] not in ("bulk", "file"):
        raise Unsupported(f"app kind {plan['app']['kind']!r}")
    return warnings


def endpoints(plan: dict[str, Any]) -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]]:
    """(number of nodes, each link's two nodes, each flow's sending and receiving node).

    A plan with flows names its nodes (hosts, then routers) on each link; a plan without is
    a chain, hosts[0] sending to hosts[-1] through links[i] between nodes i and i + 1."""
    links = plan["links"]
    if "flows" in plan:
        nodes = len(plan["hosts"]) + len(plan.get("routers", []))
        ends = [(int(link["nodes"][0]), int(link["nodes"][1])) for link in links]
        return nodes, ends, [(int(f["src"]), int(f["dst"])) for f in plan["flows"]]
    return len(links) + 1, [(i, i + 1) for i in range(len(links))], [(0, len(links))]


def run_plan(
    plan: dict[str, Any],
    *,
    trace: bool = False,
    cc_override: str | None = None,
    verbose: bool = False,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    warnings = check_plan(plan)

    ns, peer, wall_import, warm = bindings()
    # A serving process runs many plans: forget the previous plan's attribute defaults.
    ns.Config.Reset()

    settings: list[list[str]] = []

    def record(scope: str, attr: str, value: object, why: str) -> None:
        settings.append([scope, attr, str(value), why])

    def attr_value(kind: str, value: Any) -> Any:
        if kind == "uint":
            return ns.UintegerValue(int(value))
        if kind == "bool":
            return ns.BooleanValue(bool(value))
        if kind == "time":
            return ns.TimeValue(ns.NanoSeconds(int(value)))
        if kind == "double":
            return ns.DoubleValue(float(value))
        if kind == "enum":
            return ns.StringValue(str(value))
        raise ValueError(kind)

    def shown(kind: str, value: Any) -> str:
        return fmt_ns(value) if kind == "time" else str(value)

    # Peer-only switches travel beside the plan (tcplab itself rejects unknown fields).
    options: dict[str, Any] = {**plan.get("ns3_options", {}), **(options or {})}
    seed = int(plan["seed"])
    duration_ns = int(plan["duration_ns"])
    interval_ns = int(plan.get("interval_ns", 1_000_000_000))
    trace_ns = int(plan.get("trace_interval_ns", 10_000_000)) if trace else 0
    sender_tcp, receiver_tcp = plan["hosts"][0]["tcp"], plan["hosts"][-1]["tcp"]
    app = plan.get("app", {"kind": "bulk"})
    file_bytes = int(app["bytes"]) if app["kind"] == "file" else 0
    n_nodes, link_ends, flow_ends = endpoints(plan)
    senders = sorted({src for src, _ in flow_ends})
    receivers = sorted({dst for _, dst in flow_ends})

    # --- RNG: fixed seed, the plan's seed picks the run (independent substreams) --------
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    record("global", "RngSeedManager::SetRun", seed, "plan seed selects the replication")

    # --- TCP stack defaults: the receiver's settings (its listening socket is made by
    #     PacketSink at t = 0 from these); the sender socket gets its own host's below. ---
    for attr, kind, value, why in tcp_attributes(receiver_tcp):
        ns.Config.SetDefault(f"ns3::{attr}", attr_value(kind, value))
        record("default (receiver)", attr, shown(kind, value), why)
    cc_name = cc_override or CC_TYPES[sender_tcp["cc"]]
    rx_cc = cc_override or CC_TYPES[receiver_tcp["cc"]]
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")),
    )
    record(
        "global",
        "TcpL4Protocol::RecoveryType",
        "ns3::TcpClassicRecovery",
        "NewReno fast recovery (RFC 6582) as tcplab; ns-3 default is PRR",
    )

    # --- topology ---------------------------------------------------------------------
    links = plan["links"]
    nodes = ns.NodeContainer()
    nodes.Create(n_nodes)
    internet = ns.InternetStackHelper()
    internet.Install(nodes)
    # Config defaults are per algorithm, not per host: the sender's plan decides them (the
    # receiver's algorithm sends no data).
    for cc in dict.fromkeys((cc_name, rx_cc)):
        for attr, kind, value, why in cc_attributes(cc, sender_tcp):
            ns.Config.SetDefault(f"ns3::{attr}", attr_value(kind, value))
            record("global", attr, shown(kind, value), why)
    for idx, cc in [*((i, cc_name) for i in senders), *((i, rx_cc) for i in receivers)]:
        l4 = nodes.Get(idx).GetObject[ns.TcpL4Protocol]()
        l4.SetAttribute("SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc)))
        if len(senders) == 1 or idx in (senders[0], receivers[0]):
            record(
                f"node {idx}" + (" (and the other flows')" if len(senders) > 1 else ""),
                "TcpL4Protocol::SocketType",
                cc,
                f"plan cc {plan['hosts'][idx]['tcp']['cc']!r}",
            )

    mss_ip = int(sender_tcp["mss"]) + 40
    peer.Reset(interval_ns, duration_ns, file_bytes, file_bytes, trace_ns, 2 * len(links))
    addresses = []
    for i, link in enumerate(links):
        fwd, rev = link["forward"], link["reverse"]
        p2p = ns.PointToPointHelper()
        # Without flow control a full device queue drops the packet itself (plain
        # drop-tail), instead of pushing back into a traffic-control queue.
        p2p.DisableFlowControl()
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(int(fwd["delay_ns"]))))
        record(
            f"link {i}",
            "PointToPointChannel::Delay",
            fmt_ns(int(fwd["delay_ns"])),
            "plan delay_ns (one delay for both directions)",
        )
        record(
            f"link {i}",
            "PointToPointHelper::DisableFlowControl",
            "called",
            "plain drop-tail at the device",
        )
        devs = p2p.Install(nodes.Get(link_ends[i][0]), nodes.Get(link_ends[i][1]))
        dev_a = devs.Get(0).GetObject[ns.PointToPointNetDevice]()
        dev_b = devs.Get(1).GetObject[ns.PointToPointNetDevice]()
        for k, (dname, d, tx, rx) in enumerate(
            (("forward", fwd, dev_a, dev_b), ("reverse", rev, dev_b, dev_a))
        ):
            scope = f"link {i} {dname}"
            tx.SetAttribute("DataRate", ns.DataRateValue(ns.DataRate(int(d["rate_bps"]))))
            record(
                scope,
                "PointToPointNetDevice::DataRate",
                fmt_rate(int(d["rate_bps"])),
                "plan rate_bps",
            )
            qsize, why = queue_size_for_ns3(d["queue"], mss_ip)
            tx.GetQueue().SetMaxSize(ns.QueueSize(qsize))
            record(scope, "DropTailQueue<Packet>::MaxSize", qsize, why)
            err = d.get("error", {"kind": "none"})
            if err["kind"] in ("ber", "loss"):
                em = ns.CreateObject[ns.RateErrorModel]()
                if err["kind"] == "ber":
                    unit, rate = "ERROR_UNIT_BIT", float(err["ber"])
                    em.SetUnit(ns.RateErrorModel.ERROR_UNIT_BIT)
                    why = "per-packet error 1-(1-ber)^(8*frame bytes incl. PPP header)"
                else:
                    unit, rate = "ERROR_UNIT_PACKET", float(err["p"])
                    em.SetUnit(ns.RateErrorModel.ERROR_UNIT_PACKET)
                    why = "per-packet loss probability p"
                em.SetRate(rate)
                # Streams fixed per link direction so replications differ only by run.
                em.AssignStreams(100 + 2 * i + k)
                rx.SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
                record(scope, "RateErrorModel (receiving device)", f"{unit} rate={rate:g}", why)
            else:
                record(scope, "ReceiveErrorModel", "none", "plan error none")
            peer.HookLinkDir(2 * i + k, tx, rx)
        ipv4 = ns.Ipv4AddressHelper()
        ipv4.SetBase(ns.Ipv4Address(f"10.{i // 256}.{i % 256}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces = ipv4.Assign(devs)
        # tcplab has only the drop-tail device queue: no FqCoDel in front of it.
        removed = peer.RemoveQueueDiscs(devs)
        record(
            f"link {i}",
            "root queue disc",
            f"none ({removed} removed)",
            "no FqCoDel (Assign adds it only with flow control on)",
        )
        addresses.append(ifaces)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # --- applications -----------------------------------------------------------------
    # A node's address: that of its interface on the first link it is on.
    address_of: dict[int, Any] = {}
    for i, (a, b) in enumerate(link_ends):
        address_of.setdefault(a, addresses[i].GetAddress(0))
        address_of.setdefault(b, addresses[i].GetAddress(1))
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory",
        ns.InetSocketAddress(ns.Ipv4Address.GetAny(), SINK_PORT).ConvertTo(),
    )
    for receiver in receivers:
        sink_apps = sink_helper.Install(nodes.Get(receiver))
        sink_apps.Start(ns.Seconds(0))
        peer.HookSink(sink_apps.Get(0))
    record(
        f"node {receivers[0]}" + (" (and the other receivers)" if len(receivers) > 1 else ""),
        "PacketSink",
        f"port {SINK_PORT}",
        "receiving application, reads all data as it arrives; goodput = its Rx bytes",
    )

    def socket_on(node: int) -> Any:
        sock = ns.Socket.CreateSocket(
            nodes.Get(node), ns.TypeId.LookupByName("ns3::TcpSocketFactory")
        )
        for attr, kind, value, _ in tcp_attributes(sender_tcp):
            sock.SetAttribute(attr.split("::")[1], attr_value(kind, value))
        return sock

    dst = address_of[flow_ends[0][1]]
    sock = socket_on(flow_ends[0][0])
    for attr, kind, value, why in tcp_attributes(sender_tcp):
        record("sender socket", attr, shown(kind, value), why)
    record(
        "sender socket",
        "application",
        "bulk: fill the send buffer" if not file_bytes else f"file: {file_bytes} B then close",
        "C++ writer: each send callback writes all of GetTxAvailable() (BulkSend would "
        "leave up to SendSize-1 bytes unused)",
    )
    if options.get("hybla_rho_fix") and cc_name == "ns3::TcpHybla":
        rrtt = dict((a, v) for a, _, v, _ in CC_ATTRIBUTES["ns3::TcpHybla"])["TcpHybla::RRTT"]
        peer.SetFixHyblaRho(int(rrtt))
        record(
            "sender socket",
            "TcpHybla rho (diagnostic)",
            "set once at connection: handshake RTT / RRTT",
            "not ns-3 as released: its rho otherwise stays 1 (see bench/README.md)",
        )
    # The first flow's sender also gives the trace (a plan without flows has only it).
    peer.ArmSender(sock, dst, SINK_PORT)
    for src, dst_node in flow_ends[1:]:
        peer.ArmFlow(socket_on(src), address_of[dst_node], SINK_PORT)

    ns.Simulator.Stop(ns.NanoSeconds(duration_ns))
    record("global", "Simulator::Stop", fmt_ns(duration_ns), "plan duration_ns")

    if verbose:
        print_settings(settings, warnings)

    t_run, cpu_run = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    wall_run = time.perf_counter() - t_run
    # This process's CPU during Run: on a shared machine, the work itself.
    cpu_run = time.process_time() - cpu_run

    g = peer.g
    file_done = bool(file_bytes) and g.doneNs >= 0
    # As tcplab: a bulk run is complete when its duration is over; a file run when the
    # receiver has read the whole file.
    completed = file_done or not file_bytes
    elapsed_s = (g.doneNs / 1e9) if file_done else duration_ns / 1e9
    n_bins = int(peer.NBins())
    bins = [int(peer.Bin(j)) for j in range(n_bins)]
    t_s = [min((j + 1) * interval_ns, duration_ns) / 1e9 for j in range(n_bins)]
    if file_done:
        keep = max(1, math.ceil(g.doneNs / interval_ns))
        bins, t_s = bins[:keep], t_s[:keep]
        t_s[-1] = g.doneNs / 1e9
    link_rows = []
    for j in range(2 * len(links)):
        c = g.links[j]
        rate = int(links[j // 2]["forward" if j % 2 == 0 else "reverse"]["rate_bps"])
        link_rows.append(
            {
                "link": j // 2,
                "direction": "forward" if j % 2 == 0 else "reverse",
                "packets": int(c.txPackets),
                "bytes": int(c.txBytes),
                "drops_queue": int(c.dropsQueue),
                "drops_error": int(c.dropsError),
                "max_queue_bytes": int(c.maxQueueBytes),
                "utilisation": (int(c.txBytes) * 8 / rate) / elapsed_s if elapsed_s > 0 else 0.0,
            }
        )
    delivered = int(g.delivered)
    result: dict[str, Any] = {
        "simulator": "ns-3",
        "ns3_version": ns3_version(),
        "goodput_bps": delivered * 8 / elapsed_s if elapsed_s > 0 else 0.0,
        "elapsed_s": elapsed_s,
        "bytes_delivered": delivered,
        "bytes_written": int(g.written),
        "completed": completed,
        "segments_sent": int(g.segmentsSent),
        "retransmits": int(g.retransmits),
        "fast_retransmits": int(g.fastRecoveries),
        "timeouts": int(g.timeouts),
        "events": int(ns.Simulator.GetEventCount()),
        # TcpHybla's rho at the end of the run (absent for other algorithms).
        **({"hybla_rho": float(g.rho)} if g.rho >= 0 else {}),
        "series": {"t_s": t_s, "interval_bytes": bins},
        "links": link_rows,
        "wall_s_import": wall_import,
        "warm": warm,
        "wall_s_run": wall_run,
        "cpu_s_run": cpu_run,
        "wall_s_total": time.perf_counter() - _T_START,
        "settings": settings,
        "warnings": warnings,
    }
    if trace:
        result["trace"] = {
            "t_s": list(g.trT),
            "cwnd_bytes": [int(x) for x in g.trCwnd],
            "ssthresh_bytes": [int(x) for x in g.trSsthresh],
            "flight_bytes": [int(x) for x in g.trFlight],
            "rwnd_bytes": [int(x) for x in g.trRwnd],
            "srtt_s": list(g.trSrtt),
        }
    ns.Simulator.Destroy()
    return result


def ns3_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ns3")
    except PackageNotFoundError:
        return "unknown"


def print_settings(settings: list[list[str]], warnings: list[str]) -> None:
    """Plain-text table on stderr (this venv has no rich); stdout stays pure JSON."""
    widths = [max(len(r[c]) for r in settings) for c in range(3)]
    head = ("scope", "ns-3 attribute", "value", "why")
    widths = [max(w, len(h)) for w, h in zip(widths, head, strict=False)]
    # The last column ("why") is left unpadded.
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=False)) + "  " + head[3]
    print(line, file=sys.stderr)
    print("-" * len(line), file=sys.stderr)
    for row in settings:
        print(
            "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)) + "  " + row[3],
            file=sys.stderr,
        )
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
