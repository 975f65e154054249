#!/usr/bin/env bash
# Create bench/.venv-ns3 with the PyPI `ns3` wheel (ns-3 3.44.x, cppyy bindings).
# ns-3 gets a venv of its own: its wheel pulls in cppyy and a large C++ runtime that
# tcplab's own environment must not depend on. Idempotent: does nothing when the
# venv already imports ns-3 3.44.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-ns3"
want="${NS3_VERSION:-3.44.*}"
py="${PYTHON:-python3}"

installed_version() {
    # Ask pip's metadata rather than importing ns (import costs ~10 s).
    "$venv/bin/python" - <<'PY' 2>/dev/null || true
from importlib.metadata import version
print(version("ns3"))
PY
}

if [[ -x "$venv/bin/python" ]]; then
    have="$(installed_version)"
    if [[ "$have" == 3.44* ]]; then
        echo "ns-3 $have already installed in $venv"
        exit 0
    fi
else
    "$py" -m venv "$venv"
fi

"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "ns3==$want"
echo "ns-3 $(installed_version) installed in $venv"
