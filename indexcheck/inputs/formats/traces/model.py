"""What every trace reader hands on: one :class:`TraceAnswer` per trace, its documents in rank
order, and the spans they came from. Pure data; nothing here reads a file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: keys an input or output object holds the question or answer text under, most specific first
QUESTION_KEYS = ("question", "query", "input", "q", "user_input", "prompt")
ANSWER_KEYS = ("answer", "output", "text", "content", "response", "result")
#: GenAI attributes whose value is one structured object, never flattened
WHOLE = frozenset({"gen_ai.retrieval.documents", "gen_ai.input.messages", "gen_ai.output.messages"})


@dataclass(frozen=True)
class TraceDoc:
    """One retrieved document as the trace recorded it; ``where`` names the file, line and
    span or run, ``field`` where it stands there (``retrieval.documents.0``),
    ``id_field``/``text_field`` the keys that would hold its id and its text."""

    where: str
    field: str
    id: str | None
    text: str | None
    score: float | None
    id_field: str
    text_field: str


@dataclass
class TraceAnswer:
    """One trace read as an answer; ``where`` names the file, line and span or run that a
    message about it should point to."""

    id: str
    where: str
    question: str | None
    answer: str | None
    docs: list[TraceDoc] = field(default_factory=list)


@dataclass
class Span:
    """One span with its attributes flattened to dotted keys (``retrieval.documents.0.
    document.id``); ``where`` is the file and line or row it was read from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    where: str = ""


#: deeper than this, a value is kept whole (no trace attribute nests this deep; a hostile
#: file must not exhaust the interpreter's stack)
MAX_DEPTH = 32


def flatten(
    value: Any, prefix: str = "", out: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Nested dicts and lists as one dict of dotted keys, list positions as numbers:
    ``{"a": {"b": [{"c": 1}]}}`` -> ``{"a.b.0.c": 1}``. Phoenix keeps attributes nested,
    the SDK and OTLP flat; both end up the same. A value under ``metadata`` or a GenAI
    structured attribute (``gen_ai.retrieval.documents``, messages) stays whole."""
    out = {} if out is None else out
    if prefix.endswith("metadata") or prefix in WHOLE or depth > MAX_DEPTH:
        out[prefix] = value
    elif isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out, depth + 1)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out, depth + 1)
    elif hasattr(value, "tolist") and not isinstance(value, str):
        flatten(value.tolist(), prefix, out, depth + 1)
    else:
        out[prefix] = value
    return out


def hex_id(value: Any) -> str:
    """A trace or span id as lower-case hex without ``0x`` (SDK JSON writes ``0x...``)."""
    text = str(value).strip()
    return text[2:].lower() if text[:2].lower() == "0x" else text.lower()


def as_text(value: Any, keys: tuple[str, ...], depth: int = 0) -> str | None:
    """The text in an input or output: a string (a JSON object string is opened), or the
    first of ``keys`` in an object, or its only string value."""
    if value is None or depth > MAX_DEPTH:
        return None
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("{"):
            try:
                parsed = json.loads(stripped)
            except (json.JSONDecodeError, RecursionError):
                return value
            return as_text(parsed, keys, depth + 1) if isinstance(parsed, dict) else value
        return value
    if isinstance(value, dict):
        for k in keys:
            if k in value:
                return as_text(value[k], keys, depth + 1)
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
        return None
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        return as_text(value[-1], keys, depth + 1)  # a message list: the last message
    return None


def number(value: Any) -> float | None:
    """A finite score, or None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if f == f and f not in (float("inf"), float("-inf")) else None


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def id_or_none(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and value.strip() else None


def document(
    where: str,
    base: str,
    values: Mapping[str, Any],
    id_key: str,
    text_key: str,
    score: Any,
    *,
    flat: bool = False,
) -> TraceDoc:
    """The document at ``base`` of a trace: its id under ``id_key`` and its text under
    ``text_key`` of ``values`` (keys under ``base`` itself when ``flat``: span attributes
    ``BASE.document.id``), its score ``score``; the fields named ``BASE.KEY``."""
    id_field, text_field = f"{base}.{id_key}", f"{base}.{text_key}"
    look = (lambda key: values.get(f"{base}.{key}")) if flat else values.get
    return TraceDoc(
        where,
        base,
        id_or_none(look(id_key)),
        text_or_none(look(text_key)),
        number(score),
        id_field,
        text_field,
    )
