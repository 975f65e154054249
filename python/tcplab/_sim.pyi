"""Types of the Rust extension (crates/py/src/lib.rs), for the type checker."""

from typing import Any

# (name, array type code: d, Q, I or B, the values' little-endian bytes in pieces, labels)
Column = tuple[str, str, tuple[bytes, ...], list[str] | None]

__version__: str

def run(plan_json: str) -> str: ...
def run_columnar(
    plan_json: str,
) -> tuple[str, dict[str, list[Column]], dict[str, bytes]]: ...
def emu_run(config_json: str) -> str: ...
def constants() -> dict[str, Any]: ...
