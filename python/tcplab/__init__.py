"""tcplab: TCP performance on hard paths, from one scenario file and several backends.

import tcplab
result = tcplab.run("examples/geo-netperf.toml")
print(result.summary["goodput_bps"])
"""

from tcplab.api import run
from tcplab.errors import BackendError, SpecError, TcplabError
from tcplab.result import RunResult
from tcplab.spec import Spec, load_spec
from tcplab.version import __version__

__all__ = [
    "BackendError",
    "RunResult",
    "Spec",
    "SpecError",
    "TcplabError",
    "__version__",
    "load_spec",
    "run",
]
