"""The probe: queries built from the store's own vectors, the exact cos, dot and l2 of every
returned pair, and the catalogue formula that explains every reported score (or none)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import IncompleteResultError, InputError
from ...scales.formula import Transform
from ...scales.transforms import _CATALOGUE_LIST, ATOL, CATALOGUE, RTOL
from ...stores.base import StoreInfo, VectorStore
from ...vectors import row_norms
from .provenance import provenance
from .result import ScaleResult

UNIT_NORM_TOL = 5e-3
"""A stored vector counts as unit-norm when | ||x|| - 1 | is at most this."""
MIN_PAIRS = 8
MAX_PROBES = 48
BASE_SAMPLE = 256
CANDIDATES_SHOWN = 5


# -- probing ------------------------------------------------------------------------


def _base_vectors(store: VectorStore, dimension: int) -> np.ndarray:
    """Up to BASE_SAMPLE finite, non-zero stored vectors (one iter_vectors block)."""
    for batch in store.iter_vectors(BASE_SAMPLE):
        vecs = np.asarray(batch.vectors, dtype=np.float32)[:BASE_SAMPLE]
        if dimension == 0 and vecs.size:
            dimension = int(vecs.shape[1])
        keep = (np.asarray(batch.dims)[: len(vecs)] == dimension) & np.isfinite(vecs).all(1)
        keep &= row_norms(vecs) > 0
        out: np.ndarray = vecs[keep]
        return out
    return np.zeros((0, dimension), dtype=np.float32)


def build_queries(base: np.ndarray, probes: int, rng: np.random.Generator) -> np.ndarray:
    """float32 (probes, d) queries cycling through: a stored vector, a perturbation of one
    (noise 0.05 to 1.5 of its norm), a mixture of two, a random direction; every other
    query is rescaled by 1.3-2x or 1/2-1/1.3x so ``dot`` and ``cos`` part even on unit data.
    """
    n, d = base.shape
    norm = float(np.median(row_norms(base)))
    sigmas = np.geomspace(0.05, 1.5, max(1, (probes + 2) // 4))
    out = np.empty((probes, d), dtype=np.float64)
    for j in range(probes):
        x = base[rng.integers(n)].astype(np.float64)
        kind = j % 4 if n > 1 else j % 2
        noise = rng.standard_normal(d)
        if kind == 0:
            q = x
        elif kind == 1:
            q = x + sigmas[(j // 4) % len(sigmas)] * np.linalg.norm(x) * noise / math.sqrt(d)
        elif kind == 2:
            y = base[rng.integers(n)].astype(np.float64)
            a = rng.uniform(0.2, 0.8)
            q = a * x + (1 - a) * y
        else:
            q = noise * norm / math.sqrt(d)
        if (j + j // 4) % 2 == 1:  # alternate which kinds are rescaled, block by block
            q = q * rng.uniform(1.3, 2.0) ** rng.choice([-1.0, 1.0])
        out[j] = q
    return out.astype(np.float32)


def _variables(q: np.ndarray, x: np.ndarray, rtol: float) -> dict[str, np.ndarray]:
    """Exact cos, dot, l2 of row pairs (float64) and each one's float uncertainty."""
    q64, x64 = q.astype(np.float64), x.astype(np.float64)
    nq, nx = np.linalg.norm(q64, axis=1), np.linalg.norm(x64, axis=1)
    dot = np.einsum("ij,ij->i", q64, x64)
    l2 = np.linalg.norm(q64 - x64, axis=1)
    u = rtol * (nq * nq + nx * nx)  # a backend may expand l2^2 = |q|^2 + |x|^2 - 2 dot
    return {
        "cos": np.clip(dot / (nq * nx), -1.0, 1.0),
        "dot": dot,
        "l2": l2,
        "d_cos": np.full_like(dot, rtol),
        "d_dot": rtol * nq * nx,
        "d_l2": u / (l2 + np.sqrt(u)),
    }


def _ratios(t: Transform, v: dict[str, np.ndarray], scores: np.ndarray, rtol: float) -> np.ndarray:
    """|reported - predicted| / tolerance per pair; a pair fits when its ratio is <= 1."""
    x, dx = v[t.variable], v["d_" + t.variable]
    lo, hi = t.variable_range(normalized=False)
    pred = t.apply(x)
    spread = np.maximum(
        np.abs(t.apply(np.clip(x + dx, lo, hi)) - pred),
        np.abs(t.apply(np.clip(x - dx, lo, hi)) - pred),
    )
    tol = ATOL + rtol * np.abs(pred) + np.nan_to_num(spread, nan=0.0, posinf=0.0)
    r = np.abs(scores - pred) / tol
    return np.where(np.isfinite(r), r, np.inf)


