"""Unit parsing: every accepted spelling, and refusals that say what was given and accepted."""

from __future__ import annotations

import pytest

from tcplab.spec import units
from tcplab.spec.units import QueueLimit, UnitError


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("2.048Mbps", 2_048_000),
        ("100Mbps", 100_000_000),
        ("64kbps", 64_000),
        ("1Gbps", 1_000_000_000),
        ("9600bps", 9600),
        ("2.048 Mbit/s", 2_048_000),
        ("64kbit/s", 64_000),
        ("1Gbit/s", 1_000_000_000),
        ("300bit/s", 300),
    ],
)
def test_rate_accepts_si_rates(text: str, bps: int) -> None:
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("2 Mbps/s", 'unknown unit "Mbps/s"'),
        ("2mbps", 'unknown unit "mbps"'),
        ("-2Mbps", "negative"),
        ("0bps", "zero"),
        ("1.5bps", "not a whole number of bit/s"),
        ("fast", "not a data rate"),
        (2048000, "has no unit"),
        (2.5, "not a data rate"),
        (True, "not a data rate"),
    ],
)
def test_rate_refusals_name_the_value_and_the_accepted_units(value: object, fragment: str) -> None:
    with pytest.raises(UnitError) as raised:
        units.parse_rate(value)
    message = str(raised.value)
    assert fragment in message
    assert units.show_value(value) in message
    if "unit" in fragment or "not a data rate" in fragment:
        assert "bps, kbps, Mbps, Gbps, bit/s, kbit/s, Mbit/s, Gbit/s" in message


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("275ms", 275_000_000),
        ("100s", 100_000_000_000),
        ("10us", 10_000),
        ("1.5s", 1_500_000_000),
        ("500ns", 500),
        ("1min", 60_000_000_000),
        ("0ms", 0),
    ],
)
def test_duration_to_integer_nanoseconds(text: str, ns: int) -> None:
    assert units.parse_duration(text) == ns


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("-5ms", "negative"),
        ("5 sec", 'unknown unit "sec"'),
        ("1.5ns", "not a whole number of nanoseconds"),
        (60, "has no unit"),
        ("1e3ms", "not a duration"),
    ],
)
def test_duration_refusals(value: object, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        units.parse_duration(value)


def test_positive_duration_refuses_zero() -> None:
    with pytest.raises(UnitError, match="zero"):
        units.parse_duration("0s", positive=True)


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("64KiB", 65_536),
        ("32KiB", 32_768),
        ("2048KiB", 2_097_152),
        ("1MiB", 1_048_576),
        ("1GiB", 2**30),
        ("1460B", 1460),
        ("1.5MB", 1_500_000),
        ("64kB", 64_000),
        ("2GB", 2_000_000_000),
        (1460, 1460),
        ("1460", 1460),
    ],
)
def test_size_decimal_and_binary_prefixes_and_bare_bytes(value: object, size: int) -> None:
    assert units.parse_size(value) == size


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("64KB", 'unknown unit "KB"'),
        ("-1KiB", "negative"),
        (-1, "negative"),
        ("1.5B", "not a whole number of bytes"),
        (1.5, "not a size"),
        (0, "zero"),
    ],
)
def test_size_refusals(value: object, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        units.parse_size(value)


@pytest.mark.parametrize(
    ("value", "limit"),
    [
        ("100p", QueueLimit("packets", 100)),
        ("1p", QueueLimit("packets", 1)),
        ("64KiB", QueueLimit("bytes", 65_536)),
        ("7500000B", QueueLimit("bytes", 7_500_000)),
    ],
)
def test_queue_limit_in_packets_or_bytes(value: str, limit: QueueLimit) -> None:
    assert units.parse_queue_limit(value) == limit


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (100, "has no unit"),
        ("100", "has no unit"),
        ("10 pkts", 'unknown unit "pkts"'),
    ],
)
def test_queue_limit_without_a_known_unit_suggests_packets(value: object, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment) as raised:
        units.parse_queue_limit(value)
    assert 'write e.g. "100p"' in str(raised.value)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("0p", "zero"), ("-3p", "negative"), ("1.5p", "not a whole number of packets")],
)
def test_queue_limit_packet_count_refusals(value: str, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        units.parse_queue_limit(value)


@pytest.mark.parametrize(
    ("parse", "write", "value"),
    [
        (units.parse_rate, units.format_rate, 2_048_000),
        (units.parse_rate, units.format_rate, 9_600),
        (units.parse_rate, units.format_rate, 123_456_789),
        (units.parse_duration, units.format_duration, 275_000_000),
        (units.parse_duration, units.format_duration, 1_500_000_000),
        (units.parse_duration, units.format_duration, 60_000_000_000),
        (units.parse_duration, units.format_duration, 7),
        (units.parse_size, units.format_size, 65_536),
        (units.parse_size, units.format_size, 7_500_000),
        (units.parse_size, units.format_size, 1460),
    ],
)
def test_canonical_spelling_parses_back_exactly(parse: object, write: object, value: int) -> None:
    assert parse(write(value)) == value  # type: ignore[operator]


def test_canonical_spellings_read_like_people_write_them() -> None:
    assert units.format_rate(2_048_000) == "2.048Mbps"
    assert units.format_duration(275_000_000) == "275ms"
    assert units.format_duration(60_000_000_000) == "60s"
    assert units.format_size(2_097_152) == "2MiB"
    assert units.format_queue_limit(QueueLimit("packets", 100)) == "100p"


def test_a_duration_past_the_clock_range_is_refused() -> None:
    # Issue #15's fuzzing: interval = "99999999999999999999s" reached the simulator as a
    # float it could not read; 2^62 ns is the longest time a plan may hold.
    assert units.parse_duration("1000000000s") == 10**18
    with pytest.raises(ValueError, match=r"longer than the simulator's clock spans; accepted: at"):
        units.parse_duration("5000000000s")
