"""sweep-threshold under metadata filters: retrieval under each question's filter, and the
separability of in-scope and out-of-scope scores per filter value.

A filter changes the score distributions a threshold sees: the top result of an
out-of-scope question is the nearest chunk *within its filter*, so a threshold calibrated
over the whole index mixes distributions the application never meets. Each question is
searched with its own filter; separability is also reported per distinct filter that at
least :data:`MIN_PER_FILTER` questions carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...embedders import for_queries
from ...embedders.base import Embedder
from ...errors import DimensionMismatchError
from ...filters import canonical
from ...inputs.questions import Question
from ...stores.base import VectorStore
from ..kit.filtered_truth import as_node, require_filtering
from ..kit.retrieval import Retrieved

#: questions a filter needs before its own separability is reported
MIN_PER_FILTER = 10


def question_filters(questions: Sequence[Question], common: Any = None) -> list[Any] | None:
    """Each question's filter AND ``common`` (parsed nodes); None when none has one."""
    from ...inputs.question_filters import run_filters

    return run_filters(len(questions), [q.filter for q in questions], as_node(common))


def filtered_retrieve(
    store: VectorStore,
    embedder: Embedder,
    questions: Sequence[Question],
    fetch: int,
    filters: Sequence[Any],
) -> Retrieved:
    """Embed the questions once, then query the store per distinct filter."""
    require_filtering(store)
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    vectors = np.asarray(
        for_queries(embedder).embed([q.question for q in questions]), dtype=np.float32
    )
    keys = [None if f is None else canonical(f) for f in filters]
    nodes = {k: f for k, f in zip(keys, filters, strict=True) if k is not None}
    D = np.full((len(questions), fetch), np.nan, dtype=np.float32)
    I = np.full((len(questions), fetch), None, dtype=object)
    for key in dict.fromkeys(keys):
        rows = np.flatnonzero([k == key for k in keys])
        if key is None:
            d, i = store.query(vectors[rows], fetch)
        else:
            d, i = store.query(vectors[rows], fetch, nodes[key])
        D[rows], I[rows] = np.asarray(d, dtype=np.float32), np.asarray(i, dtype=object)
    return Retrieved(D, I, vectors)


def per_filter(
    records: Sequence[Any],
    keys: Sequence[str | None],
    exp_key: dict[str, float],
    top_key: dict[str, float],
    unkey: Callable[[float | None], Any],
) -> list[dict[str, Any]]:
    """Per distinct filter: question counts and, with at least MIN_PER_FILTER questions,
    whether its in-scope best scores and out-of-scope top scores separate."""
    out = []
    for key in dict.fromkeys(k for k in keys if k is not None):
        mine = [r for r, k in zip(records, keys, strict=True) if k == key]
        ins = [r for r in mine if r.in_scope]
        oos = [r for r in mine if not r.in_scope and r.top_id is not None and not r.top_is_refusal]
        row: dict[str, Any] = {
            "filter": key,
            "questions": len(mine),
            "in_scope": len(ins),
            "out_of_scope": sum(1 for r in mine if not r.in_scope),
            "separable": None,
        }
        ins_k = [exp_key[r.id] for r in ins if r.id in exp_key]
        out_k = [top_key[r.id] for r in oos]
        if len(mine) >= MIN_PER_FILTER and ins_k and out_k:
            row["separable"] = min(ins_k) > max(out_k)
            row["min_in_scope_best"] = unkey(min(ins_k))
            row["max_out_of_scope_top"] = unkey(max(out_k))
        elif len(mine) < MIN_PER_FILTER:
            row["why_not_judged"] = f"fewer than {MIN_PER_FILTER} questions carry this filter"
        out.append(row)
    return out
