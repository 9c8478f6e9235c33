"""Langfuse trace exports: JSON (a list of traces, or the API's ``{"data": [...]}``) or JSON
Lines, each trace with its ``observations``.

A trace (Langfuse's public API, ``GET /api/public/traces/{id}``): ``id``, ``name``,
``timestamp``, ``input``, ``output``, ``observations``. An observation: ``id``, ``traceId``,
``type`` (``SPAN`` / ``GENERATION`` / ``EVENT``, and since the v3 SDKs ``CHAIN`` /
``RETRIEVER`` / ``EMBEDDING`` / ``AGENT`` / ``TOOL``), ``name``, ``startTime``,
``parentObservationId``, ``input``, ``output``, ``metadata``. Langfuse's LangChain handler
records a retriever's output as a list of documents ``{page_content, metadata, id?}``.

The question is the trace's input (else its root observation's, else the first retriever's);
the answer the trace's output (else the root observation's, else the last generation's).
A retriever is an observation of type RETRIEVER, or a SPAN whose output is a document list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....errors import DataFileError
from .model import (
    ANSWER_KEYS,
    QUESTION_KEYS,
    TraceAnswer,
    TraceDoc,
    as_text,
    document,
    id_or_none,
    text_or_none,
)
from .records import records


def _doc_list(output: Any) -> list[Any] | None:
    if isinstance(output, dict) and isinstance(output.get("documents"), list):
        output = output["documents"]
    if (
        isinstance(output, list)
        and output
        and all(isinstance(d, dict) and ("page_content" in d or "pageContent" in d) for d in output)
    ):
        return output
    return None


def _is_retriever(obs: dict[str, Any]) -> bool:
    return (
        str(obs.get("type", "")).upper() == "RETRIEVER" or _doc_list(obs.get("output")) is not None
    )


def documents(obs: dict[str, Any], where: str) -> list[TraceDoc]:
    out = []
    for n, d in enumerate(_doc_list(obs.get("output")) or []):
        meta: dict[str, Any] = d["metadata"] if isinstance(d.get("metadata"), dict) else {}
        key = "page_content" if "page_content" in d else "pageContent"
        base = f"output[{n}]"
        out.append(document(where, base, d, "id", key, meta.get("score", d.get("score"))))
    return out


def read_langfuse(path: Path) -> list[TraceAnswer]:
    """Every trace of a Langfuse export, one answer per trace."""
    out = []
    for where, trace in records(path, ("data", "traces")):
        tid = id_or_none(trace.get("id"))
        observations = trace.get("observations")
        if not tid or not isinstance(observations, list):
            missing = "id" if not tid else "observations"
            raise DataFileError(
                f"{where}: the trace has no '{missing}'; export traces with their observations"
            )
        obs = sorted(
            (o for o in observations if isinstance(o, dict)),
            key=lambda o: str(o.get("startTime", "")),
        )
        ids = {o.get("id") for o in obs}
        roots = [o for o in obs if o.get("parentObservationId") not in ids]
        root = roots[0] if roots else {}
        retrievers = [o for o in obs if _is_retriever(o)]
        gens = [o for o in obs if str(o.get("type", "")).upper() == "GENERATION"]
        question = as_text(trace.get("input"), QUESTION_KEYS) or as_text(
            root.get("input"), QUESTION_KEYS
        )
        if not question and retrievers:
            question = as_text(retrievers[0].get("input"), QUESTION_KEYS)
        answer = as_text(trace.get("output"), ANSWER_KEYS)
        if answer is None and root and not _is_retriever(root):
            answer = as_text(root.get("output"), ANSWER_KEYS)
        if answer is None and gens:
            answer = as_text(gens[-1].get("output"), ANSWER_KEYS)
        docs = [d for o in retrievers for d in documents(o, f"{where}, observation {o.get('id')}")]
        out.append(
            TraceAnswer(
                tid, f"{where}, trace {tid}", question, text_or_none(answer) or answer, docs
            )
        )
    if not out:
        raise DataFileError(f"{path} holds no traces")
    return out
