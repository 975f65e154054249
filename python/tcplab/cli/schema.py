"""`tcplab schema`: the JSON Schema of scenario files."""

from __future__ import annotations

import json
import sys

from tcplab.spec import json_schema


def schema_command() -> None:
    """Print the JSON Schema of scenario files (for editors and validators)."""
    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
