"""diagnose under metadata filters: retrieval and exact truth under each question's filter,
and the two labels only a filter can explain.

- ``FILTERED_OUT``: no expected chunk matches the question's filter. The chunk's metadata
  and the filter are shown side by side: a metadata bug, not a retrieval bug.
- ``SHORT_RESULTS``: the expected chunk is within the exact top under the filter, but the
  backend returned fewer than k results while more chunks match (it filtered after a
  bounded candidate walk), so the chunk never came back.

The other labels then apply within the filtered set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...filters import ENGINE_MISSING, Missing, canonical, evaluate, fields_of
from ...inputs.questions import Question
from ...stores.base import VectorStore
from ..kit.exact import family_of
from ..kit.filtered_truth import FilterTruth, filtered_ground_truth
from ..kit.retrieval import Retrieved
from ..sweep_threshold.filters import filtered_retrieve


@dataclass
class FilteredRun:
    """The filtered retrieval, its exact truth, and per question its filter node."""

    ann: Retrieved
    exact_I: np.ndarray
    truth: FilterTruth
    nodes: list[Any]


def filtered_run(
    store: VectorStore,
    embedder: Embedder,
    questions: Sequence[Question],
    fetch: int,
    filters: Sequence[Any],
) -> FilteredRun:
    """Retrieve under each question's filter, and the exact top ``fetch`` under it."""
    ann = filtered_retrieve(store, embedder, questions, fetch, filters)
    family = family_of(store.info().score)
    expected = {e for q in questions if q.in_scope for e in q.expected}
    truth, ft = filtered_ground_truth(
        store, ann.vectors, filters, fetch, family, keep_metadata_of=expected
    )
    return FilteredRun(ann, truth.ids, ft, list(filters))


def _shown(meta: Any, tested: list[str] | None = None) -> str:
    """The chunk's metadata as JSON, the keys the filter tests first and never cut: only
    what follows them is shortened past 120 characters."""
    text = json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= 120:
        return text
    if not isinstance(meta, dict):
        return text[:117] + "..."
    tops = list(dict.fromkeys(f.split(".")[0] for f in tested or []))
    first = {key: meta[key] for key in tops if key in meta}
    head = json.dumps(first, ensure_ascii=False, sort_keys=True, default=str)[:-1]
    rest = {key: v for key, v in sorted(meta.items()) if key not in first}
    tail = json.dumps(rest, ensure_ascii=False, sort_keys=True, default=str)[1:]
    room = max(0, 120 - len(head))
    more = tail if len(tail) <= room else tail[: max(0, room - 4)] + "...}"
    return head + (", " if first and rest else "") + more if rest else head + "}"


def filtered_out(run: FilteredRun, row: int, q: Question, missing: Any) -> str | None:
    """The detail of a FILTERED_OUT question (no expected chunk matches), else None."""
    node = run.nodes[row]
    if node is None or not q.expected:
        return None
    metas = [run.truth.metadata_of.get(e) for e in q.expected]
    known = [(e, m) for e, m in zip(q.expected, metas, strict=True) if m is not None]
    if not known:
        return None
    mask = evaluate(node, [m for _, m in known], missing=missing)
    if mask.any():
        return None
    e, m = known[0]
    return (
        f"expected chunk '{e}' has metadata {_shown(m, fields_of(node))}, which the "
        "question's filter "
        f"{canonical(node)} does not match: fix the chunk's metadata or the filter"
    )


def short_results(run: FilteredRun, row: int, returned: int, k: int) -> str | None:
    """The detail of SHORT_RESULTS (fewer than k back while more chunks match), else None."""
    matching = int(run.truth.matching[row])
    if run.nodes[row] is None or returned >= min(k, matching):
        return None
    return (
        f"the backend returned {returned} results under the filter "
        f"{canonical(run.nodes[row])} although {matching} chunks match it (fewer than k={k}): "
        "it filters after a bounded candidate search; raise the search effort "
        "(hnsw.ef_search, hnsw_ef, efSearch) or prefilter"
    )


def missing_rule(store: VectorStore) -> Missing:
    return ENGINE_MISSING.get(store.info().backend, Missing.INCLUDE)
