"""compare-ann: how often approximate search misses the best chunk, and how deep to fetch.

For each query the exact neighbours come from the backend's exact mode when it has one
(``store.has_exact``), otherwise from an exact search indexcheck streams over every stored
vector (:func:`indexcheck.core.exact.exact_topk`; vectors read from a remote store are
cached on disk keyed by the store's fingerprint). The store's normal (approximate) query is
then asked for ``f`` results at each fetch depth ``f``; when ``f > k`` the ``f`` returned ids
are re-ranked by exact similarity and the best ``k`` kept (the over-fetch recipe: fetch their
vectors, compute the similarity in the backend's metric family, keep k).

Metrics per depth, all on exact similarities computed here (cos, dot or ``-l2^2``):

- recall@k: results at least as near as the exact k-th neighbour, over k per query;
- best-chunk miss rate: queries whose exact nearest neighbour is not in the final top-k;
- mean rank displacement: mean over the k slots of |exact rank of the result - slot|,
  the exact rank capped at the ground-truth depth (a missing result counts at the cap).

Scores within ``TIE_RTOL`` (relative to the query's scale) of each other are tied: a result
tied with the exact k-th (or 1st) counts as found. Rates carry Wilson 95% intervals
(recall pools the k slots of every query), the displacement a bootstrap interval.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import numpy as np

from ..errors import (
    DataFileError,
    DimensionMismatchError,
    IncompleteResultError,
    InputError,
    SpecError,
)
from ..questions import load_questions
from ..stores.base import StoreSpec, VectorStore, as_float32_matrix
from .exact import (
    Block,
    as_similarity,
    block_rows,
    exact_topk,
    family_of,
    npy_blocks,
    pair_similarity,
    prepare,
    rebatch,
)
from .stats import bootstrap_mean, wilson

if TYPE_CHECKING:
    from ..embedders.base import Embedder
    from ..stores import StoreOptions

DEFAULT_FETCH = (4, 10, 20, 50)
DEFAULT_NOISE = 1.0
TIE_RTOL = 1e-5
FETCH_BATCH = 1000
ITER_BATCH = 1000
WORST_SHOWN = 10
#: Backends whose vectors are already local files in memory: nothing to cache.
LOCAL_BACKENDS = frozenset({"faiss", "parquet", "memory"})
#: Spec parameters that set a backend's search effort, by scheme (for --sweep).
SWEEPABLE: dict[str, tuple[str, ...]] = {
    "faiss": ("efSearch", "nprobe"),
    "langchain-faiss": ("efSearch", "nprobe"),
    "lancedb": ("nprobes", "refine_factor", "ef"),
    "pgvector": ("ef_search", "probes"),
}
GROUND_TRUTH_BACKEND = "backend_exact"
GROUND_TRUTH_LOCAL = "local_exact"

Say = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


# -- queries -----------------------------------------------------------------------------


@dataclass
class QuerySet:
    """Query vectors float32 (q, d), one label each, and where they came from.

    ``source`` is ``sampled`` (stored vectors plus noise), ``questions`` (embedded text)
    or ``vectors`` (the user's own, used as given).
    """

    vectors: np.ndarray
    labels: list[str]
    source: str
    details: dict[str, Any] = field(default_factory=dict)


def sample_queries(
    store: VectorStore,
    n: int,
    seed: int = 0,
    noise: float = DEFAULT_NOISE,
    cache_dir: Path | None = None,
) -> QuerySet:
    """``n`` stored vectors drawn at random, each moved by noise so it is no exact hit.

    Query = v + noise * |v| * u with u a random unit vector orthogonal to v (numpy
    default_rng(seed)), so its cosine with v is 1/sqrt(1 + noise^2): 0.71 at the default
    1.0, near what a real question scores against its best chunk; with less noise v itself
    wins so clearly that approximate search rarely misses it. One pass over the store
    (through the vector cache when ``cache_dir`` is given).
    """
    if n < 1:
        raise InputError(f"--queries must be at least 1, got {n}")
    if noise < 0:
        raise InputError(f"--noise must be zero or more, got {noise}")
    info = store.info()
    count = info.count
    if count < 1:
        raise InputError(f"{store.spec} holds no vectors; there is nothing to query")
    rng = np.random.default_rng(seed)
    want = np.sort(rng.choice(count, size=min(n, count), replace=False))
    picked: list[np.ndarray] = []
    labels: list[str] = []
    offset = 0
    # with a cache, read to the end so the cache completes and the exact search reuses it
    stop_early = _cache_for(store, info.dimension, cache_dir) is None
    for ids, vecs in _vector_blocks(store, info.dimension, cache_dir, ITER_BATCH):
        lo, hi = np.searchsorted(want, [offset, offset + len(ids)])
        for p in want[lo:hi]:
            picked.append(vecs[int(p) - offset].copy())
            labels.append(f"near:{ids[int(p) - offset]}")
        offset += len(ids)
        if stop_early and hi == len(want):
            break
    if not picked:
        raise InputError(f"{store.spec} yielded no usable vectors to sample queries from")
    base = np.stack(picked).astype(np.float64)
    norms = np.linalg.norm(base, axis=1, keepdims=True)
    unit = np.divide(base, norms, out=np.zeros_like(base), where=norms > 0)
    u = rng.standard_normal(base.shape)
    u -= (u * unit).sum(axis=1, keepdims=True) * unit  # orthogonal to v
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    vectors = (base + noise * norms * u).astype(np.float32)
    return QuerySet(vectors, labels, "sampled", {"noise": noise, "seed": seed})


def read_questions(path: Path) -> tuple[list[str], list[str]]:
    """(ids, questions) from a question set (JSONL or CSV with ``id`` and ``question``)."""
    questions = load_questions(path, require_labels=False)
    return [q.id for q in questions], [q.question for q in questions]


def embed_questions(path: Path, embedder: Embedder) -> QuerySet:
    """Embed every question of ``path`` (JSONL/CSV, ``id``, ``question``) with ``embedder``."""
    ids, questions = read_questions(path)
    vectors = np.asarray(embedder.embed(questions), dtype=np.float32)
    return QuerySet(vectors, ids, "questions", {"path": str(path), "embedder": embedder.model_id})


def load_query_vectors(path: Path) -> QuerySet:
    """The user's own query vectors: ``.npy`` (q, d), or Parquet with a ``vector`` (or
    ``embedding``) list column and an optional ``id`` column. Used as given."""
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"query vectors file {path} does not exist; check --query-vectors")
    suffix = path.suffix.lower()
    labels: list[str] | None = None
    try:
        if suffix == ".npy":
            raw = np.load(path, allow_pickle=False)
        elif suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            names = table.column_names
            col = next((c for c in ("vector", "embedding") if c in names), None)
            if col is None:
                raise DataFileError(
                    f"{path} has no 'vector' or 'embedding' column (columns: "
                    f"{', '.join(names)}); rename the column holding the query vectors"
                )
            raw = np.asarray(table.column(col).to_pylist(), dtype=np.float32)
            if "id" in names:
                labels = [str(v) for v in table.column("id").to_pylist()]
        else:
            raise DataFileError(f"{path}: query vectors must be a .npy or .parquet file")
    except (OSError, ValueError) as exc:
        raise DataFileError(f"cannot read query vectors from {path}: {exc}") from None
    if raw.ndim != 2 or raw.shape[0] == 0 or not np.issubdtype(raw.dtype, np.number):
        raise DataFileError(f"{path} must hold a non-empty numeric (q, d) matrix")
    vectors = np.ascontiguousarray(raw, dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise DataFileError(f"{path} holds NaN or infinite values; remove those queries")
    return QuerySet(
        vectors, labels or [str(i) for i in range(len(vectors))], "vectors", {"path": str(path)}
    )


# -- stored vectors: streaming and the on-disk cache -------------------------------------


def _store_blocks(store: VectorStore, dimension: int, batch: int) -> Iterator[Block]:
    """Blocks of usable stored vectors: right length and finite (others are skipped)."""
    for b in store.iter_vectors(batch):
        vecs = np.asarray(b.vectors, dtype=np.float32)
        keep = (np.asarray(b.dims) == dimension) & np.isfinite(vecs).all(axis=1)
        if keep.all():
            yield list(b.ids), vecs
        elif keep.any():
            yield [i for i, k in zip(b.ids, keep, strict=True) if k], vecs[keep]


HEADER_BYTES = 128


def _npy_header(rows: int, dimension: int) -> bytes:
    """A version 1.0 ``.npy`` header for float32 (rows, dimension), exactly 128 bytes."""
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {dimension}), }}"
    body = text.ljust(HEADER_BYTES - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body.encode("latin1")


class VectorCache:
    """Stored vectors of one store on disk, keyed by its fingerprint.

    ``ROOT/<sha256(fingerprint)[:32]>/`` holds ``vectors.npy`` float32 (n, d),
    ``ids.jsonl`` (one JSON string per row, same order) and ``meta.json``. A cache is
    written to a temporary folder while the store is read and renamed into place only
    once complete; it is read back block by block.
    """

    def __init__(self, root: Path, fingerprint: str, dimension: int, spec: str) -> None:
        self.root = Path(root).expanduser()
        self.fingerprint = fingerprint
        self.dimension = dimension
        self.spec = spec
        self.path = self.root / hashlib.sha256(fingerprint.encode()).hexdigest()[:32]

    def complete(self) -> bool:
        meta = self.path / "meta.json"
        if not meta.is_file():
            return False
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return False
        return bool(
            data.get("fingerprint") == self.fingerprint and data.get("dimension") == self.dimension
        )

    def blocks(self, rows: int) -> Iterator[Block]:
        """Cached (ids, float32 (m, d)) blocks of ``rows`` rows, in stored order."""
        with (self.path / "ids.jsonl").open(encoding="utf-8") as ids_file:
            for vecs in npy_blocks(self.path / "vectors.npy", rows):
                ids = [json.loads(ids_file.readline()) for _ in range(vecs.shape[0])]
                yield ids, vecs
                del ids, vecs  # not held while the next block is read

    def writing(self, blocks: Iterable[Block]) -> Iterator[Block]:
        """Pass ``blocks`` through, writing them; the cache appears only when all were read."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        done = False
        rows = 0
        try:
            with (
                (tmp / "vectors.npy").open("wb") as vf,
                (tmp / "ids.jsonl").open("w", encoding="utf-8") as idf,
            ):
                vf.write(_npy_header(0, self.dimension))
                for ids, vecs in blocks:
                    vf.write(np.ascontiguousarray(vecs, dtype="<f4").tobytes())
                    idf.writelines(json.dumps(i) + "\n" for i in ids)
                    rows += len(ids)
                    yield ids, vecs
                    del ids, vecs
                vf.seek(0)
                vf.write(_npy_header(rows, self.dimension))
            meta = {
                "fingerprint": self.fingerprint,
                "spec": self.spec,
                "dimension": self.dimension,
                "rows": rows,
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            (tmp / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
            try:
                tmp.rename(self.path)
                done = True
            except OSError:
                pass  # another run finished the same cache first
        finally:
            if not done:
                shutil.rmtree(tmp, ignore_errors=True)


def _cache_for(store: VectorStore, dimension: int, cache_dir: Path | None) -> VectorCache | None:
    if cache_dir is None or store.info().backend in LOCAL_BACKENDS:
        return None
    return VectorCache(Path(cache_dir), store.fingerprint(), dimension, store.spec)


def _vector_blocks(
    store: VectorStore, dimension: int, cache_dir: Path | None, rows: int
) -> Iterator[Block]:
    """Every usable stored vector once: from the cache when complete, else from the store
    (filling the cache when one is configured)."""
    cache = _cache_for(store, dimension, cache_dir)
    if cache is not None and cache.complete():
        yield from cache.blocks(rows)
        return
    blocks = _store_blocks(store, dimension, ITER_BATCH)
    yield from (blocks if cache is None else cache.writing(blocks))


# -- exact similarities of given ids ---------------------------------------------------


class _Lookup:
    """Stored vectors fetched by id once per run (float32, prepared for the family)."""

    def __init__(self, store: VectorStore, dimension: int, family: str) -> None:
        self.store, self.dimension, self.family = store, dimension, family
        self.row: dict[str, int] = {}
        self.parts: list[np.ndarray] = []
        self.matrix = np.zeros((1, dimension), dtype=np.float32)  # row 0: not found
        self.usable = np.zeros(1, dtype=bool)
        self.fetched = 0

    def ensure(self, ids: Iterable[str]) -> None:
        todo = [i for i in dict.fromkeys(ids) if i not in self.row]
        if not todo:
            return
        parts, usable = [self.matrix], [self.usable]
        base = self.matrix.shape[0]
        for start in range(0, len(todo), FETCH_BATCH):
            part = todo[start : start + FETCH_BATCH]
            got = self.store.fetch(part)
            if len(got.ids) != len(part) or got.vectors.shape[0] != len(part):
                raise IncompleteResultError(
                    f"{self.store.spec} returned {got.vectors.shape[0]} vectors for "
                    f"{len(part)} ids; rerun, and report it if it persists"
                )
            vecs = np.asarray(got.vectors, dtype=np.float32)
            ok = np.asarray(got.found, dtype=bool) & (np.asarray(got.dims) == self.dimension)
            ok &= np.isfinite(vecs).all(axis=1)
            parts.append(prepare(vecs, self.family))
            usable.append(ok)
            for j, vid in enumerate(part):
                self.row[vid] = base + start + j
        self.fetched += len(todo)
        self.matrix = np.concatenate(parts)
        self.usable = np.concatenate(usable)

    def similarity(self, xq: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Exact similarity (cos, dot or -l2^2) of prepared queries (q, d) with the ids of
        an object (q, m) matrix: float32 (q, m), NaN for None, unknown or unusable ids."""
        q, m = ids.shape
        self.ensure(i for i in ids.ravel() if i is not None)
        rows = np.fromiter(
            (0 if i is None else self.row[i] for i in ids.ravel()), dtype=np.int64, count=q * m
        ).reshape(q, m)
        out = np.full((q, m), np.nan, dtype=np.float32)
        if m == 0:
            return out
        step = max(1, (32 << 20) // max(1, m * self.dimension * 4))
        for s in range(0, q, step):
            r = rows[s : s + step]
            out[s : s + step] = pair_similarity(xq[s : s + step], self.matrix[r], self.family)
        out[~self.usable[rows]] = np.nan
        return out


# -- ground truth ------------------------------------------------------------------------


@dataclass
class GroundTruth:
    """Exact neighbours of each query: ids object (q, G) and similarities float32 (q, G)
    (cos, dot or ``-l2^2``, higher is nearer, descending; NaN / None where missing)."""

    ids: np.ndarray
    similarity: np.ndarray
    source: str
    seconds: float
    cache: dict[str, Any] | None = None


def ground_truth(
    store: VectorStore,
    queries: np.ndarray,
    depth: int,
    family: str,
    cache_dir: Path | None = None,
    progress: Say | None = None,
    lookup: _Lookup | None = None,
) -> GroundTruth:
    """Exact top-``depth`` of float32 ``queries`` (q, d): the backend's exact mode when it
    has one (then re-scored here from the fetched vectors), else a local exact search
    streamed block by block over every stored vector."""
    say = progress or _quiet
    info = store.info()
    d = info.dimension
    t0 = time.perf_counter()
    xq = prepare(queries, family)
    if store.has_exact:
        say(f"exact search in {info.backend} for {len(queries)} queries")
        _, ids = store.exact_query(queries, depth)
        look = lookup or _Lookup(store, d, family)
        sim = look.similarity(xq, np.asarray(ids, dtype=object))
        order = np.argsort(np.where(np.isnan(sim), np.inf, -sim), axis=1, kind="stable")
        sim = np.take_along_axis(sim, order, axis=1)
        ids = np.take_along_axis(np.asarray(ids, dtype=object), order, axis=1)
        ids[np.isnan(sim)] = None
        return GroundTruth(ids, sim, GROUND_TRUTH_BACKEND, time.perf_counter() - t0)
    cache = _cache_for(store, d, cache_dir)
    hit = cache is not None and cache.complete()
    say(
        f"exact search over every stored vector of {info.backend}"
        + (" (from the vector cache)" if hit else "")
    )
    rows = block_rows(d)
    D, ids = exact_topk(rebatch(_vector_blocks(store, d, cache_dir, rows), rows), xq, depth, family)
    sim = as_similarity(D, family)
    cache_info = None if cache is None else {"path": str(cache.path), "hit": hit}
    return GroundTruth(ids, sim, GROUND_TRUTH_LOCAL, time.perf_counter() - t0, cache_info)


# -- the comparison ----------------------------------------------------------------------


@dataclass
class FetchRow:
    """Metrics at one fetch depth (final list: top-k after exact re-rank when fetch > k)."""

    fetch: int
    reranked: bool
    queries: int
    recall_at_k: float
    recall_at_k_interval: list[float | None]
    recall_hits: int
    recall_slots: int
    best_miss_rate: float
    best_miss_rate_interval: list[float | None]
    best_misses: int
    mean_rank_displacement: float | None
    mean_rank_displacement_interval: list[float | None]
    ann_seconds: float


@dataclass
class AnnResult:
    """What compare-ann found; ``ok`` when some fetch depth reaches the target miss rate."""

    ok: bool
    k: int
    target: float
    queries: int
    query_source: str
    query_details: dict[str, Any]
    family: str
    score: str
    ground_truth: str
    ground_truth_depth: int
    ground_truth_seconds: float
    vector_cache: dict[str, Any] | None
    tie_rtol: float
    by_fetch: list[FetchRow]
    recommended_fetch: int | None
    recommendation: str
    worst_queries: list[dict[str, Any]]
    store: dict[str, Any]
    sweep: dict[str, Any] | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    truth: GroundTruth | None = field(default=None, repr=False, compare=False)
    """The ground truth used (not serialised), so a sweep can reuse it."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "truth":
                continue
            value = getattr(self, f.name)
            out[f.name] = [asdict(r) for r in value] if f.name == "by_fetch" else value
        return out

    def row(self, fetch: int) -> FetchRow:
        return next(r for r in self.by_fetch if r.fetch == fetch)


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


def _final_lists(
    ids: np.ndarray, sim: np.ndarray, k: int, rerank: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The k results a retriever keeps: the first k as returned, or the k nearest by exact
    similarity among all returned (over-fetch). Repeated ids count once."""
    sim = sim.copy()
    for r in range(ids.shape[0]):
        seen: set[str] = set()
        for j, vid in enumerate(ids[r]):
            if vid is None or vid in seen:
                sim[r, j] = np.nan
            else:
                seen.add(vid)
    if rerank:
        order = np.argsort(np.where(np.isnan(sim), np.inf, -sim), axis=1, kind="stable")[:, :k]
        return np.take_along_axis(ids, order, 1), np.take_along_axis(sim, order, 1)
    return ids[:, :k], sim[:, :k]


@dataclass
class _PerQuery:
    hits: np.ndarray  # int (q,)
    slots: np.ndarray  # int (q,) = min(k, exact neighbours available)
    best_found: np.ndarray  # bool (q,)
    displacement: np.ndarray  # float (q,)


def _score(final_sim: np.ndarray, truth: GroundTruth, k: int, tol: np.ndarray) -> _PerQuery:
    gt = truth.similarity
    depth = gt.shape[1]
    q = gt.shape[0]
    slots = np.minimum(k, (~np.isnan(gt)).sum(axis=1))
    top1 = gt[:, 0]
    kth = gt[np.arange(q), np.maximum(slots - 1, 0)]
    valid = ~np.isnan(final_sim)
    filled = np.where(valid, final_sim, -np.inf)
    hits = np.minimum((filled >= (kth - tol)[:, None]).sum(axis=1), slots)
    best_found = (filled >= (top1 - tol)[:, None]).any(axis=1)
    # a result's exact rank is an interval when it ties others: [strictly better, tied - 1]
    gt_filled = np.where(np.isnan(gt), -np.inf, gt)[:, None, :]
    lo = (gt_filled > (final_sim + tol[:, None])[:, :, None]).sum(axis=2)
    hi = (gt_filled >= (final_sim - tol[:, None])[:, :, None]).sum(axis=2) - 1
    lo = np.where(valid, lo, depth)
    hi = np.where(valid, np.maximum(hi, lo), depth)
    kk = final_sim.shape[1]
    slot = np.arange(kk)[None, :]
    in_slot = slot < slots[:, None]
    moved = np.maximum(0, np.maximum(lo - slot, slot - hi)) * in_slot
    displacement = moved.sum(axis=1) / np.maximum(slots, 1)
    return _PerQuery(hits, slots, best_found, displacement.astype(np.float64))


def _interval(low: float | None, high: float | None) -> list[float | None]:
    return [low, high]


def compare_ann(
    store: VectorStore,
    queries: np.ndarray | QuerySet,
    k: int = 4,
    fetch: Sequence[int] | None = DEFAULT_FETCH,
    target: float = 0.01,
    seed: int = 0,
    cache_dir: Path | None = None,
    progress: Say | None = None,
    truth: GroundTruth | None = None,
) -> AnnResult:
    """Measure approximate search against exact search at each fetch depth.

    ``queries`` float32 (q, d) (or a :class:`QuerySet`); ``k`` results kept; ``fetch``
    depths (each >= k; ``None`` picks k and the defaults deeper than k). ``target`` is the
    best-chunk miss rate to reach; the recommendation is the smallest depth whose
    observed rate is at most it. ``truth`` reuses ground truth from an earlier run on the
    same queries (a sweep). ``seed`` seeds the bootstrap of the displacement interval.
    """
    say = progress or _quiet
    qs = queries if isinstance(queries, QuerySet) else _as_query_set(queries)
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
    gt_depth = max(depths[-1], k)
    xq = prepare(xr, family)
    lookup = _Lookup(store, info.dimension, family)
    if truth is None:
        truth = ground_truth(store, xr, gt_depth, family, cache_dir, say, lookup)
    if truth.ids.shape != (q, truth.ids.shape[1]) or truth.ids.shape[1] < k:
        raise InputError("the ground truth given does not match these queries and k")
    if np.isnan(truth.similarity[:, 0]).all():
        raise InputError(f"{store.spec} returned no exact neighbours for any query")

    qnorm = (xq * xq).sum(axis=1)
    gt0 = np.nan_to_num(np.abs(truth.similarity[:, 0]))
    tol = TIE_RTOL * np.maximum.reduce([np.ones(q), gt0, qnorm.astype(np.float64)])

    rows: list[FetchRow] = []
    per: dict[int, _PerQuery] = {}
    raw: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for f in depths:
        say(f"approximate search, {q} queries, fetch {f}")
        t0 = time.perf_counter()
        _, I = store.query(xr, f)
        secs = time.perf_counter() - t0
        I = np.asarray(I, dtype=object)
        say(f"exact re-scoring of the {f} results per query")
        sim = lookup.similarity(xq, I)
        raw[f] = (I, sim)
        _, fsim = _final_lists(I, sim, k, rerank=f > k)
        pq = _score(fsim, truth, k, tol)
        per[f] = pq
        rec = wilson(int(pq.hits.sum()), int(pq.slots.sum()))
        miss = wilson(int((~pq.best_found).sum()), q)
        m, lo, hi = bootstrap_mean(pq.displacement, seed=seed)
        rows.append(
            FetchRow(
                fetch=f,
                reranked=f > k,
                queries=q,
                recall_at_k=float(rec.value or 0.0),
                recall_at_k_interval=_interval(rec.low, rec.high),
                recall_hits=rec.k,
                recall_slots=rec.n,
                best_miss_rate=float(miss.value or 0.0),
                best_miss_rate_interval=_interval(miss.low, miss.high),
                best_misses=miss.k,
                mean_rank_displacement=m,
                mean_rank_displacement_interval=_interval(lo, hi),
                ann_seconds=round(secs, 4),
            )
        )
    recommended = next((r.fetch for r in rows if r.best_miss_rate <= target), None)
    return AnnResult(
        ok=recommended is not None,
        k=k,
        target=target,
        queries=q,
        query_source=qs.source,
        query_details=qs.details,
        family=family,
        score=info.score,
        ground_truth=truth.source,
        ground_truth_depth=int(truth.ids.shape[1]),
        ground_truth_seconds=round(truth.seconds, 4),
        vector_cache=truth.cache,
        tie_rtol=TIE_RTOL,
        by_fetch=rows,
        recommended_fetch=recommended,
        recommendation=_recommendation(rows, k, target, recommended),
        worst_queries=_worst(qs.labels, truth, per, raw, depths, family, tol),
        store={
            "spec": store.spec,
            "backend": info.backend,
            "metric": info.metric,
            "approximate": info.approximate,
            "count": info.count,
            "dimension": info.dimension,
            "details": info.details,
        },
        truth=truth,
    )


def _as_query_set(vectors: np.ndarray) -> QuerySet:
    x = as_float32_matrix(vectors)
    return QuerySet(x, [str(i) for i in range(x.shape[0])], "vectors")


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%".replace(".00%", "%")


def _recommendation(rows: list[FetchRow], k: int, target: float, best: int | None) -> str:
    if best is not None:
        r = next(r for r in rows if r.fetch == best)
        how = f"fetch {best}, re-rank exactly and keep {k}" if best > k else f"fetch {k}"
        return (
            f"{how}: the best chunk is missed in {_pct(r.best_miss_rate)} of queries "
            f"({r.best_misses}/{r.queries}), at most the target {_pct(target)}"
        )
    low = min(rows, key=lambda r: (r.best_miss_rate, r.fetch))
    tried = ", ".join(str(r.fetch) for r in rows)
    text = (
        f"none of the fetch depths tried ({tried}) brings the best-chunk miss rate to "
        f"{_pct(target)}; the lowest is {_pct(low.best_miss_rate)} at fetch {low.fetch}"
    )
    if len(rows) > 1 and rows[-1].best_misses >= rows[0].best_misses:
        return (
            f"{text}; fetching deeper does not help this index (its search stops by its own "
            "effort parameter, not by the number asked): raise efSearch/nprobe, e.g. "
            "--sweep efSearch=32,64,128"
        )
    return f"{text}: fetch deeper or raise the index's search effort (efSearch, nprobe)"


def _worst(
    labels: list[str],
    truth: GroundTruth,
    per: dict[int, _PerQuery],
    raw: dict[int, tuple[np.ndarray, np.ndarray]],
    depths: list[int],
    family: str,
    tol: np.ndarray,
) -> list[dict[str, Any]]:
    """Queries that miss their best chunk at the most depths, then with the lowest recall."""
    first = depths[0]
    missed = np.stack([~per[f].best_found for f in depths]).sum(axis=0)
    recall0 = per[first].hits / np.maximum(per[first].slots, 1)
    bad = np.flatnonzero((missed > 0) | (recall0 < 1))
    order = sorted(bad, key=lambda i: (-missed[i], recall0[i], -per[first].displacement[i]))
    deep_ids, deep_sim = raw[depths[-1]]
    out = []
    for i in order[:WORST_SHOWN]:
        top = float(truth.similarity[i, 0])
        found = np.flatnonzero(deep_sim[i] >= top - tol[i])
        out.append(
            {
                "index": int(i),
                "query": labels[i],
                "exact_best_id": truth.ids[i, 0],
                "exact_best_score": -top if family == "l2" else top,
                "missed_at_fetch": [f for f in depths if not per[f].best_found[i]],
                "recall_at_k": {
                    str(f): float(per[f].hits[i] / max(per[f].slots[i], 1)) for f in depths
                },
                "best_position_at_max_fetch": int(found[0]) + 1 if found.size else None,
                "max_fetch": depths[-1],
            }
        )
    return out


# -- sweeping a search parameter ---------------------------------------------------------


def parse_sweep(text: str) -> tuple[str, list[int]]:
    """``efSearch=16,32,64`` -> ("efSearch", [16, 32, 64])."""
    key, sep, values = text.partition("=")
    try:
        nums = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        nums = []
    if not sep or not key.strip() or not nums or min(nums) < 1:
        raise InputError(
            f"--sweep '{text}' must be PARAM=V1,V2,... with positive integers, "
            "e.g. --sweep efSearch=16,32,64 or --sweep nprobe=1,4,16"
        )
    return key.strip(), nums


def with_param(spec: str, key: str, value: int) -> str:
    """``spec`` with the search parameter ``key`` set to ``value`` (checked per backend)."""
    parsed = StoreSpec.parse(spec)
    allowed = SWEEPABLE.get(parsed.scheme, ())
    if key not in allowed:
        hint = (
            f"{parsed.scheme} accepts: {', '.join(allowed)}"
            if allowed
            else "only faiss, lancedb and pgvector specs take a search parameter"
        )
        raise SpecError(f"--sweep {key}: {parsed.scheme} has no search parameter {key}; {hint}")
    params = {**parsed.params, key: str(value)}
    return f"{parsed.scheme}:{parsed.location}?{urlencode(params)}"


def sweep_ann(
    spec: str,
    key: str,
    values: Sequence[int],
    queries: np.ndarray | QuerySet,
    truth: GroundTruth,
    *,
    options: StoreOptions | None = None,
    k: int = 4,
    fetch: Sequence[int] | None = DEFAULT_FETCH,
    target: float = 0.01,
    seed: int = 0,
    progress: Say | None = None,
) -> dict[str, Any]:
    """compare-ann at each value of a search parameter, sharing one ground truth.

    Returns ``{"param", "runs": [{"value", "spec", "by_fetch", "recommended_fetch",
    "recommendation"}]}``.
    """
    from ..stores import open_store

    say = progress or _quiet
    runs = []
    for v in values:
        say(f"sweep {key}={v}")
        store = open_store(with_param(spec, key, v), options)
        try:
            r = compare_ann(store, queries, k, fetch, target, seed, progress=say, truth=truth)
        finally:
            store.close()
        runs.append(
            {
                "value": v,
                "spec": store.spec,
                "by_fetch": [asdict(row) for row in r.by_fetch],
                "recommended_fetch": r.recommended_fetch,
                "recommendation": r.recommendation,
            }
        )
    return {"param": key, "runs": runs}
