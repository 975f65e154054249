"""`sndbuf = "auto"` and `rcvbuf = "auto"`: buffers the application leaves to Linux's
autotuning (crates/sim/src/tcp/rcvbuf.rs, sender/sndbuf.rs; docs/models/tcp.md): what the
spec accepts, which backends honour it, how the emu backend leaves the sockets alone, and
the simulator's window following the reads as the kernel's does."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab import api
from tcplab.backends import capabilities, emu
from tcplab.errors import SpecError, Unsupported
from tcplab.plan import resolve
from tcplab.shared import TCP_RMEM, TCP_WMEM
from tcplab.spec import validate_spec

# The 20 Mb/s, 250 ms path of issue 12 where the kernel's slow start outran the simulator's.
LINK = {"rate": "20Mbps", "delay": "125ms", "queue": {"limit": "833p"}}


def _spec(client: dict[str, Any], server: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "links": [LINK],
        "hosts": [{"name": "client", "tcp": client}, {"name": "server", "tcp": server}],
        **more,
    }


def test_auto_is_accepted_for_each_buffer_and_written_back_as_auto() -> None:
    spec = validate_spec(_spec({"sndbuf": "auto"}, {"rcvbuf": "auto"}))
    assert (spec.hosts[0].tcp.sndbuf, spec.hosts[0].tcp.rcvbuf) == ("auto", 3 * 2**20)
    assert (spec.hosts[1].tcp.sndbuf, spec.hosts[1].tcp.rcvbuf) == (4 * 2**20, "auto")
    plan = resolve(spec)
    assert plan["hosts"][0]["tcp"]["sndbuf"] == "auto"
    assert plan["hosts"][1]["tcp"]["rcvbuf"] == "auto"


@pytest.mark.parametrize(
    ("tcp", "expected"),
    [
        ({"rcvbuf": "automatic"}, 'hosts.0.tcp.rcvbuf: "automatic" is not'),
        ({"rcvbuf": "automatic"}, 'or "auto", for a buffer the kernel autotunes'),
        (
            {"sndbuf": "2GiB"},
            'hosts.0.tcp.sndbuf: 2GiB is not accepted; accepted: 1B to 1GiB, or "auto"',
        ),
        (
            {"profile": "windows-2000", "sndbuf": "auto"},
            'hosts.0.tcp: sndbuf: "auto" is Linux\'s send-buffer autotuning, which needs'
            ' sndbuf_accounting = "linux" (it is "payload")',
        ),
    ],
)
def test_a_bad_buffer_is_refused_naming_the_field_and_what_is_accepted(
    tcp: dict[str, Any], expected: str
) -> None:
    with pytest.raises(SpecError) as info:
        validate_spec(_spec(tcp, {}))
    assert expected in str(info.value)


def test_the_model_refuses_autotuned_buffers_and_sim_and_emu_take_them() -> None:
    plan = resolve(validate_spec(_spec({"sndbuf": "auto"}, {"rcvbuf": "auto"})))
    with pytest.raises(Unsupported, match="hosts.0.tcp.sndbuf") as info:
        capabilities.check(plan, "model")
    assert info.value.supported_by == ("sim", "emu")
    capabilities.check(plan, "sim")
    capabilities.check(plan, "emu")


def test_emu_sets_no_socket_buffer_or_clamp_for_auto_and_gives_the_kernels_triples() -> None:
    plan = resolve(
        validate_spec(_spec({"sndbuf": "auto"}, {"rcvbuf": "auto", "initial_rwnd": None}))
    )
    sender, receiver = (host["tcp"] for host in plan["hosts"])
    sending = emu._options(sender, receiver=False)
    receiving = emu._options(receiver, receiver=True)
    # SO_SNDBUF, SO_RCVBUF and TCP_WINDOW_CLAMP would each switch autotuning off.
    assert sending["sndbuf"] is None and sending["rcvbuf"] == 2 * 3 * 2**20
    assert (receiving["rcvbuf"], receiving["window_clamp"]) == (None, None)
    setup = emu.host_setup(receiver, sender)
    assert (
        setup.sysctls["net.ipv4.tcp_rmem"] == " ".join(map(str, TCP_RMEM)) == "4096 131072 33554432"
    )
    assert setup.sysctls["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    # No initrwnd: the kernel chooses the first window from its buffer.
    assert "initrwnd" not in setup.route_options
    assert emu.host_setup(sender, receiver).sysctls["net.ipv4.tcp_wmem"] == "4096 16384 4194304"
    assert TCP_WMEM == (4096, 16384, 4194304)


def test_the_simulators_window_follows_the_reads_as_the_kernels_did() -> None:
    # The kernel on this path (docs/models/tcp.md, cubic, both buffers "auto"): the window
    # it offered was 80,896-81,920 B at 0.8 s (the initial buffer's clamp at the measured
    # ratio), 151,552-169,984 B at 1.1 s (runs differ in where the reads fall in a round)
    # and 670-712 kB at 1.6-1.7 s, about 1.45 x cwnd while cwnd doubles. With the linux
    # profile's fixed 3 MiB nothing holds the window at 81,920 B.
    spec = _spec(
        {"cc": "cubic", "sndbuf": "auto"},
        {"cc": "cubic", "rcvbuf": "auto"},
        duration="1700ms",
        trace_interval="100ms",
    )
    trace = api.run(validate_spec(spec)).trace_frame().set_index("t_s")
    window = trace["rwnd_bytes"]
    assert window.loc[0.8] == 81_920
    assert 150_000 <= window.loc[1.1] <= 170_000
    assert 640_000 <= window.loc[1.6] <= 720_000
    fixed = api.run(validate_spec({**spec, "hosts": [{"name": "client"}, {"name": "server"}]}))
    assert fixed.trace_frame().set_index("t_s")["rwnd_bytes"].loc[0.8] > 81_920


def test_iperf3_takes_buffers_all_auto_and_refuses_auto_beside_a_size() -> None:
    # iperf3 without -w leaves all four buffers to the kernel; -w sets them all.
    auto = {"sndbuf": "auto", "rcvbuf": "auto"}
    iperf3 = {"app": {"tool": "iperf3"}, "backend": "emu"}
    capabilities.check(resolve(validate_spec(_spec(auto, auto, **iperf3))), "emu")
    mixed = resolve(validate_spec(_spec({"sndbuf": "auto"}, {"rcvbuf": "auto"}, **iperf3)))
    with pytest.raises(Unsupported, match='or all "auto"'):
        capabilities.check(mixed, "emu")
