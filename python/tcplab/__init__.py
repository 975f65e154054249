"""tcplab: TCP performance on hard paths, from one scenario file and several backends.

import tcplab
result = tcplab.run("examples/geo-netperf.toml")
print(result.summary["goodput_bps"])

store = tcplab.sweep("examples/geo-sweep.toml")     # every point, into results/geo-sweep
print(store.aggregate())
"""

from tcplab.api import run
from tcplab.errors import BackendError, SpecError, TcplabError
from tcplab.result import RunResult
from tcplab.spec import Spec, load_spec
from tcplab.store import Store, open_results
from tcplab.sweeps import sweep
from tcplab.version import __version__

__all__ = [
    "BackendError",
    "RunResult",
    "Spec",
    "SpecError",
    "Store",
    "TcplabError",
    "__version__",
    "load_spec",
    "open_results",
    "run",
    "sweep",
]
