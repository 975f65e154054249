"""Pointing a user at a scenario problem: the field names close to an unknown one ("did you
mean"), and the line of the TOML file where a field is written."""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any

from pydantic import BaseModel

Location = tuple[str | int, ...]

# `[table]`, `[[array.of.tables]]` and `key = ...` lines; keys bare or quoted, dotted or not.
_NAME = r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'"""
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(rf"^\s*((?:{_NAME})(?:\s*\.\s*(?:{_NAME}))*)\s*=")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"([^"]*)"|'([^']*)'""")


def suggestion(root: type[BaseModel], location: Location) -> str | None:
    """The accepted field name closest to the unknown field at `location`, if one is close."""
    name = location[-1] if location else None
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, sorted(_names_at(root, location[:-1])), n=1)
    return close[0] if close else None


def _names_at(root: type[BaseModel], parents: Location) -> set[str]:
    models = [root]
    for part in parents:
        if isinstance(part, int):
            continue
        inner = [
            model
            for parent in models
            if part in parent.model_fields
            for model in _models_in(parent.model_fields[part].annotation)
        ]
        # A part naming no field is a union member's tag (app kinds): stay with the members.
        models = inner or models
    names: set[str] = set()
    for model in models:
        for field_name, info in model.model_fields.items():
            names.add(info.alias or field_name)
    return names


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds: itself, or inside list, dict, Optional, Union,
    Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]
    return []


def line_of(text: str, location: Location) -> int | None:
    """The 1-based line of `text` (a scenario's TOML) where the field at `location` is
    written as `key = ...`, or None (a field given inline, or not in the file)."""
    table: Location = ()
    arrays: dict[Location, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            parts = _parts(header.group(2))
            if header.group(1) == "[[":
                array = (*_resolve(parts[:-1], arrays), parts[-1])
                arrays[array] = arrays.get(array, -1) + 1
                table = (*array, arrays[array])
            else:
                table = _resolve(parts, arrays)
            continue
        key = _KEY.match(line)
        if key and _names(location, (*table, *_parts(key.group(1)))):
            return number
    return None


def _parts(dotted: str) -> list[str]:
    return [match.group(1) or match.group(2) or match.group(0) for match in _PART.finditer(dotted)]


def _resolve(parts: list[str], arrays: dict[Location, int]) -> Location:
    """A header's path with the current index of each array of tables on the way."""
    path: Location = ()
    for part in parts:
        path = (*path, part)
        if path in arrays:
            path = (*path, arrays[path])
    return path


def _names(location: Location, written: Location) -> bool:
    """Whether `written` (a key's path in the file) is the field at `location`: the same
    parts in order, with at most the union tags of the location (strings) left out."""
    if not written or not location or written[-1] != location[-1]:
        return False
    remaining = iter(location)
    skipped = 0
    for part in written:
        for candidate in remaining:
            if candidate == part:
                break
            if isinstance(candidate, int):
                return False
            skipped += 1
        else:
            return False
    return skipped <= 1 and next(remaining, None) is None
