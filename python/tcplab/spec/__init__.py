"""The scenario a user writes (TOML), validated with pydantic: one module per subject.

Quantities are held as integers in the simulator's units (ns, bit/s, bytes) and written back
in a canonical spelling ("275ms", "2.048Mbps", "64KiB"), so a dumped spec validates again to
the same spec and two spellings of one experiment hash alike.
"""

from tcplab.errors import SpecError
from tcplab.spec.apps import App, MediaObjectives, Stream
from tcplab.spec.atm import Abr, Efci, Erica, EricaPlus, Switch
from tcplab.spec.fields import ERROR_MODEL_FIELDS, BerCurve
from tcplab.spec.hosts import Cpu, Host, Tcp
from tcplab.spec.links import GilbertElliott, Link, Wlan
from tcplab.spec.loading import (
    canonical_dict,
    canonical_hash,
    format_problem,
    json_schema,
    load_spec,
    located_problems,
    spec_hash,
    validate_spec,
)
from tcplab.spec.queue import Queue
from tcplab.spec.scenario import Spec
from tcplab.spec.sweep import Sweep
from tcplab.spec.topology import Flow, Pep, Router
from tcplab.spec.trace import Trace

__all__ = [
    "ERROR_MODEL_FIELDS",
    "Abr",
    "App",
    "BerCurve",
    "Cpu",
    "Efci",
    "Erica",
    "EricaPlus",
    "Flow",
    "GilbertElliott",
    "Host",
    "Link",
    "MediaObjectives",
    "Pep",
    "Queue",
    "Router",
    "Spec",
    "SpecError",
    "Stream",
    "Sweep",
    "Switch",
    "Tcp",
    "Trace",
    "Wlan",
    "canonical_dict",
    "canonical_hash",
    "format_problem",
    "json_schema",
    "load_spec",
    "located_problems",
    "spec_hash",
    "validate_spec",
]
