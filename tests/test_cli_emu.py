"""`tcplab compare`, `tcplab emu cleanup` and `tcplab measure` as a user types them.
The emu comparison needs root (CI has it), TUN devices and network namespaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest import MonkeyPatch
from typer.testing import CliRunner

import tcplab
from tcplab.backends import capabilities, emu
from tcplab.cli import app
from tcplab.errors import Unsupported
from tcplab.plan import resolve
from tcplab.spec import validate_spec

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SHORT_GEO = """
name = "geo-short"
duration = "6s"
[[hosts]]
name = "client"
[hosts.tcp]
cc = "reno"
sndbuf = "16KiB"
rcvbuf = "16KiB"
window_scaling = false
[[hosts]]
name = "server"
[hosts.tcp]
cc = "reno"
sndbuf = "16KiB"
rcvbuf = "16KiB"
window_scaling = false
[[links]]
rate = "2.048Mbps"
delay = "275ms"
"""


def test_compare_prints_the_backends_side_by_side() -> None:
    result = runner.invoke(
        app, ["compare", str(EXAMPLES / "geo-netperf.toml"), "--backends", "sim,model"]
    )
    assert result.exit_code == 0, result.output
    assert "sim vs model" in result.output
    assert "model / sim" in result.output
    assert "goodput per interval" in result.output


def test_compare_needs_two_backends() -> None:
    result = runner.invoke(
        app, ["compare", str(EXAMPLES / "geo-netperf.toml"), "--backends", "sim"]
    )
    assert result.exit_code == 2
    assert "name at least two backends" in result.output


def test_compare_sim_and_the_real_kernel(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    scenario = tmp_path / "geo-short.toml"
    scenario.write_text(SHORT_GEO)
    monkeypatch.setenv("TCPLAB_EMU_PACKET_LOG", str(tmp_path / "log" / "geo"))
    result = runner.invoke(app, ["compare", str(scenario), "--backends", "sim,emu"])
    assert result.exit_code == 0, result.output
    assert "sim vs emu" in result.output
    assert "emulator lateness p99" in result.output
    assert "window offered (TCP_INFO)" in result.output
    # The per-packet log asked for through the environment: CSV and mahimahi's format.
    rows = (tmp_path / "log" / "geo.csv").read_text().splitlines()
    assert rows[0].startswith("t_ns,direction,link") and len(rows) > 100
    mahimahi = (tmp_path / "log" / "geo.link0.forward.log").read_text().splitlines()
    assert mahimahi[0].startswith("# mahimahi mm-link log")
    assert any(" + " in line for line in mahimahi)


def test_emu_cleanup_leaves_nothing_of_dead_runs() -> None:
    result = runner.invoke(app, ["emu", "cleanup"])
    assert result.exit_code == 0, result.output


def test_measure_commands_are_there() -> None:
    for command in ("server", "client"):
        result = runner.invoke(app, ["measure", command, "--help"])
        assert result.exit_code == 0
        assert "--cc" in result.output


def test_emu_refuses_clearly_without_root(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    scenario = tmp_path / "geo-short.toml"
    scenario.write_text(SHORT_GEO)
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    result = runner.invoke(app, ["run", str(scenario), "--backend", "emu", "--no-save"])
    assert result.exit_code == 2
    assert "error: the emu backend needs root" in result.output
    result = runner.invoke(app, ["emu", "cleanup"])
    assert result.exit_code == 2
    assert "needs root" in result.output


def test_the_emu_example_is_accepted_and_the_nt4_profile_is_refused_by_name() -> None:
    spec = tcplab.load_spec(EXAMPLES / "geo-emu.toml")
    assert spec.backend == "emu"
    capabilities.check(resolve(spec), "emu")
    paused_reader = resolve(spec)
    paused_reader["app"]["read_delay_ns"] = 5_000_000
    capabilities.check(paused_reader, "emu")
    assert emu.workload(paused_reader).read_delay_ns == 5_000_000
    paused_reader["app"].update(tool="iperf3", message_size=128 * 1024)
    with pytest.raises(Unsupported, match="app.read_delay_ns: iperf3 has no such option"):
        capabilities.check(paused_reader, "emu")
    with pytest.raises(Unsupported, match="hosts.0.tcp.abc: .* set abc = true"):
        capabilities.check(resolve(tcplab.load_spec(EXAMPLES / "geo-netperf.toml")), "emu")
    # Each other windows-nt4 setting that Linux cannot take is refused by name in turn.
    linux_like = {
        "abc": True,
        "cwnd_validation": True,
        "nagle_variant": "minshall",
        "quickack": True,
        "reno_variant": "linux",
        "rto_form": "linux",
        "sndbuf_accounting": "linux",
    }
    fields = (
        "cwnd_validation",
        "nagle_variant",
        "quickack",
        "reno_variant",
        "rto_form",
        "sndbuf_accounting",
    )
    for field in fields:
        netperf = tcplab.load_spec(EXAMPLES / "geo-netperf.toml").model_dump(mode="json")
        for host in netperf["hosts"]:
            host["tcp"].update({k: v for k, v in linux_like.items() if k != field})
        with pytest.raises(Unsupported, match=f"hosts.0.tcp.{field}: .* set {field}"):
            capabilities.check(resolve(validate_spec(netperf)), "emu")
    # A connection without a handshake exists only in a simulator.
    netperf = tcplab.load_spec(EXAMPLES / "geo-netperf.toml").model_dump(mode="json")
    for host in netperf["hosts"]:
        host["tcp"].update(linux_like, handshake=False)
    with pytest.raises(Unsupported, match="hosts.0.tcp.handshake: .* set handshake = true"):
        capabilities.check(resolve(validate_spec(netperf)), "emu")


RR = ["--rr", "--request-size", "100", "--response-size", "1KiB"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--rr"], "--request-size: a request/response (rr) test needs a positive size"),
        (["--rr", "--request-size", "1"], "--response-size: a request/response (rr) test"),
        (["--request-size", "100"], "--request-size: only a request/response (rr) test"),
        (["--transactions", "5"], "--transactions: only a request/response (rr) test"),
        (["--read-size", "4KiB"], "--read-size: only a request/response (rr) test"),
        ([*RR, "--bytes", "1MB"], "--bytes: a file test needs a byte count, and only"),
        ([*RR, "--message-size", "4KiB"], "--message-size: an rr client writes each request"),
        ([*RR, "--write-delay", "5ms"], "--write-delay: an rr client writes each request"),
        ([*RR, "--read-delay", "5ms"], "--read-delay: an rr server answers each request"),
        ([*RR, "--transactions", "0"], "--transactions: must be positive"),
        ([*RR, "--request-size", "0"], '--request-size: "0" is zero'),
    ],
)
def test_measure_client_refuses_a_test_it_cannot_run_naming_the_flag(
    args: list[str], error: str
) -> None:
    # Refused before connecting: nothing listens on port 9 of this address.
    result = runner.invoke(app, ["measure", "client", "127.0.0.1", "--port", "9", *args])
    assert result.exit_code == 2, result.output
    assert f"error: {error}" in " ".join(result.output.split())


def rr_plan(**app: object) -> dict:
    plan = resolve(tcplab.load_spec(EXAMPLES / "rr-emu.toml"))
    plan["app"].update(app)
    return plan


def test_emu_runs_rr_on_its_own_tool_and_refuses_what_it_cannot() -> None:
    capabilities.check(rr_plan(), "emu")
    assert emu.workload(rr_plan()).request_size == 100
    with pytest.raises(Unsupported, match="app.tool: iperf3 has no request/response test"):
        capabilities.check(rr_plan(tool="iperf3"), "emu")
    with pytest.raises(Unsupported, match="app.write_delay_ns: an rr client writes"):
        capabilities.check(rr_plan(write_delay_ns=1_000_000), "emu")
    with pytest.raises(Unsupported, match="app.kind: 'message'; accepted: bulk, file, rr"):
        capabilities.check(rr_plan(kind="message"), "emu")
