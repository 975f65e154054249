"""The installed tcplab version, recorded in every result: the extension's, which is the
package's (pyproject.toml takes its version from the Rust workspace)."""

__all__ = ["__version__"]

try:
    from tcplab._sim import __version__
except ImportError:
    # Imported straight from a source tree (PYTHONPATH=python) that was never built.
    __version__ = "0+unknown"
