"""`tcplab measure server|client`: TCP measured between two hosts, real or emulated."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from tcplab.cli.common import (
    console,
    fail,
)
from tcplab.errors import TcplabError
from tcplab.report import (
    display,
)
from tcplab.spec import units

DEFAULT_MESSAGE_SIZE = 128 * 1024

measure_app = typer.Typer(
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Measure TCP between two hosts (real machines or the emulator's namespaces).",
)

def _size(value: str | None, option: str) -> int | None:
    try:
        return None if value is None else units.parse_size(value)
    except ValueError as error:
        raise TcplabError(f"{option}: {error}") from None

def _duration(value: str, option: str) -> int:
    try:
        return units.parse_duration(value, positive=True)
    except ValueError as error:
        raise TcplabError(f"{option}: {error}") from None

def _options(
    cc: str | None,
    sndbuf: str | None,
    rcvbuf: str | None,
    mss: int | None,
    nodelay: bool,
    window: str | None = None,
) -> Any:
    from tcplab.measure.common import TcpOptions

    return TcpOptions(
        cc=cc,
        sndbuf=_size(sndbuf, "--sndbuf"),
        rcvbuf=_size(rcvbuf, "--rcvbuf"),
        mss=mss,
        nodelay=nodelay,
        window_clamp=_size(window, "--window"),
    )

Cc = Annotated[str | None, typer.Option(help="congestion control (TCP_CONGESTION), e.g. cubic")]

Sndbuf = Annotated[str | None, typer.Option(help="SO_SNDBUF, e.g. 64KiB (the kernel doubles it)")]

Rcvbuf = Annotated[str | None, typer.Option(help="SO_RCVBUF, e.g. 64KiB (the kernel doubles it)")]

Mss = Annotated[int | None, typer.Option(help="TCP_MAXSEG, bytes")]

Nodelay = Annotated[bool, typer.Option("--nodelay", help="TCP_NODELAY: Nagle off")]

Port = Annotated[int, typer.Option(help="TCP port of the server")]

@measure_app.command("server")
def measure_server(
    bind: Annotated[
        str, typer.Option(help="address to listen on (0.0.0.0: every interface)")
    ] = "127.0.0.1",
    port: Port = 5210,
    cc: Cc = None,
    sndbuf: Sndbuf = None,
    rcvbuf: Rcvbuf = None,
    mss: Mss = None,
    nodelay: Nodelay = False,
    window: Annotated[
        str | None, typer.Option(help="largest receive window offered (TCP_WINDOW_CLAMP)")
    ] = None,
    read_size: Annotated[str, typer.Option(help="bytes per read call")] = "128KiB",
    count: Annotated[int, typer.Option(min=1, help="tests to serve before exiting")] = 1,
    timeout: Annotated[str, typer.Option(help="longest wait for a client")] = "10min",
) -> None:
    """Receive tests from `tcplab measure client`; print one JSON report line per test."""
    from tcplab.measure import server

    try:
        options = _options(cc, sndbuf, rcvbuf, mss, nodelay, window)
        size = _size(read_size, "--read-size")
        wait_s = _duration(timeout, "--timeout") / 1e9
        server.main(bind, port, options, int(size or 0), count, wait_s)
    except (TcplabError, OSError, ConnectionError) as error:
        raise fail(error) from None

@measure_app.command("client")
def measure_client(
    host: Annotated[str, typer.Argument(help="the server's address", show_default=False)],
    port: Port = 5210,
    duration: Annotated[
        str, typer.Option(help="bulk, rr: how long to run; file: time limit")
    ] = "10s",
    bytes_: Annotated[
        str | None, typer.Option("--bytes", help="send a file of this size instead of bulk")
    ] = None,
    message_size: Annotated[
        str | None, typer.Option(help="bulk, file: bytes per write call [default: 128KiB]")
    ] = None,
    write_delay: Annotated[str, typer.Option(help="pause between writes")] = "0s",
    read_delay: Annotated[
        str, typer.Option(help="bulk, file: the server's pause after each of its reads")
    ] = "0s",
    rr: Annotated[
        bool,
        typer.Option("--rr", help="request/response transactions (netperf TCP_RR) instead"),
    ] = False,
    request_size: Annotated[str | None, typer.Option(help="rr: bytes per request")] = None,
    response_size: Annotated[str | None, typer.Option(help="rr: bytes per response")] = None,
    transactions: Annotated[
        int | None, typer.Option(help="rr: stop after this many (at --duration at the latest)")
    ] = None,
    read_size: Annotated[
        str | None, typer.Option(help="rr: bytes per read of a response [default: 128KiB]")
    ] = None,
    cc: Cc = None,
    sndbuf: Sndbuf = None,
    rcvbuf: Rcvbuf = None,
    mss: Mss = None,
    nodelay: Nodelay = False,
    interval: Annotated[str, typer.Option(help="period of the per-interval goodput")] = "1s",
    trace_interval: Annotated[str, typer.Option(help="period of TCP_INFO samples")] = "100ms",
    json_output: Annotated[bool, typer.Option("--json", help="print the JSON result")] = False,
    stream: Annotated[
        list[str] | None,
        typer.Option(
            help="media mode: a stream NAME,tcp|udp,INTERVAL,SIZE (repeat for more), e.g."
            " audio,udp,20ms,160"
        ),
    ] = None,
    clock_synced: Annotated[
        bool,
        typer.Option(
            "--clock-synced",
            help="media mode: the two machines' clocks are synchronised; report one-way delays",
        ),
    ] = False,
) -> None:
    """Send a bulk stream, a file or media streams to a `tcplab measure server`, or run
    request/response transactions with it, and report what arrived."""
    from tcplab.measure import client
    from tcplab.measure.workload import FLAGS, Workload, WorkloadError

    if stream:
        options = _options(cc, sndbuf, rcvbuf, mss, nodelay)
        _media_client(host, port, options, stream, duration, clock_synced, json_output)
        return
    try:
        file_bytes = _size(bytes_, "--bytes")
        kind = "rr" if rr else "bulk" if file_bytes is None else "file"
        write_size = _size(message_size, "--message-size")
        workload = Workload(
            kind=kind,
            duration_ns=_duration(duration, "--duration"),
            interval_ns=_duration(interval, "--interval"),
            trace_interval_ns=_duration(trace_interval, "--trace-interval"),
            file_bytes=file_bytes,
            message_size=write_size or (None if rr else DEFAULT_MESSAGE_SIZE),
            write_delay_ns=units.parse_duration(write_delay),
            read_delay_ns=units.parse_duration(read_delay),
            request_size=_size(request_size, "--request-size"),
            response_size=_size(response_size, "--response-size"),
            transactions=transactions,
            read_size=_size(read_size, "--read-size"),
        )
        result = client.run(host, port, _options(cc, sndbuf, rcvbuf, mss, nodelay), workload)
    except WorkloadError as error:
        raise fail(TcplabError(f"{FLAGS[error.field]}: {error.message}")) from None
    except (TcplabError, ValueError, OSError, ConnectionError) as error:
        raise fail(error) from None
    if json_output:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    _print_measurement(result)

def _media_stream(text: str) -> Any:
    from tcplab.measure import media

    parts = text.split(",")
    if len(parts) != 4 or parts[1] not in ("tcp", "udp"):
        raise TcplabError(f"--stream {text!r}: write NAME,tcp|udp,INTERVAL,SIZE")
    stream = media.Stream(
        name=parts[0],
        transport=parts[1],
        interval_ns=_duration(parts[2], "--stream"),
        message_size=int(_size(parts[3], "--stream") or 0),
    )
    try:
        media.check_sizes(stream)
    except ValueError as error:
        raise TcplabError(f"--stream: {error}") from None
    return stream

def _media_client(
    host: str,
    port: int,
    options: Any,
    specs: list[str],
    duration: str,
    clock_synced: bool,
    json_output: bool,
) -> None:
    """The client's media mode: send the streams, then show each one's statistics."""
    from tcplab.analytic import media as judged
    from tcplab.measure import media

    try:
        streams = [_media_stream(text) for text in specs]
        names = [s.name for s in streams]
        if len(set(names)) != len(names):
            raise TcplabError("--stream: each stream needs its own name")
        duration_ns = _duration(duration, "--duration")
        result = media.run_client(host, port, options, streams, duration_ns, 1, clock_synced)
    except (TcplabError, ValueError, OSError, ConnectionError) as error:
        raise fail(error) from None
    if json_output:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    records = [
        {**record, "src": "client", "dst": host, "clock": result["clock"]}
        for record in result["streams"]
    ]
    raw = {"summary": {"elapsed_s": duration_ns / 1e9}, "streams": records}
    rows = judged.finish(raw, None)["media"]
    header, lines = display.media_table(rows)
    table = Table(title=f"media streams (clocks: {result['clock']})")
    for index, column in enumerate(header):
        table.add_column(column, justify="right" if index else "left")
    for line in lines:
        table.add_row(*line)
    console.print(table)

def _print_measurement(result: Mapping[str, Any]) -> None:
    end = result["end"]
    rr = end.get("transactions")
    table = Table(title="goodput per interval (bytes read by the receiver)", box=box.SIMPLE)
    for column in ("start (s)", "end (s)", "bytes", "rate", *(["transactions/s"] if rr else [])):
        table.add_column(column, justify="right")
    for interval in result["intervals"]:
        s = interval["sum"]
        cells = [f"{s['start']:.2f}", f"{s['end']:.2f}", f"{s['bytes']:,}"]
        cells.append(display.rate(s["bits_per_second"]))
        if rr:
            cells.append(f"{s['transactions_per_second']:,.1f}")
        table.add_row(*cells)
    console.print(table)
    received, sent = end["sum_received"], end["sum_sent"]
    limited = ", ".join(f"{k} {100 * v:.1f} %" for k, v in end["limited_by"].items())
    cpu = end["cpu_utilization_percent"]
    console.print(
        f"received {received['bytes']:,} B in {received['seconds']:.3f} s = "
        f"{display.rate(received['bits_per_second'])}; written {sent['bytes']:,} B, "
        f"{sent['retransmits']} retransmitted segments; cc {end['sender_tcp_congestion']}"
    )
    if rr:
        latency = rr["latency_us"] or {}
        spread = ", ".join(f"{k} {v / 1e3:.3f}" for k, v in latency.items())
        console.print(
            f"{rr['count']:,} transactions in {rr['seconds']:.3f} s = "
            f"{rr['transactions_per_second']:,.1f}/s; latency (ms): {spread or 'none'}"
        )
    console.print(f"limited by: {limited}")
    console.print(
        f"CPU: sender {cpu['host_total']:.1f} %, receiver {cpu['remote_total'] or 0:.1f} %"
    )
