"""Types of the Rust extension (crates/py/src/lib.rs), for the type checker."""

from typing import Any

# (name, array type code: d, Q, I, H or B, the values' little-endian bytes in pieces,
# labels, run ends (u32 little-endian bytes in pieces), divisor); tcplab.columns.Buffer
Column = tuple[
    str, str, tuple[bytes, ...], list[str] | None, tuple[bytes, ...] | None, int | None
]

__version__: str

def run(plan_json: str) -> str: ...
def run_columnar(
    plan_json: str,
) -> tuple[str, dict[str, list[Column]], dict[str, bytes]]: ...
def emu_run(config_json: str) -> str: ...
def flow_openings(plan_json: str) -> list[int]: ...
def constants() -> dict[str, Any]: ...
