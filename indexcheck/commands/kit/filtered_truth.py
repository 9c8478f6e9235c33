"""Exact truth under metadata filters: exact search over exactly the chunks that match.

One streamed pass over the store serves every filter of a run: queries are grouped by
their distinct filter (canonical form), each block's metadata is evaluated once per
distinct filter (:func:`indexcheck.filters.evaluate`, with the engine's own rule for
``$ne``/``$nin`` on a missing field, :data:`~indexcheck.filters.ENGINE_MISSING`), and each
group's running top-k is merged with the block's matching rows only. Memory stays what
:func:`indexcheck.commands.kit.exact.exact_topk` holds: one block and the running top-k.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import FilterError
from ...filters import (
    ENGINE_MISSING,
    Missing,
    Node,
    canonical,
    check_fields,
    evaluate,
    metadata_fields,
    parse_filter,
    to_obj,
)
from ...filters.grammar import And, Cond, Or
from ...stores.base import VectorStore
from .exact import _block_topk, _merge, as_similarity, block_rows, prepare
from .ground_truth import GroundTruth

GROUND_TRUTH_FILTERED = "local_exact_filtered"
#: selectivity buckets: share of the index a filter matches (upper bounds, inclusive)
BUCKETS = (("<=1%", 0.01), ("1-10%", 0.10), ("10-50%", 0.50), (">50%", float("inf")))

Say = Callable[[str], None]


def bucket_of(share: float) -> str:
    """The selectivity bucket of a filter matching ``share`` of the index."""
    return next(name for name, top in BUCKETS if share <= top)


def can_filter(store: Any) -> bool:
    """True when the store's ``query`` takes a ``filter`` (every BaseStore does)."""
    import inspect

    try:
        params = inspect.signature(store.query).parameters
    except (TypeError, ValueError):
        return False
    return "filter" in params


def require_filtering(store: Any) -> None:
    """FilterError (exit 2) for a store whose search cannot take a filter."""
    if not can_filter(store):
        name = getattr(store, "spec", "") or type(store).__name__
        raise FilterError(
            f"{name} cannot filter its search (its query takes no filter); run without "
            "--filter and without per-question filters"
        )


def as_node(value: Any) -> Node | None:
    """A parsed filter from JSON text, a dict or a node; None stays None."""
    if value is None or isinstance(value, Cond | And | Or):
        return value
    return parse_filter(value)


@dataclass
class FilterGroups:
    """The queries grouped by their filter: ``keys[i]`` is query i's canonical filter
    (None: unfiltered), ``nodes`` each distinct filter's tree."""

    keys: list[str | None]
    nodes: dict[str, Node]

    @classmethod
    def of(cls, filters: Sequence[Any]) -> FilterGroups:
        keys: list[str | None] = []
        nodes: dict[str, Node] = {}
        for f in filters:
            node = as_node(f)
            key = None if node is None else canonical(node)
            if node is not None and key is not None:
                nodes.setdefault(key, node)
            keys.append(key)
        return cls(keys, nodes)

    def rows(self, key: str | None) -> np.ndarray:
        return np.flatnonzero(np.array([k == key for k in self.keys], dtype=bool))

    def distinct(self) -> list[str | None]:
        return list(dict.fromkeys(self.keys))

    @property
    def any(self) -> bool:
        return bool(self.nodes)


@dataclass
class FilterTruth:
    """What the filtered truth pass learnt besides the neighbours: per query the number
    of chunks its filter matches, the index size, and per distinct filter its figures."""

    matching: np.ndarray  # int64 (q,)
    count: int
    groups: FilterGroups
    missing: str
    per_filter: list[dict[str, Any]] = field(default_factory=list)
    #: the metadata of the chunks asked for with ``keep_metadata_of`` (e.g. expected ones)
    metadata_of: dict[str, Any] = field(default_factory=dict)

    def share(self) -> np.ndarray:
        return self.matching / max(self.count, 1)


