"""The installed tcplab version, recorded in every result."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tcplab")
except PackageNotFoundError:
    # Imported straight from a source tree (PYTHONPATH=python) that was never installed.
    __version__ = "0+unknown"
