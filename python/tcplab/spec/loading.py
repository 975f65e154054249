"""Reading, validating, hashing and describing scenarios: TOML in, SpecError out."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails, to_jsonable_python

from tcplab.errors import SpecError
from tcplab.spec import locate, schedule, units

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib
from tcplab import profiles
from tcplab.spec.hosts import Tcp
from tcplab.spec.scenario import Spec


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        close = locate.suggestion(Spec, tuple(error["loc"]))
        return f"unknown field, did you mean {close!r}?" if close else "unknown field"
    if kind == "missing":
        return "required"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    given = units.show_value(error["input"])
    if kind == "literal_error":
        return f"{given} is not accepted; accepted values: {error['ctx']['expected']}"
    if kind == "string_pattern_mismatch":
        return f"{given} is not a valid name; use letters, digits, '.', '_' and '-'"
    return f"{error['msg']}; given: {given}"


def _location(parts: tuple[str | int, ...]) -> str:
    # A sweep path is one key with dots in it: quote it, so that `sweep."links.0.delay"`
    # does not read as four nested fields.
    return ".".join(f'"{part}"' if "." in str(part) else str(part) for part in parts)


def located_problems(error: ValidationError) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each problem of a validation error as (location, message), the location as a tuple."""
    for detail in error.errors(include_url=False):
        yield tuple(detail["loc"]), _message(detail)


def format_problem(location: tuple[str | int, ...], message: str) -> str:
    """`field.path: message`, or the message alone for a problem of the whole scenario."""
    return f"{_location(location)}: {message}" if location else message


def _problems(error: ValidationError, text: str | None) -> Iterator[str]:
    for location, message in located_problems(error):
        line = locate.line_of(text, location) if text is not None else None
        yield format_problem(location, message) + (f" (line {line})" if line else "")


def validate_spec(
    data: Mapping[str, Any],
    source: str | PathLike[str] | None = None,
    text: str | None = None,
) -> Spec:
    """Validate a scenario given as a mapping; problems are raised as one SpecError. Given
    the TOML `text` it was read from, each problem names the line of its field."""
    try:
        return Spec.model_validate(data)
    except ValidationError as error:
        raise SpecError(list(_problems(error, text)), source) from None


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; a missing, unreadable or malformed file is a SpecError."""
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        raise SpecError(["no such file"], path) from None
    except OSError as error:
        raise SpecError([error.strerror or str(error)], path) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise SpecError([f"invalid TOML: {error}"], path) from None


def load_spec(path: str | PathLike[str]) -> Spec:
    """Read and validate a scenario file; `name` defaults to the file's stem."""
    path = Path(path)
    data = read_toml(path)
    data.setdefault("name", path.stem)
    schedule.inline_files(data, path)
    # read_toml has read it already: it is there and is UTF-8.
    return validate_spec(data, path, path.read_text(encoding="utf-8"))


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, for editors and `tcplab schema`."""
    schema = Spec.model_json_schema()
    _built_defaults(schema)
    _profile_defaults(schema["$defs"]["Tcp"])
    # The spec refuses a scenario without links; their empty default only lets the refusal
    # name the field.
    schema["required"] = [*schema.get("required", ()), "links"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _models(
    model: type[BaseModel], found: dict[str, type[BaseModel]]
) -> dict[str, type[BaseModel]]:
    """`model` and every model its fields hold, by name (the schema's $defs names)."""
    found[model.__name__] = model

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ not in found:
                _models(annotation, found)
        for argument in get_args(annotation):
            walk(argument)

    for info in model.model_fields.values():
        walk(info.annotation)
    return found


def _built_defaults(schema: dict[str, Any]) -> None:
    """A field whose default is built when it is left out (`default_factory`: the hosts, a
    link's queue, a host's TCP) shows the value built, as other fields show theirs."""
    for name, model in _models(Spec, {}).items():
        properties = (schema if model is Spec else schema["$defs"][name])["properties"]
        for field, info in model.model_fields.items():
            # A built default that is validated (the empty links) may not be one.
            if info.default_factory is not None and not info.validate_default:
                built = info.default_factory()  # type: ignore[call-arg]
                properties[info.alias or field]["default"] = to_jsonable_python(
                    built, exclude_none=True
                )


def _profile_defaults(tcp: dict[str, Any]) -> None:
    """Each `[hosts.tcp]` field's default as it applies: the default profile's value, and
    where the stack profiles differ, every profile's (`x-default-by-profile`, and in the
    description), rather than the model's own default, which a profile may replace."""
    effective = {
        name: Tcp.model_validate({"profile": name}).model_dump(mode="json")
        for name in profiles.STACKS
    }
    for field, prop in tcp["properties"].items():
        if field == "profile":
            continue
        values = {name: settings[field] for name, settings in effective.items()}
        prop["default"] = values[profiles.DEFAULT_STACK]
        if len({json.dumps(value) for value in values.values()}) > 1:
            prop["x-default-by-profile"] = values
            shown = "; ".join(f"{name} {json.dumps(value)}" for name, value in values.items())
            prop["description"] = f"{prop.get('description', '')} (default by profile: {shown})"


def canonical_dict(spec: Spec) -> dict[str, Any]:
    """The spec as plain JSON values in canonical spelling; validates back to the same spec."""
    # Unset optional fields are left out so that adding one to the schema later does not
    # change the hash of every existing scenario.
    return spec.model_dump(mode="json", exclude_none=True)


def spec_hash(spec: Spec) -> str:
    """sha256 of the spec's canonical JSON: the same experiment, however spelled, hashes alike."""
    return canonical_hash(canonical_dict(spec))


def canonical_hash(canonical: dict[str, Any]) -> str:
    """`spec_hash` of the spec whose `canonical_dict` is `canonical`, for a caller that has
    the dict already (dumping a spec costs more than a small simulation)."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
