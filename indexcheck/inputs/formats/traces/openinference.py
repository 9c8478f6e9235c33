"""OpenInference / Arize Phoenix span exports: JSON, JSON Lines or Parquet, one span a record.

Three record shapes are read, all carrying the OpenInference attributes:

- the OpenTelemetry SDK's ``ReadableSpan.to_json()`` (what ``ConsoleSpanExporter`` and file
  exporters write): ``{"name", "context": {"trace_id": "0x..", "span_id": "0x.."},
  "parent_id", "start_time", "attributes": {flat dotted keys}, "events": [...]}``;
- Phoenix's span JSON: the same keys, ``span_kind`` beside them and the attributes nested
  (``{"retrieval": {"documents": [{"document": {"content": ...}}]}}``);
- Phoenix's spans dataframe (``get_spans_dataframe()``, saved as Parquet or JSON records):
  columns ``context.trace_id``, ``context.span_id``, ``parent_id``, ``span_kind``,
  ``start_time`` and ``attributes.<name>`` (a list column such as
  ``attributes.retrieval.documents`` holds ``{"document.content": ...}`` structs).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ....errors import DataFileError
from .model import Span, TraceAnswer, flatten, hex_id
from .records import records
from .spans import KIND, answers_from_spans


def _start(value: Any, position: int) -> float:
    """Start time as seconds (ISO text, a pandas/py datetime or nanoseconds), else order."""
    if isinstance(value, dt.datetime):
        return value.timestamp()
    if hasattr(value, "timestamp"):
        return float(value.timestamp())
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) / 1e9 if value > 1e12 else float(value)
    if isinstance(value, str) and value:
        try:
            return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return float(position)


def _attributes(rec: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    nested = rec.get("attributes")
    if isinstance(nested, dict):
        flatten(nested, "", attrs)
    for key, value in rec.items():
        if key.startswith("attributes.") and value is not None:
            flatten(value, key[len("attributes.") :], attrs)
    return attrs


def _events(rec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    events: Any = rec.get("events")
    if hasattr(events, "tolist"):
        events = events.tolist()
    for e in events if isinstance(events, list) else []:
        if isinstance(e, dict):
            attrs = e.get("attributes")
            out.append((str(e.get("name", "")), attrs if isinstance(attrs, dict) else {}))
    return out


def span_from_record(where: str, rec: dict[str, Any], position: int) -> Span:
    """One span from an SDK/Phoenix record; DataFileError naming ``where`` when it has no
    trace or span id."""
    ctx: dict[str, Any] = rec["context"] if isinstance(rec.get("context"), dict) else {}
    trace_id = ctx.get("trace_id") or rec.get("context.trace_id") or rec.get("trace_id")
    span_id = ctx.get("span_id") or rec.get("context.span_id") or rec.get("span_id")
    if not trace_id or not span_id:
        missing = "context.trace_id" if not trace_id else "context.span_id"
        raise DataFileError(
            f"{where}: the span has no {missing}; export whole spans (OpenTelemetry SDK "
            "JSON or Phoenix's spans export), or name the format with --answers-format"
        )
    attrs = _attributes(rec)
    if rec.get("span_kind") and KIND not in attrs:
        attrs[KIND] = rec["span_kind"]
    parent = rec.get("parent_id")
    return Span(
        trace_id=hex_id(trace_id),
        span_id=hex_id(span_id),
        parent_id=hex_id(parent) if parent else None,
        name=str(rec.get("name", "")),
        start=_start(rec.get("start_time"), position),
        attrs=attrs,
        events=_events(rec),
        where=f"{where}, ",
    )


def read_openinference(path: Path) -> list[TraceAnswer]:
    """Every trace of an OpenInference export, one answer per trace id."""
    spans = [
        span_from_record(where, rec, i)
        for i, (where, rec) in enumerate(records(path, ("data", "spans")))
    ]
    if not spans:
        raise DataFileError(f"{path} holds no spans")
    return answers_from_spans(spans, "")