def filtered_ground_truth(
    store: VectorStore,
    queries: np.ndarray,
    filters: Sequence[Any],
    depth: int,
    family: str,
    progress: Say | None = None,
    batch: int | None = None,
    keep_metadata_of: Any = (),
) -> tuple[GroundTruth, FilterTruth]:
    """Exact top-``depth`` of each query among the chunks its filter matches (all chunks
    for a query without one), in one pass over the store; NaN / None where fewer match.

    Raises FilterError (exit 2) when the store gives no metadata with its vectors, or a
    filter names a field that no chunk has (with the known fields and a did-you-mean).
    """
    say = progress or (lambda _m: None)
    groups = FilterGroups.of(filters)
    if groups.any:
        require_filtering(store)
    info = store.info()
    missing = ENGINE_MISSING.get(info.backend, Missing.INCLUDE)
    t0 = time.perf_counter()
    xq = prepare(queries, family)
    q = xq.shape[0]
    if len(groups.keys) != q:
        raise FilterError(f"{len(groups.keys)} filters given for {q} queries; give one each")
    higher = family != "l2"
    sentinel = np.float32(-np.inf if higher else np.inf)
    best_d = np.full((q, depth), sentinel, dtype=np.float32)
    best_i = np.full((q, depth), None, dtype=object)
    rows_of = {key: groups.rows(key) for key in groups.distinct()}
    matched = {key: 0 for key in rows_of}
    known: set[str] = set()
    count = 0
    wanted, kept = set(keep_metadata_of), {}
    say(f"exact search under {len(groups.nodes)} distinct filters over every stored vector")
    for b in store.iter_vectors(batch or min(block_rows(info.dimension), 8192)):
        n = len(b.ids)
        if n == 0:
            continue
        count += n
        metadata = b.metadata
        if metadata is None and groups.any and hasattr(store, "metadata_of"):
            metadata = store.metadata_of(b.ids)  # kept beside the vectors (LangChain FAISS)
        if metadata is None and groups.any:
            named = "metadata" in (getattr(type(store), "params", None) or {})
            raise FilterError(
                f"{store.spec} gives no metadata with its vectors, so no filter can be "
                "evaluated on it"
                + ("; name its metadata column in the spec (&metadata=COLUMN)" if named else "")
            )
        meta = metadata or []
        if groups.any:
            known.update(metadata_fields(meta))
        ids = list(b.ids)
        for i in (j for j, vid in enumerate(ids) if vid in wanted):
            kept[ids[i]] = meta[i] if i < len(meta) else {}
        vecs = np.asarray(b.vectors, dtype=np.float32)
        ok = np.asarray(b.dims) == info.dimension
        for key, qrows in rows_of.items():
            mask = ok.copy()
            if key is not None:
                mask &= evaluate(groups.nodes[key], meta, missing=missing)
            sel = np.flatnonzero(mask)
            matched[key] += int(sel.size)
            if sel.size == 0:
                continue
            block = ([ids[i] for i in sel], vecs[sel])
            bd, bi = _block_topk(xq[qrows], depth, family, block)
            nd, ni = _merge(best_d[qrows], best_i[qrows], bd, bi, higher, depth)
            best_d[qrows], best_i[qrows] = nd, ni
    for node in groups.nodes.values():
        check_fields(node, known)
    best_d[np.isinf(best_d)] = np.nan
    sim = as_similarity(best_d, family)
    matching = np.zeros(q, dtype=np.int64)
    per_filter = []
    for key, qrows in rows_of.items():
        matching[qrows] = matched[key]
        if key is None:
            continue
        share = matched[key] / max(count, 1)
        per_filter.append(
            {
                "filter": to_obj(groups.nodes[key]),
                "canonical": key,
                "queries": int(qrows.size),
                "matching_chunks": matched[key],
                "share": round(share, 6),
                "bucket": bucket_of(share),
            }
        )
    truth = GroundTruth(best_i, sim, GROUND_TRUTH_FILTERED, time.perf_counter() - t0)
    return truth, FilterTruth(matching, count, groups, str(missing), per_filter, kept)
