"""The optional extras (pyproject.toml's [project.optional-dependencies]) and the error a
feature gives when the extra it needs is not installed.

A plain `pip install tcplab` runs scenarios and prints or returns their results; what not
everyone needs comes with an extra (docs/install.md):

- ``store``: Parquet files (pyarrow), results directories queried with DuckDB, pandas
  DataFrames: saving a run, sweeps, `tcplab results`, `RunResult.*_frame()`.
- ``report``: the store and matplotlib: HTML reports with their plots, `tcplab reproduce`,
  `tcplab calibrate`.
- ``dask``: the store and the Dask executor for sweeps across machines.
- ``all``: every one of them.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator

from tcplab.errors import TcplabError

# The top-level module of each optional dependency, and the extra that installs it.
EXTRA_OF_MODULE = {
    "pandas": "store",
    "pyarrow": "store",
    "duckdb": "store",
    "matplotlib": "report",
    "dask": "dask",
    "distributed": "dask",
}
# Extras that install another's packages too (pyproject.toml says the same).
INCLUDES = {"report": ("store",), "dask": ("store",)}


class MissingExtra(TcplabError):
    """A feature needs a package that only one of tcplab's extras installs."""

    def __init__(self, module: str, extra: str, what: str | None = None) -> None:
        self.module = module
        self.extra = extra
        needs = f"{what} needs {module}" if what else f"this needs {module}"
        super().__init__(
            f"{needs}, which is not installed: it comes with tcplab's {extra!r} extra,"
            f" pip install 'tcplab[{extra}]' (or 'tcplab[all]' for every extra)"
        )


def missing_extra(error: ModuleNotFoundError, what: str | None = None) -> MissingExtra | None:
    """The MissingExtra that `error` means, or None when the missing module is no optional
    dependency (then it is a fault of the installation, not a missing extra)."""
    module = (error.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    return None if extra is None else MissingExtra(module, extra, what)


@contextlib.contextmanager
def needed(what: str | None = None) -> Iterator[None]:
    """Turn an optional dependency's ModuleNotFoundError raised inside into MissingExtra
    (naming `what` needs it, and the extra to install)."""
    try:
        yield
    except ModuleNotFoundError as error:
        missing = missing_extra(error, what)
        if missing is None:
            raise
        raise missing from None


def require(extra: str, what: str) -> None:
    """Raise MissingExtra unless every module of `extra` is installed: for a command to
    refuse before it runs anything whose result it could not keep."""
    for part in (*INCLUDES.get(extra, ()), extra):
        for module, of in EXTRA_OF_MODULE.items():
            if of == part and importlib.util.find_spec(module) is None:
                raise MissingExtra(module, extra, what)
