"""LangSmith runs exports: JSON (a list, or ``{"runs": [...]}``) or JSON Lines of runs.

A run (LangSmith's run schema, as ``LangChainTracer`` uploads it and the runs API lists it):
``id``, ``trace_id``, ``parent_run_id``, ``run_type`` (``chain`` / ``retriever`` / ``llm`` /
``prompt`` / ``parser`` / ``tool``), ``name``, ``start_time``, ``dotted_order``, ``inputs``,
``outputs``. A retriever's ``outputs.documents`` are LangChain documents: ``{page_content,
metadata, id?, type: "Document"}``, or their serialized form ``{"lc": 1, "kwargs": {...}}``.
An llm run's ``outputs.generations[0][0]`` holds ``text`` (and ``message``).

The runs are grouped by ``trace_id`` (a run without one follows ``parent_run_id`` up to its
root); the question is the root run's input, the answer its output, else the last llm run's.
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


def _document(item: Any) -> dict[str, Any]:
    if isinstance(item, dict) and isinstance(item.get("kwargs"), dict) and item.get("lc"):
        return dict(item["kwargs"])  # langchain_core.load.dumpd form
    return item if isinstance(item, dict) else {}


def documents(run: dict[str, Any], where: str) -> list[TraceDoc]:
    outputs: dict[str, Any] = run["outputs"] if isinstance(run.get("outputs"), dict) else {}
    docs = outputs.get("documents") or outputs.get("output") or []
    out = []
    for n, raw in enumerate(docs if isinstance(docs, list) else []):
        d = _document(raw)
        meta: dict[str, Any] = d["metadata"] if isinstance(d.get("metadata"), dict) else {}
        base = f"outputs.documents[{n}]"
        score = meta.get("score", d.get("score"))
        out.append(document(where, base, d, "id", "page_content", score))
    return out


def _llm_text(run: dict[str, Any]) -> str | None:
    outputs: dict[str, Any] = run["outputs"] if isinstance(run.get("outputs"), dict) else {}
    gens = outputs.get("generations")
    if isinstance(gens, list) and gens:
        first = gens[0][0] if isinstance(gens[0], list) and gens[0] else gens[0]
        if isinstance(first, dict):
            return text_or_none(first.get("text")) or as_text(
                _document(first.get("message")), ANSWER_KEYS
            )
    return as_text(outputs, ANSWER_KEYS)


def read_langsmith(path: Path) -> list[TraceAnswer]:
    """Every trace of a LangSmith runs export, one answer per trace."""
    runs: list[tuple[str, dict[str, Any]]] = []
    for where, run in records(path, ("runs", "data")):
        if not id_or_none(run.get("id")) or "run_type" not in run:
            missing = "id" if not id_or_none(run.get("id")) else "run_type"
            raise DataFileError(f"{where}: the run has no '{missing}'; export whole runs")
        runs.append((where, run))
    if not runs:
        raise DataFileError(f"{path} holds no runs")
    by_id = {str(r["id"]): r for _, r in runs}

    def trace_of(run: dict[str, Any]) -> str:
        seen = set()
        while not run.get("trace_id") and run.get("parent_run_id") in by_id:
            if run["id"] in seen:
                break
            seen.add(run["id"])
            run = by_id[run["parent_run_id"]]
        return str(run.get("trace_id") or run["id"])

    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, run in runs:
        groups.setdefault(trace_of(run), []).append((where, run))
    out = []
    for tid, group in groups.items():
        group.sort(key=lambda wr: str(wr[1].get("dotted_order") or wr[1].get("start_time") or ""))
        roots = [wr for wr in group if wr[1].get("parent_run_id") not in by_id]
        where, root = roots[0] if roots else group[0]
        retrievers = [wr for wr in group if wr[1].get("run_type") == "retriever"]
        llms = [wr for wr in group if wr[1].get("run_type") == "llm"]
        question = as_text(root.get("inputs"), QUESTION_KEYS)
        if not question and retrievers:
            question = as_text(retrievers[0][1].get("inputs"), QUESTION_KEYS)
        answer = (
            as_text(root.get("outputs"), ANSWER_KEYS) if root.get("run_type") != "llm" else None
        )
        if answer is None and llms:
            answer = _llm_text(llms[-1][1])
        docs = [d for w, r in retrievers for d in documents(r, f"{w}, run {r['id']}")]
        out.append(
            TraceAnswer(tid, f"{where}, trace {tid}, run {root['id']}", question, answer, docs)
        )
    return out
