"""What a `tcplab measure client` test asks for, checked before anything is connected.

Errors name the field; `tcplab measure client` names the matching flag (FLAGS).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("bulk", "file", "rr")
# The client's reads of the responses, when an rr test does not say.
DEFAULT_READ_SIZE = 128 * 1024
# The fields only an rr test has.
RR_FIELDS = ("request_size", "response_size", "transactions", "read_size")
# The command-line flag of each field, for the errors `tcplab measure client` prints.
FLAGS = {
    "kind": "--rr",
    "duration_ns": "--duration",
    "file_bytes": "--bytes",
    "message_size": "--message-size",
    "write_delay_ns": "--write-delay",
    "read_delay_ns": "--read-delay",
    "interval_ns": "--interval",
    "trace_interval_ns": "--trace-interval",
    "request_size": "--request-size",
    "response_size": "--response-size",
    "transactions": "--transactions",
    "read_size": "--read-size",
}


class WorkloadError(ValueError):
    """A test the client cannot run; `field` is the Workload field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Workload:
    """One test: a bulk stream for `duration_ns`, a file of `file_bytes`, or request/
    response transactions (`rr`) for `duration_ns` or until `transactions` are done.

    Bulk and file write `message_size` bytes per call with `write_delay_ns` between calls,
    and the server sleeps `read_delay_ns` after each of its reads;
    an rr client writes each request in one call as soon as the last response is read
    (netperf TCP_RR) and reads the response with `read_size` calls.
    """

    kind: str
    duration_ns: int
    interval_ns: int
    trace_interval_ns: int
    file_bytes: int | None = None
    message_size: int | None = None
    write_delay_ns: int = 0
    # The server's sleep after each of its reads (bulk and file).
    read_delay_ns: int = 0
    request_size: int | None = None
    response_size: int | None = None
    transactions: int | None = None
    read_size: int | None = None

    def __post_init__(self) -> None:
        _check(self.kind in KINDS, "kind", f"{self.kind!r}; accepted: {', '.join(KINDS)}")
        for name in ("duration_ns", "interval_ns", "trace_interval_ns"):
            _check(getattr(self, name) > 0, name, "must be positive")
        _check(
            (self.kind == "file") == (self.file_bytes is not None),
            "file_bytes",
            "a file test needs a byte count, and only a file test takes one (bulk and rr run "
            "for the duration)",
        )
        _check(self.file_bytes is None or self.file_bytes > 0, "file_bytes", "must be positive")
        if self.kind == "rr":
            self._check_rr()
            return
        for name in RR_FIELDS:
            _check(getattr(self, name) is None, name, "only a request/response (rr) test has it")
        _check(
            self.message_size is not None and self.message_size > 0,
            "message_size",
            "a bulk or file test needs a positive write size",
        )
        _check(self.write_delay_ns >= 0, "write_delay_ns", "must not be negative")
        _check(self.read_delay_ns >= 0, "read_delay_ns", "must not be negative")

    def _check_rr(self) -> None:
        for name in ("request_size", "response_size"):
            value = getattr(self, name)
            _check(
                value is not None and value > 0,
                name,
                "a request/response (rr) test needs a positive size",
            )
        for name in ("transactions", "read_size"):
            value = getattr(self, name)
            _check(value is None or value > 0, name, "must be positive")
        _check(
            self.message_size is None,
            "message_size",
            "an rr client writes each request in one call; its size is request_size",
        )
        _check(
            self.write_delay_ns == 0,
            "write_delay_ns",
            "an rr client writes each request as soon as the last response is read "
            "(netperf TCP_RR); there is no pause to set",
        )
        _check(
            self.read_delay_ns == 0,
            "read_delay_ns",
            "an rr server answers each request as soon as it has read it; there is no pause to set",
        )

    @property
    def client_read_size(self) -> int:
        return self.read_size or DEFAULT_READ_SIZE


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise WorkloadError(field, message)
