"""tcplab: TCP performance on hard paths, from one scenario file and several backends.

import tcplab
result = tcplab.run("examples/geo-netperf.toml")
print(result.summary["goodput_bps"])

store = tcplab.sweep("examples/geo-sweep.toml")     # every point, into results/geo-sweep
print(store.aggregate())
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tcplab.errors import BackendError, SpecError, TcplabError, Unsupported
from tcplab.extras import needed
from tcplab.version import __version__

if TYPE_CHECKING:
    from tcplab.api import run
    from tcplab.experiments.store import Store, open_results
    from tcplab.experiments.sweeps import sweep
    from tcplab.result import RunResult
    from tcplab.spec import Spec, load_spec

# The rest of the public API loads on first use: pydantic, pandas and the simulator stay out
# of `import tcplab` (and of processes that only need, say, tcplab.measure).
_LAZY = {
    "run": "tcplab.api",
    "RunResult": "tcplab.result",
    "Spec": "tcplab.spec",
    "load_spec": "tcplab.spec",
    "Store": "tcplab.experiments.store",
    "open_results": "tcplab.experiments.store",
    "sweep": "tcplab.experiments.sweeps",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
    # Store, open_results and sweep need the 'store' extra: its absence is said by name.
    with needed(f"tcplab.{name}"):
        value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "BackendError",
    "RunResult",
    "Spec",
    "SpecError",
    "Store",
    "TcplabError",
    "Unsupported",
    "__version__",
    "load_spec",
    "open_results",
    "run",
    "sweep",
]
