"""Backends: modules with `run(plan: dict) -> dict` taking a plan and returning a result dict,
both as in docs/internals/plan-and-result.md."""

from __future__ import annotations

import importlib
from types import ModuleType

from tcplab.errors import BackendError

BACKENDS = ("sim", "model", "emu")


def get_backend(name: str) -> ModuleType:
    """The backend module called `name`; BackendError if it is unknown or cannot load."""
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; accepted: {', '.join(BACKENDS)}")
    return importlib.import_module(f"tcplab.backends.{name}")
