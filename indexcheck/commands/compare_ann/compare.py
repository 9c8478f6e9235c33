"""compare-ann's measurement: exact neighbours, the store's approximate lists at each
fetch depth re-ranked to k, and the metrics and recommendation per depth (the method in
the package docstring); and the same at each value of a search parameter (one shared
ground truth), the sweep made part of the verdict."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...errors import DimensionMismatchError, FilterError, InputError
from ...filters import fields_of
from ...stores.base import VectorStore, as_float32_matrix
from ..kit.exact import family_of, prepare
from ..kit.ground_truth import GroundTruth, Lookup, ground_truth
from .compression import compression_of
from .filtered import (
    filter_figures,
    filtered_search,
    filtered_truths,
    returned_counts,
    short_sentence,
    with_empty_filters,
)
from .metrics import (
    PerQuery,
    compression_loss,
    fetch_row,
    final_lists,
    score,
    tolerance,
    true_sim,
    worst,
)
from .plans import exact_plan_warnings, main_filter, plan_of
from .queries import QuerySet, as_query_set
from .result import AnnResult, AnnVerdict, FetchRow, Truths, clears, row_dict
from .settings import CompareAnnSettings, swept, vector_cache_dir
from .truth import MatrixLookup, true_truth
from .wording import (
    cannot_fail,
    compression_warnings,
    effort_param,
    insufficient,
    recommendation,
    sentences,
    sweep_none,
    sweep_recommendation,
)

DEFAULT_FETCH = (4, 10, 20, 50)
TIE_RTOL = 1e-5
#: exact ranks are counted this deep (at least) for the rank displacement
RANK_CAP = 50

Say = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


def rank_cap(k: int) -> int:
    """How deep exact ranks are counted for the rank displacement: max(50, 2k)."""
    return max(RANK_CAP, 2 * k)


def fetch_depths(k: int, fetch: Sequence[int] | None) -> list[int]:
    """Sorted distinct depths, each at least k. ``None`` (or the default 4,10,20,50): k and
    the default depths deeper than k."""
    if k < 1:
        raise InputError(f"-k must be at least 1, got {k}")
    if fetch is None or tuple(fetch) == DEFAULT_FETCH:
        return sorted({k, *(f for f in DEFAULT_FETCH if f > k)})
    depths = sorted(set(int(f) for f in fetch))
    if not depths:
        raise InputError("--fetch needs at least one depth, e.g. --fetch 4,10,20,50")
    low = [f for f in depths if f < k]
    if low:
        raise InputError(
            f"fetch depth {low[0]} is smaller than k={k}; every depth must be at least k "
            "(the results are re-ranked and cut to k)"
        )
    return depths


def compare_ann(
    settings: CompareAnnSettings,
    store: VectorStore,
    queries: np.ndarray | QuerySet,
    progress: Say | None = None,
    open_at: Callable[[int], VectorStore] | None = None,
) -> AnnResult:
    """Measure approximate search against exact search at each fetch depth.

    ``queries`` float32 (q, d) (or a :class:`QuerySet`). From ``settings``: ``k`` results
    kept; ``fetch`` depths (each >= k; None: k and the defaults deeper than k); ``target``
    the best-chunk miss rate to reach (the recommendation is the smallest depth whose
    observed rate is at most it); ``truth`` ground truth from an earlier run on the same
    queries; ``true_vectors`` the vectors as added (figures measured against exact search
    over them, the compression loss reported beside); ``seed`` for the bootstrap;
    ``filters`` one parsed filter per query (the truth over the chunks each matches, the
    store searched under it); ``cache_dir`` the vector cache. ``sweep`` (``(key, values)``)
    measures the same at each value, ``open_at(value)`` giving the index searched with
    ``key=value``, and makes the sweep part of the verdict (:func:`apply_sweep`).
    """
    k, fetch, target, seed = settings.k, settings.fetch, settings.target, settings.seed
    filters, true_vectors = settings.filters, settings.true_vectors
    say = progress or _quiet
    qs = queries if isinstance(queries, QuerySet) else as_query_set(queries)
    info = store.info()
    family = family_of(info.score)
    depths = fetch_depths(k, fetch)
    if not 0.0 <= target <= 1.0:
        raise InputError(f"--target is a miss rate in [0, 1], got {target}")
    xr = as_float32_matrix(qs.vectors)
    if xr.shape[0] == 0:
        raise InputError("no queries to compare with; give at least one query")
    if xr.shape[1] != info.dimension:
        raise DimensionMismatchError(
            f"queries have dimension {xr.shape[1]} but {store.spec} holds {info.dimension}-d "
            "vectors; embed the questions with the model the index was built with"
        )
    if info.count < 1:
        raise InputError(f"{store.spec} holds no vectors; there is nothing to compare")
    q = xr.shape[0]
    # the truth's depth depends on k only: a depth's figures never depend on the others
    gt_depth = rank_cap(k)
    xq = prepare(xr, family)
    lookup = Lookup(store, info.dimension, family)
    truth = filtered_truths(store, xr, filters, gt_depth, family, say, settings.truth, true_vectors)
    truths = _truths(settings, store, xr, gt_depth, family, say, lookup, truth)
    ft = truths.filtered
    for t in (truths.stored, truths.true):
        if t is not None and (t.ids.shape[0] != q or t.ids.shape[1] < k):
            raise InputError("the ground truth given does not match these queries and k")
    truths = truths.cut(gt_depth)
    if np.isnan(truths.stored.similarity[:, 0]).all():
        if ft is not None:
            raise FilterError(f"no query's filter matches any chunk of {store.spec}")
        raise InputError(f"{store.spec} returned no exact neighbours for any query")
    scored = truths.scored
    tol = tolerance(xq, scored, TIE_RTOL)
    stol = tolerance(xq, truths.stored, TIE_RTOL)

    rows: list[FetchRow] = []
    per: dict[int, PerQuery] = {}
    raw: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for f in depths:
        say(f"approximate search, {q} queries, fetch {f}")
        t0 = time.perf_counter()
        _, I = store.query(xr, f) if ft is None else filtered_search(store, xr, f, ft)
        secs = time.perf_counter() - t0
        I = np.asarray(I, dtype=object)
        say(f"exact re-scoring of the {f} results per query")
        sim = lookup.similarity(xq, I)
        # the re-rank uses what the index gives back, as a retriever can; the scoring
        # uses the true vectors when given
        fids, fsim = final_lists(I, sim, k, rerank=f > k)
        search: PerQuery | None = None
        if truths.lookup is not None and truths.true is not None:
            raw[f] = (I, true_sim(truths.lookup, xq, I, sim))
            pq = score(true_sim(truths.lookup, xq, fids, fsim), truths.true, k, tol)
            search = score(fsim, truths.stored, k, stol)
        else:
            raw[f] = (I, sim)
            pq = score(fsim, truths.stored, k, tol)
        if ft is not None:
            pq = with_empty_filters(pq, ft)
        per[f] = pq
        row = fetch_row(f, k, q, pq, secs, seed)
        row.plan = plan_of(store, f, None if ft is None else main_filter(ft))
        if ft is not None:
            figures = filter_figures(f, pq, returned_counts(I), ft)
            for name, value in figures.items():
                setattr(row, name, value)
        if search is not None:
            row.search_recall_at_k = float(search.hits.sum() / max(int(search.slots.sum()), 1))
            row.search_best_miss_rate = float((~search.best_found).sum() / q)
        rows.append(row)
    # PASS from the interval's bound; the observed rate alone is not evidence enough
    recommended = next((r.fetch for r in rows if clears(r, target)), None)
    observed = next((r for r in rows if r.best_miss_rate <= target), None)
    compression = compression_of(store)
    loss = None
    if truths.lookup is not None and truths.true is not None:
        loss = compression_loss(xq, truths, k, tol)
    warnings = exact_plan_warnings(rows) + compression_warnings(compression, truths, loss, target)
    effort = effort_param(info.backend, info.details, compression)
    exact = not info.approximate and all(r.best_misses == 0 for r in rows)
    if exact:
        verdict, recommended = AnnVerdict.CANNOT_FAIL, rows[0].fetch
        said = cannot_fail(
            store.spec, " > ".join(compression.get("layers") or []) or "no ANN index"
        )
    elif recommended is not None:
        verdict = AnnVerdict.PASS
        said = recommendation(rows, k, target, recommended, effort, loss)
    elif observed is not None:
        verdict = AnnVerdict.INSUFFICIENT_EVIDENCE
        said = insufficient(observed, k, target)
    else:
        verdict = AnnVerdict.FAIL
        said = recommendation(rows, k, target, None, effort, loss)
    if ft is not None:
        fields = list(dict.fromkeys(x for n in ft.groups.nodes.values() for x in fields_of(n)))
        short = short_sentence(rows, k, info.backend, info.details, fields)
        if short is not None:
            warnings.append(short)
    setting = None if recommended is None else {"fetch": recommended}
    worst_queries = worst(qs.labels, scored, per, raw, depths, family, tol)
    for w in worst_queries if ft is not None else []:
        w["filter"] = ft.groups.keys[w["index"]]
    result = AnnResult(
        ok=verdict in (AnnVerdict.PASS, AnnVerdict.CANNOT_FAIL),
        verdict=verdict,
        k=k,
        target=target,
        queries=q,
        query_source=qs.source,
        query_details=qs.details,
        family=family,
        score=info.score,
        ground_truth=scored.source,
        ground_truth_depth=int(scored.ids.shape[1]),
        ground_truth_seconds=round(scored.seconds, 4),
        rank_cap=int(scored.ids.shape[1]),
        vector_cache=truths.stored.cache,
        tie_rtol=TIE_RTOL,
        by_fetch=rows,
        recommended_fetch=recommended,
        recommended_setting=setting,
        recommendation=sentences([said, *warnings]),
        warnings=warnings,
        worst_queries=worst_queries,
        store={
            "spec": store.spec,
            "backend": info.backend,
            "metric": info.metric,
            "approximate": info.approximate,
            "count": info.count,
            "dimension": info.dimension,
            "details": info.details,
        },
        compression=compression,
        truth_vectors=None
        if truths.vectors is None
        else {"source": truths.vectors.source, **truths.vectors.details},
        compression_loss=loss,
        filters=None if ft is None else ft.per_filter,
        query_filters=None if ft is None else ft.groups.keys,
        truth=truths,
    )
    if settings.sweep is None:
        return result
    assert open_at is not None
    return apply_sweep(result, sweep_ann(settings, open_at, qs, truths, progress))


def sweep_ann(
    settings: CompareAnnSettings,
    open_at: Callable[[int], VectorStore],
    queries: np.ndarray | QuerySet,
    truth: GroundTruth | Truths,
    progress: Say | None = None,
) -> dict[str, Any]:
    """compare-ann at each value of ``settings.sweep`` (``(key, values)``), sharing one
    ground truth (a :class:`Truths` carries the true one too, when the first run had it).

    ``open_at(value)`` gives the same index searched with ``key=value`` (the caller opens
    it; the CLI rewrites the spec); each store is closed here once measured. Returns
    ``{"param", "runs": [{"value", "spec", "by_fetch", "recommended_fetch",
    "recommendation"}]}``.
    """
    say = progress or _quiet
    sweep = swept(settings.sweep)
    assert sweep is not None
    key, values = sweep
    each = replace(settings, truth=truth, true_vectors=None, cache_dir=None, sweep=None)
    runs = []
    for v in values:
        say(f"sweep {key}={v}")
        store = open_at(v)
        try:
            r = compare_ann(each, store, queries, say)
        finally:
            store.close()
        runs.append(
            {
                "value": v,
                "spec": store.spec,
                "by_fetch": [row_dict(row) for row in r.by_fetch],
                "recommended_fetch": r.recommended_fetch,
                "verdict": r.verdict,
                "recommendation": r.recommendation,
            }
        )
    return {"param": key, "runs": runs}


def apply_sweep(result: AnnResult, sweep: dict[str, Any]) -> AnnResult:
    """Make a sweep part of the verdict (``sweep`` is :func:`sweep_ann`'s result).

    ``ok`` when the index as configured or any swept value reaches the target. The
    recommendation names the smallest swept value that reaches it, with its smallest fetch
    depth, unless the index as configured reaches it at a setting no higher (or at a
    setting the store does not tell: then that value is mentioned as an alternative).
    """
    key = str(sweep["param"])
    raw = result.store.get("details", {}).get(key)
    configured = int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    runs = list(sweep["runs"])
    reaching = sorted(
        (int(r["value"]), int(r["recommended_fetch"]))
        for r in runs
        if r["recommended_fetch"] is not None
    )
    result.sweep = sweep
    base = result.recommended_fetch
    if reaching:
        value, depth = reaching[0]
        if base is not None and (configured is None or configured <= value):
            if configured is None:
                result.recommendation += (
                    f" Of the {key} values tried, {value} is the smallest that reaches the "
                    f"target too (at fetch {depth})."
                )
            return result
        run = next(r for r in runs if r["value"] == value)
        row = next(r for r in run["by_fetch"] if r["fetch"] == depth)
        text = sweep_recommendation(key, value, row, result.k, result.target, configured, base)
        result.recommendation = sentences([text, *result.warnings])
        result.recommended_setting = {key: value, "fetch": depth}
        result.ok, result.verdict = True, AnnVerdict.PASS
        return result
    if base is None and result.verdict == AnnVerdict.FAIL:
        unsure = [r for r in runs if r.get("verdict") == AnnVerdict.INSUFFICIENT_EVIDENCE]
        if unsure:  # a swept value's observed rate is within the target, its interval not
            result.recommendation = f"{key}={unsure[0]['value']}: {unsure[0]['recommendation']}"
            result.verdict = AnnVerdict.INSUFFICIENT_EVIDENCE
        else:
            text = sweep_none(key, runs, result.k, result.target, result.compression_loss)
            result.recommendation = sentences([text, *result.warnings])
        result.ok = False
    return result


def _truths(
    settings: CompareAnnSettings,
    store: VectorStore,
    xr: np.ndarray,
    depth: int,
    family: str,
    say: Say,
    lookup: Lookup,
    truth: GroundTruth | Truths | None,
) -> Truths:
    true_vectors, cache_dir = settings.true_vectors, vector_cache_dir(settings.cache_dir)
    if isinstance(truth, Truths):
        return truth
    stored = truth or ground_truth(store, xr, depth, family, cache_dir, say, lookup)
    if true_vectors is None:
        return Truths(stored)
    say("exact search over the true vectors")
    true = true_truth(true_vectors, xr, depth, family)
    return Truths(stored, true, MatrixLookup(true_vectors, family), true_vectors)


def _as_query_set(vectors: np.ndarray) -> QuerySet:
    x = as_float32_matrix(vectors)
    return QuerySet(x, [str(i) for i in range(x.shape[0])], "vectors")