def _order(D: np.ndarray) -> str | None:
    """How the backend sorts a result row: descending (higher is better), ascending, mixed."""
    desc = asc = False
    for row in D:
        s = row[np.isfinite(row)].astype(np.float64)
        if s.size < 2:
            continue
        step = np.diff(s)
        slack = 1e-6 * (1 + np.abs(s[1:]))
        desc |= bool((step < -slack).any())
        asc |= bool((step > slack).any())
    if desc == asc:
        return None if not desc else "mixed"
    return "descending" if desc else "ascending"


@dataclass
class _Observed:
    """The usable (query, id) pairs of one search: their scores and exact variables."""

    qi: np.ndarray
    ri: np.ndarray
    ids: list[str]
    scores: np.ndarray
    v: dict[str, np.ndarray]
    stored: np.ndarray
    fetched: int
    order: str | None

    def pairs(self) -> list[dict[str, Any]]:
        return [
            {
                "query": int(self.qi[j]),
                "rank": int(self.ri[j]),
                "id": self.ids[j],
                "score": float(self.scores[j]),
                "cos": float(self.v["cos"][j]),
                "dot": float(self.v["dot"][j]),
                "l2": float(self.v["l2"][j]),
            }
            for j in range(len(self.ids))
        ]


def _observe(
    store: VectorStore,
    queries: np.ndarray,
    d: int,
    result: tuple[np.ndarray, np.ndarray],
    rtol: float,
) -> _Observed:
    """Keep the finite (score, id) cells, fetch those ids once, compute cos/dot/l2 exactly."""
    D = np.asarray(result[0], dtype=np.float64)
    I = result[1]
    if D.shape[0] != queries.shape[0]:
        raise IncompleteResultError(
            f"{store.spec} answered {D.shape[0]} of {queries.shape[0]} probe queries; retry"
        )
    present = np.array([[x is not None for x in row] for row in I], dtype=bool)
    qi, ri = np.nonzero(np.isfinite(D) & present.reshape(D.shape))
    want = sorted({str(I[a, b]) for a, b in zip(qi, ri, strict=True)})
    found: dict[str, np.ndarray] = {}
    if want:
        got = store.fetch(want)
        for j, vid in enumerate(got.ids):
            vec = got.vectors[j]
            if got.found[j] and got.dims[j] == d and np.isfinite(vec).all() and vec.any():
                found[vid] = vec
    keep = [j for j in range(len(qi)) if str(I[qi[j], ri[j]]) in found]
    qi, ri = qi[keep], ri[keep]
    ids = [str(I[a, b]) for a, b in zip(qi, ri, strict=True)]
    stored = np.stack([found[v] for v in ids]) if ids else np.zeros((0, d), np.float32)
    v = _variables(queries[qi], stored, rtol)
    return _Observed(qi, ri, ids, D[qi, ri], v, stored, len(want), _order(D))


def probe_scale(
    store: VectorStore,
    probes: int = 16,
    k: int = 8,
    seed: int = 0,
    *,
    rtol: float = RTOL,
    filter: Any = None,
) -> ScaleResult:
    """Measure the store's score formula from ``probes`` queries of ``k`` neighbours each.

    Queries come from the store's own vectors (seeded ``numpy.random.default_rng``); only
    the pairs the backend returns are used (ANN results and NaN padding are fine). When
    nothing fits an approximate search whose store has an exact one, the same queries go
    through ``exact_query`` (quantized distances), and its formula is named only if it is
    also the one nearest the approximate scores (median residual within 10% of their
    spread). Raises InputError when the store holds no usable vector or the arguments
    are out of range. ``filter``: a portable metadata filter the normal search runs
    under (some engines score filtered queries through another path).
    """
    if not 1 <= probes <= MAX_PROBES:
        raise InputError(f"--probes must be between 1 and {MAX_PROBES}, not {probes}")
    if k < 1:
        raise InputError(f"k must be at least 1, not {k}")
    info = store.info()
    fingerprint = store.fingerprint()
    base = _base_vectors(store, info.dimension)
    if base.shape[0] == 0:
        raise InputError(f"{store.spec} holds no finite non-zero vector to probe with")
    d = base.shape[1]
    queries = build_queries(base, probes, np.random.default_rng(seed))
    if filter is not None:
        from ..kit.filtered_truth import require_filtering

        require_filtering(store)
    found = store.query(queries, k) if filter is None else store.query(queries, k, filter)
    obs = _observe(store, queries, d, found, rtol)
    made, fetched = probes, obs.fetched
    result = _judge(info, obs, base, rtol)
    if not result.ok and info.approximate and store.has_exact and obs.ids:
        exact = _observe(store, queries, d, store.exact_query(queries, k), rtol)
        made, fetched = made + probes, fetched + exact.fetched
        again = _judge(info, exact, base, rtol)
        nearest = _nearest(obs)
        if again.ok and again.transform is not None and nearest == again.transform:
            t = CATALOGUE[again.transform]
            off = float(np.max(np.abs(obs.scores - t.apply(obs.v[t.variable]))))
            again.search = "exact_query"
            again.approximate_residual = off
            again.message += (
                f"; measured on the exact search: the normal (approximate) search's scores "
                f"deviate from it by up to {off:.3g} (quantized distances)"
            )
            result, obs = again, exact
        elif again.ok:
            result.message += (
                f"; the exact search fits {again.transform} but the normal search's scores "
                f"are nearest {nearest or 'no formula'}, so neither is named"
            )
    result.pairs = obs.pairs()
    result.queries_made = made
    result.vectors_fetched = fetched
    result.observed_order = obs.order
    if not result.ok and obs.order in ("descending", "ascending"):
        result.higher_is_better = obs.order == "descending"
    provenance(info, result)
    result.manifest_facts = {
        "seed": seed,
        "fingerprint": fingerprint,
        "probes": probes,
        "k": k,
        "rtol": rtol,
    }
    if filter is not None:
        from ...filters import canonical
        from ..kit.filtered_truth import as_node

        node = as_node(filter)
        assert node is not None  # filter is not None
        result.manifest_facts["filters"] = [canonical(node)]
        result.message += f" (searched under the filter {canonical(node)})"
    return result


