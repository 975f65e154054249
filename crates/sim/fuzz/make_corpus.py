"""Write the fuzz corpus: each example scenario resolved into the simulator's plan (its
topology form, as it crosses to the simulator), with a 1 s duration so that a run from
the corpus is quick (crates/sim/fuzz/README.md)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tcplab.plan import resolve, topology_form
from tcplab.spec import schedule, validate_spec

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(__file__).resolve().parent / "corpus" / "plan_json"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "examples").glob("*.toml")):
        data = tomllib.loads(path.read_text())
        data.setdefault("name", path.stem)
        data.pop("sweep", None)
        data.update(duration="1s", backend="sim")
        # Schedules and traces named by file, read from beside the example, as load_spec does.
        schedule.inline_files(data, path)
        spec = validate_spec(data)
        plan = topology_form(resolve(spec, seed=spec.seed))
        (OUT / f"{path.stem}.json").write_text(json.dumps(plan, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
