"""The JSON Schemas of indexcheck's ``--json`` results, one file per result kind.

The files (``<kind>.schema.json``, shipped in the package) are generated from the result
dataclasses by :func:`schema_of` (``scripts/write_schemas.py``); a test fails when a result
and its committed schema differ. Each schema's ``$id`` names its kind and the
``schema_version`` it describes; :func:`schema_for` picks the schema of a result dict.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from collections.abc import Mapping
from enum import Enum
from functools import cache
from importlib import resources
from typing import Any

from ...errors import InputError
from ..schema import SCHEMA_VERSION

DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: every schema shipped, by the kind it describes (``failure``: a run that did not finish)
KINDS = (
    "check-index",
    "probe-scale",
    "convert-threshold",
    "sweep-threshold",
    "compare-ann",
    "diagnose",
    "judge",
    "diff-index",
    "ci",
    "embed",
    "check-answers",
    "questions-generate",
    "traces-refusals",
    "repair",
    "sheet-verify",
    "sheet-diff",
    "failure",
)


def schema_id(kind: str, version: int = SCHEMA_VERSION) -> str:
    """The ``$id`` of ``kind``'s schema at ``version``."""
    return f"urn:indexcheck:schema:{kind}:{version}"


@cache
def _text(kind: str) -> str:
    return (resources.files(__package__) / f"{kind}.schema.json").read_text(encoding="utf-8")


def load(kind: str) -> dict[str, Any]:
    """The shipped JSON Schema of ``kind`` (one of :data:`KINDS`)."""
    if kind not in KINDS:
        raise InputError(f"no schema for {kind!r}; the kinds are: {', '.join(KINDS)}")
    out: dict[str, Any] = json.loads(_text(kind))
    return out


def kind_for(payload: Mapping[str, Any]) -> str:
    """The schema kind of a ``--json`` result: ``failure`` for a run that did not finish,
    else the command its manifest names (``questions generate`` is ``questions-generate``;
    convert-threshold, traces refusals, sheet verify and sheet diff write no manifest)."""
    if payload.get("complete") is False and "error" in payload and "exit_code" in payload:
        return "failure"
    command = str((payload.get("manifest") or {}).get("command", "")).replace(" ", "-")
    if command in KINDS:
        return command
    if {"from", "to", "value", "result"} <= set(payload):
        return "convert-threshold"
    if {"refusals", "refusal_pattern", "answers", "source"} <= set(payload):
        return "traces-refusals"
    if {"ok", "runs", "problems"} <= set(payload):
        return "sheet-verify"
    if {"run_a", "run_b", "run_level_changes", "answers"} <= set(payload):
        return "sheet-diff"
    raise InputError("not an indexcheck result: pass the JSON written by --json")


def schema_for(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The shipped schema that describes ``payload`` (a ``--json`` result)."""
    return load(kind_for(payload))


# -- generating a schema from a result dataclass ------------------------------------------


@dataclasses.dataclass(frozen=True)
class Shape:
    """How a dataclass's JSON form differs from ``asdict``: keys ``dropped``, ``renamed``
    (field -> key), ``optional`` (left out when unset) and ``added`` (key -> schema)."""

    dropped: tuple[str, ...] = ()
    renamed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    optional: tuple[str, ...] = ()
    added: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def schema_of(
    kind: str, top: type, shapes: Mapping[type, Shape] | None = None, title: str = ""
) -> dict[str, Any]:
    """The JSON Schema of ``top``'s JSON form, its nested dataclasses under ``$defs``;
    every object a dataclass makes refuses keys it does not describe."""
    defs: dict[str, Any] = {}
    body = object_schema(top, shapes or {}, defs)
    body["properties"] = {
        "schema_version": {"const": SCHEMA_VERSION},
        **body["properties"],
        "report": {"type": "array", "items": {"type": "string"}},
    }
    body["required"] = ["schema_version", *body["required"]]
    head = {"$schema": DIALECT, "$id": schema_id(kind), "title": title or kind}
    if "description" in body:
        head["description"] = body.pop("description")
    return {**head, **body, **({"$defs": dict(sorted(defs.items()))} if defs else {})}


def object_schema(cls: type, shapes: Mapping[type, Shape], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of one dataclass's JSON form (nested dataclasses go to ``defs``)."""
    shape = shapes.get(cls, Shape())
    names = vars(sys.modules[cls.__module__])
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if f.name in shape.dropped:
            continue
        hint = eval(f.type, names) if isinstance(f.type, str) else f.type  # noqa: S307
        key = shape.renamed.get(f.name, f.name)
        props[key] = type_schema(hint, shapes, defs)
        if f.name not in shape.optional:
            required.append(key)
    for key, sub in shape.added.items():
        props[key] = sub
        required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    out["additionalProperties"] = False
    if cls.__doc__:
        out["description"] = doc_line(cls)
    return out


def doc_line(cls: type) -> str:
    """The first paragraph of ``cls``'s docstring, on one line."""
    return " ".join((cls.__doc__ or "").split("\n\n")[0].split())


def type_schema(hint: Any, shapes: Mapping[type, Shape], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value of type ``hint`` as ``json.dumps`` writes it."""
    if hint is Any or hint is object:
        return {}
    if hint is type(None) or hint is None:
        return {"type": "null"}
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        subs = [type_schema(a, shapes, defs) for a in typing.get_args(hint)]
        plain = [s.get("type") for s in subs]
        if all(isinstance(t, str) and len(s) == 1 for t, s in zip(plain, subs, strict=True)):
            return {"type": plain}
        return {"anyOf": subs}
    if origin in (list, tuple) or hint in (list, tuple):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        items = type_schema(args[0], shapes, defs) if args else {}
        return {"type": "array", **({"items": items} if items else {})}
    if origin is dict or hint is dict:
        pair = typing.get_args(hint)
        values = type_schema(pair[1], shapes, defs) if pair else {}
        return {"type": "object", **({"additionalProperties": values} if values else {})}
    if isinstance(hint, type) and issubclass(hint, Enum):
        return {"type": "string", "enum": [m.value for m in hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # a placeholder first: a type may refer to itself
            defs[hint.__name__] = object_schema(hint, shapes, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    for py, js in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if hint is py:
            return {"type": js}
    if getattr(hint, "__name__", "") == "Path":
        return {"type": "string"}
    raise TypeError(f"no JSON Schema for the type {hint!r}")


__all__ = [
    "DIALECT",
    "KINDS",
    "Shape",
    "doc_line",
    "kind_for",
    "load",
    "object_schema",
    "schema_for",
    "schema_id",
    "schema_of",
    "type_schema",
]