def _nearest(obs: _Observed, share: float = 0.1) -> str | None:
    """The formula closest to approximate (quantized) scores by median residual, if that
    residual is within ``share`` of the scores' spread; else None."""
    if len(obs.ids) < MIN_PAIRS:
        return None
    spread = float(np.ptp(obs.scores))
    med = {
        t.formula: float(np.median(np.abs(obs.scores - t.apply(obs.v[t.variable]))))
        for t in _CATALOGUE_LIST
    }
    best = min(med, key=lambda f: med[f] if math.isfinite(med[f]) else math.inf)
    return best if spread > 0 and med[best] <= share * spread else None


def _judge(info: StoreInfo, obs: _Observed, base: np.ndarray, rtol: float) -> ScaleResult:
    """Rank every catalogue formula by its worst residual/tolerance ratio and decide."""
    n, v, scores = len(obs.ids), obs.v, obs.scores
    ranked: list[dict[str, Any]] = []
    for t in _CATALOGUE_LIST if n else []:
        worst = float(np.max(_ratios(t, v, scores, rtol)))
        resid = np.abs(scores - t.apply(v[t.variable]))
        ranked.append(
            {
                "formula": t.formula,
                "fits": worst <= 1.0,
                "max_residual": float(np.nanmax(resid)) if np.isfinite(resid).any() else None,
                "worst_ratio": worst if math.isfinite(worst) else None,
            }
        )
    ranked.sort(key=lambda c: math.inf if c["worst_ratio"] is None else c["worst_ratio"])
    fits = [c["formula"] for c in ranked if c["fits"]]
    norms = np.linalg.norm(np.concatenate([base, obs.stored]).astype(np.float64), axis=1)
    normalized = bool(np.all(np.abs(norms - 1.0) <= UNIT_NORM_TOL))
    common: dict[str, Any] = {
        "documented": info.score,
        "source": "probed",
        "candidates": ranked[:CANDIDATES_SHOWN],
        "cos_range": [float(v["cos"].min()), float(v["cos"].max())] if n else None,
        "tolerance": {"rtol": rtol, "atol": ATOL},
    }
    if n < MIN_PAIRS or not fits:
        why = (
            f"only {n} usable (query, id) pairs came back (need {MIN_PAIRS})"
            if n < MIN_PAIRS
            else "no known formula explains the scores"
        )
        best = ", ".join(
            f"{c['formula']} (residual {c['max_residual']:.3g})"
            for c in ranked[:3]
            if c["max_residual"] is not None
        )
        return _named(
            None, normalized, message=f"{why}; best candidates: {best or 'none'}", **common
        )
    chosen = info.score if info.score in fits else fits[0]
    t = CATALOGUE[chosen]
    row = next(c for c in ranked if c["formula"] == chosen)
    note = "unit-norm" if normalized else "not unit-norm"
    message = (
        f"scores are {chosen} ({'higher' if t.higher_is_better else 'lower'} is better), "
        f"max residual {row['max_residual']:.3g} over {n} pairs; stored vectors are {note}"
    )
    if t.variable != "cos" and not normalized:
        message += "; conversion to cosine needs unit-norm vectors"
    others = [f for f in fits if f != chosen]
    if others:
        message += f"; equally consistent: {', '.join(others)}"
    return _named(
        t,
        normalized,
        message=message,
        max_residual=row["max_residual"],
        equivalent=others,
        **common,
    )


def _named(t: Transform | None, normalized: bool | None, **kw: Any) -> ScaleResult:
    """A result naming ``t`` (None: unknown), with its conversions when they exist."""
    convertible = t is not None and (t.variable == "cos" or bool(normalized))
    return ScaleResult(
        ok=t is not None,
        transform=t.formula if t else None,
        variable=t.variable if t else None,
        higher_is_better=t.higher_is_better if t else None,
        normalized=normalized,
        to_cosine_formula=t.cos_of_s if t and convertible else None,
        from_cosine_formula=t.s_of_cos if t and convertible else None,
        **kw,
    )
