"""Fuzzed scenarios (issue #15): specs drawn from the JSON Schema and mutations of the
examples, each through `tcplab.run` and `tcplab run FILE --no-save` in a forked child
limited to 20 s and 1 GiB resident: every outcome is a result or a clean error. CI runs 40; the
full run is `python tests/spec_fuzz.py --count 10000` (tests/spec_fuzz.py)."""

from __future__ import annotations

import json

from spec_fuzz import fuzz


def test_fuzzed_specs_end_in_a_result_or_a_clean_error() -> None:
    report = fuzz(40, seed=7)
    assert report["tally"]["specs"] == 40
    # Some of the mutated examples run, so the engine is exercised, not only validation.
    assert report["tally"].get("api.ok", 0) > 0
    failures = [json.dumps(f, default=str)[:1000] for f in report["failures"]]
    assert not failures, "\n".join(failures)
