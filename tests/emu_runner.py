"""A runner for the leak test: one short emu run of a 10 Mb/s, 5 ms path, then "done";
with `pep`, two such links with a PEP between them (a third namespace and a relay).

python emu_runner.py DURATION_S [pep]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import make_plan  # noqa: E402

from tcplab.backends import emu  # noqa: E402

direction = {
    "rate_bps": 10_000_000,
    "delay_ns": 5_000_000,
    "queue": {"packets": 100},
    "error": {"kind": "none"},
    "framing": {"overhead_bytes": 2, "min_payload_bytes": 0},
    "atm": None,
    "aqm": None,
    "schedule": None,
}
link = {"forward": direction, "reverse": direction}
pep = sys.argv[2:] == ["pep"]
plan = make_plan(
    duration_ns=int(float(sys.argv[1]) * 1e9),
    links=[link, link] if pep else [link],
    tcp__delack_timeout_ns=200_000_000,
    # Linux always counts the segments an ACK covers (RFC 3465 byte counting).
    tcp__abc=True,
    tcp__cwnd_validation=True,
    tcp__nagle_variant="minshall",
    tcp__quickack=True,
    tcp__reno_variant="linux",
    tcp__rto_form="linux",
    tcp__sndbuf_accounting="linux",
)
if pep:
    tcp = plan["hosts"][0]["tcp"]
    plan["peps"] = [
        {"name": "pep", "node": 2, "buffer": 65536, "client_side": tcp, "server_side": tcp}
    ]
emu.run(plan)
print("done", flush=True)
