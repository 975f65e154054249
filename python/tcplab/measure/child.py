"""The entry point the `emu` backend runs inside a namespace: one JSON argument in, JSON
lines out (`python -m tcplab.measure.child '{"role": "server", ...}'`).

People use `tcplab measure server|client`; this takes the same settings already resolved
to integers, and skips the command-line layer.
"""

from __future__ import annotations

import json
import sys

from tcplab.measure import client, media, server
from tcplab.measure.common import TcpOptions
from tcplab.measure.workload import Workload


def main(argv: list[str]) -> int:
    config = json.loads(argv[0])
    options = TcpOptions(**config["options"])
    if config["role"] == "server":
        server.main(
            config["bind"],
            config["port"],
            options,
            config["read_size"],
            count=config.get("count", 1),
            accept_timeout_s=config["accept_timeout_s"],
        )
        return 0
    if config["role"] == "media-client":
        result = media.run_client(
            config["host"],
            config["port"],
            options,
            [media.Stream.from_plan(s) for s in config["streams"]],
            config["duration_ns"],
            config["seed"],
        )
    else:
        result = client.run(
            config["host"],
            config["port"],
            options,
            Workload(**config["test"]),
            proxied=config.get("proxied", False),
            start_at_ns=config.get("start_at_ns"),
            origin_ns=config.get("origin_ns"),
            control_dscp=config.get("control_dscp"),
            clock_fds=config.get("clock_fds", ()),
        )
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
