"""OTLP JSON traces (an ``ExportTraceServiceRequest``, as the OTLP/HTTP JSON exporter and the
Collector's file exporter write it): ``resourceSpans[].scopeSpans[].spans[]``, attributes as
``[{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" |
"arrayValue" | "kvlistValue" | "bytesValue"}}]``, events with their own attributes.

A file may hold one request, or one request per line (JSON Lines, the file exporter's form).
Trace and span ids are hex (OTLP/JSON); base64 ids (protobuf's generic JSON mapping) are
turned into hex. The attributes are then read by either convention in :mod:`.spans`
(OpenInference spans sent over OTLP, as Phoenix receives them, or OTel GenAI spans).
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

from ....errors import DataFileError
from .model import Span, TraceAnswer
from .records import load_json, records
from .spans import answers_from_spans

_HEX = re.compile(r"^[0-9a-fA-F]+$")


def any_value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "doubleValue" in v:
        return v["doubleValue"]
    if "arrayValue" in v:
        return [any_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return key_values((v["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def key_values(items: Any) -> dict[str, Any]:
    """``[{"key", "value"}]`` as a dict (attributes keep their dotted keys: OTLP is flat)."""
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else []:
        if isinstance(kv, dict) and "key" in kv:
            out[str(kv["key"])] = any_value(kv.get("value"))
    return out


def otlp_id(value: Any, size: int) -> str | None:
    """A trace (size 32) or span (16) id as hex; base64 input is decoded."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == size and _HEX.match(value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex().rjust(size, "0")
    except (binascii.Error, ValueError):
        return value


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    """``value`` as a list of JSON objects (missing: none); anything else is refused,
    naming ``where`` (``resourceSpans: NaN`` was a TypeError through the catch-all)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DataFileError(f"{where} must be a list of objects; export the traces as OTLP JSON")
    return value


def _spans(where: str, request: dict[str, Any]) -> list[Span]:
    out: list[Span] = []
    for r, rs in enumerate(_objects(request.get("resourceSpans"), f"{where}resourceSpans")):
        scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")
        for s, ss in enumerate(_objects(scopes, f"{where}resourceSpans[{r}].scopeSpans")):
            at_scope = f"{where}resourceSpans[{r}].scopeSpans[{s}].spans"
            for n, sp in enumerate(_objects(ss.get("spans"), at_scope)):
                at = f"{at_scope}[{n}]"
                trace_id, span_id = otlp_id(sp.get("traceId"), 32), otlp_id(sp.get("spanId"), 16)
                if not trace_id or not span_id:
                    missing = "traceId" if not trace_id else "spanId"
                    raise DataFileError(f"{at}: the span has no {missing}")
                events = [
                    (str(e.get("name", "")), key_values(e.get("attributes")))
                    for e in sp.get("events") or []
                    if isinstance(e, dict)
                ]
                try:
                    start = float(sp.get("startTimeUnixNano") or 0) / 1e9
                except (TypeError, ValueError):
                    start = float(len(out))
                out.append(
                    Span(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_id=otlp_id(sp.get("parentSpanId"), 16),
                        name=str(sp.get("name", "")),
                        start=start,
                        attrs=key_values(sp.get("attributes")),
                        events=events,
                        where=f"{at}, ",
                    )
                )
    return out


def read_otlp(path: Path) -> list[TraceAnswer]:
    """Every trace of an OTLP JSON file (one request, or one per line)."""
    if path.suffix.lower() == ".json":
        doc = load_json(path)
        requests = doc if isinstance(doc, list) else [doc]
        spans = [
            s
            for i, req in enumerate(requests)
            if isinstance(req, dict)
            for s in _spans(f"{path.name} [{i}] " if len(requests) > 1 else f"{path.name} ", req)
        ]
    else:
        spans = [s for where, req in records(path) for s in _spans(f"{where} ", req)]
    if not spans:
        raise DataFileError(f"{path} holds no spans under resourceSpans[].scopeSpans[].spans[]")
    return answers_from_spans(spans, "")
