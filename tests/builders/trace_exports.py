"""Test-only: the files a traced run of :mod:`tests.builders.traced_pipeline` is exported to.

Written by the real encoders where one exists: the SDK's JSONL (``ConsoleSpanExporter``,
recorded by the pipeline), the SDK's span JSON as a list, and OTLP JSON through
``opentelemetry-exporter-otlp-proto-common``'s ``encode_spans`` and protobuf's JSON mapping
(ids turned to hex, as OTLP/JSON requires); LangSmith runs as LangSmith's serializer dumped
them. Built here from the recorded spans, because their SDKs cannot export offline: the
Parquet file in the column layout of Phoenix's spans dataframe (``context.span_id``,
``attributes.*``; Phoenix writes it from its server) and the Langfuse export (traces with
``observations``, the public API's schema; Langfuse's SDK only sends spans to a server).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from tests.builders.traced_pipeline import Recorded


def _hex(b64: str, size: int) -> str:
    return base64.b64decode(b64).hex().rjust(size, "0")


def otlp_json(spans: list[Any]) -> dict[str, Any]:
    """ExportTraceServiceRequest in OTLP/JSON: the SDK's protobuf encoder, then protobuf's
    JSON mapping, with trace and span ids as hex (OTLP/JSON's one deviation from it)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    data = MessageToDict(encode_spans(spans))
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                sp["traceId"] = _hex(sp["traceId"], 32)
                sp["spanId"] = _hex(sp["spanId"], 16)
                if "parentSpanId" in sp:
                    sp["parentSpanId"] = _hex(sp["parentSpanId"], 16)
    return data


#: attributes Phoenix's dataframe keeps as one list column of ``{"document.content": ...}``
LIST_COLUMNS = re.compile(r"^(retrieval\.documents|llm\.(?:input|output)_messages)\.(\d+)\.(.+)$")


def phoenix_frame(spans: list[Any]) -> Any:
    """The spans in the columns of Phoenix's spans dataframe (one row per span):
    ``context.*``, ``span_kind``, ``attributes.<name>``; documents and messages as list
    columns (``attributes.retrieval.documents`` = ``[{"document.content": ...}, ...]``)."""
    import pandas as pd

    rows = []
    for s in spans:
        row: dict[str, Any] = {
            "name": s.name,
            "span_kind": s.attributes.get("openinference.span.kind"),
            "parent_id": None if s.parent is None else f"{s.parent.span_id:016x}",
            "start_time": pd.Timestamp(s.start_time, unit="ns", tz="UTC"),
            "end_time": pd.Timestamp(s.end_time, unit="ns", tz="UTC"),
            "context.span_id": f"{s.context.span_id:016x}",
            "context.trace_id": f"{s.context.trace_id:032x}",
        }
        lists: dict[str, dict[int, dict[str, Any]]] = {}
        for key, value in s.attributes.items():
            m = LIST_COLUMNS.match(key)
            if m:
                lists.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[m.group(3)] = value
            else:
                row[f"attributes.{key}"] = list(value) if isinstance(value, tuple) else value
        for name, items in lists.items():
            row[f"attributes.{name}"] = [items[i] for i in sorted(items)]
        rows.append(row)
    return pd.DataFrame(rows)


def langfuse_export(spans: list[Any]) -> list[dict[str, Any]]:
    """Traces with their observations in Langfuse's public API schema, from the spans."""
    kinds = {"RETRIEVER": "RETRIEVER", "LLM": "GENERATION", "CHAIN": "CHAIN"}
    traces: dict[str, dict[str, Any]] = {}
    for s in sorted(spans, key=lambda s: s.start_time):
        a = s.attributes
        tid = f"{s.context.trace_id:032x}"
        obs: dict[str, Any] = {
            "id": f"{s.context.span_id:016x}",
            "traceId": tid,
            "type": kinds.get(a.get("openinference.span.kind"), "SPAN"),
            "name": s.name,
            "startTime": _iso(s.start_time),
            "endTime": _iso(s.end_time),
            "parentObservationId": None if s.parent is None else f"{s.parent.span_id:016x}",
            "input": a.get("input.value"),
            "output": a.get("output.value"),
            "metadata": {},
        }
        if obs["type"] == "RETRIEVER":
            n, docs = 0, []
            while f"retrieval.documents.{n}.document.content" in a:
                meta = json.loads(a.get(f"retrieval.documents.{n}.document.metadata", "{}"))
                docs.append({"page_content": a[f"retrieval.documents.{n}.document.content"],
                             "metadata": meta, "type": "Document"})  # fmt: skip
                n += 1
            obs["output"] = docs
        if obs["type"] == "GENERATION":
            obs["input"] = _messages(a, "llm.input_messages")
            out = _messages(a, "llm.output_messages")
            obs["output"] = out[0] if out else None
        trace = traces.setdefault(tid, {"id": tid, "observations": []})
        if s.parent is None:
            trace |= {"name": s.name, "timestamp": _iso(s.start_time),
                      "input": a.get("input.value"), "output": a.get("output.value")}  # fmt: skip
        trace["observations"].append(obs)
    return list(traces.values())


def _messages(attrs: Any, prefix: str) -> list[dict[str, Any]]:
    out, n = [], 0
    while f"{prefix}.{n}.message.role" in attrs:
        out.append({"role": attrs[f"{prefix}.{n}.message.role"],
                    "content": attrs.get(f"{prefix}.{n}.message.content", "")})  # fmt: skip
        n += 1
    return out


def _iso(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).isoformat().replace("+00:00", "Z")


NAMES = {
    "answers": "answers.jsonl",  # the pipeline's own answers, in indexcheck's format
    "openinference_jsonl": "phoenix-spans.jsonl",
    "openinference_json": "phoenix-spans.json",
    "openinference_parquet": "phoenix-spans.parquet",
    "otlp": "otlp-openinference.json",
    "otlp_genai": "otlp-genai.json",
    "langfuse": "langfuse-traces.json",
    "langsmith": "langsmith-runs.jsonl",
}


def write_exports(rec: Recorded, folder: Path) -> dict[str, Path]:
    """Every export of ``rec`` in ``folder``: name (:data:`NAMES`) -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {name: folder / file for name, file in NAMES.items()}
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows)  # noqa: E731
    texts = {
        "answers": lines(rec.answers),
        "openinference_jsonl": rec.jsonl_export,
        "openinference_json": json.dumps([json.loads(s.to_json(indent=None)) for s in rec.spans]),
        "otlp": json.dumps(otlp_json(rec.spans)),
        "otlp_genai": json.dumps(otlp_json(rec.genai_spans)),
        "langfuse": json.dumps(langfuse_export(rec.spans)),
        "langsmith": lines(rec.runs),
    }
    for name, text in texts.items():
        out[name].write_text(text, "utf-8")
    phoenix_frame(rec.spans).to_parquet(out["openinference_parquet"])
    return out
