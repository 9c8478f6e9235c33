"""The read-only store base class: the seam every engine plugs into.

A store spec is ``scheme:location[?key=value&...]``, e.g. ``faiss:./index``,
``parquet:vectors.parquet``, ``upstash:https://x.upstash.io?namespace=ns``,
``pgvector:postgresql://u@127.0.0.1:5432/db?table=chunks``.

:class:`BaseStore` is the seam, the way an httpx transport is: a store declares its
``scheme``, its option schema ``params``, the batch sizes it wants and its SDK's rows
``errors`` in the one error table (:mod:`indexcheck.remote.translate`), and implements only
what differs per engine
(``_scan``, ``_fetch_batch``, ``_query_batch``, ``_exact_batch``). The base batches,
validates options (unknown keys are refused with a did-you-mean), checks every search
once (k at least 1, the query dimension, exact search offered at all), runs SDK calls
through one ``_call`` that translates and retries, closes, and works as a context
manager. It has no write method, and no store adds one: the only writers
(``write_faiss_folder``, ``write_vectors_file``) create new files for ``indexcheck
embed``; builders of test indexes live in ``tests/builders``.

The result types and the :class:`VectorStore` protocol live in :mod:`.protocol`, the array
helpers in :mod:`.arrays`; both are re-exported here, where stores import them from.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..errors import (
    BackendUnavailableError,
    FilterError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
    TransientError,
)
from ..remote.retry import RetryHooks, RetryPolicy
from ..remote.translate import ErrorMap, translate, translating
from .arrays import as_float32_matrix as as_float32_matrix
from .arrays import empty_result as empty_result
from .arrays import pack_rows as pack_rows
from .params import Param, check_params
from .params import StoreSpec as StoreSpec  # re-exported: stores import it from here
from .protocol import Fetched as Fetched
from .protocol import StoreInfo as StoreInfo
from .protocol import VectorBatch as VectorBatch
from .protocol import VectorStore as VectorStore

T = TypeVar("T")
S = TypeVar("S", bound="BaseStore")


def import_sdk(module: str, extra: str, package: str) -> Any:
    """The SDK ``module`` of the store installed by the extra ``extra``, imported when the
    store opens; MissingDependencyError (exit 2) naming ``pip install 'indexcheck[extra]'``
    (``package`` is what it installs) when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"the {extra} store", extra, package) from exc


class BaseStore:
    """Read-only access to a vector index: batching, options, errors and closing, once.

    A subclass sets ``scheme``, ``params`` and ``errors`` and implements ``_scan`` and
    ``_fetch_batch`` (plus ``_query_batch`` when the engine searches, ``_exact_batch``
    when it has an exact search, ``_search_dimension`` so queries are checked, and
    ``info`` and ``fingerprint`` when it knows better than a scan). The defaults below
    are exact and in memory, fine for small stores.
    """

    scheme: ClassVar[str] = ""
    #: option schema of ``?key=value``; the base refuses keys not listed here
    params: ClassVar[Mapping[str, Param]] = {}
    #: hints shown when a user passes a known-bad key (e.g. a token in the URL)
    param_hints: ClassVar[Mapping[str, str]] = {}
    #: options that set the search effort, which compare-ann ``--sweep`` may vary
    sweepable: ClassVar[tuple[str, ...]] = ()
    #: ids per ``_fetch_batch`` call, query vectors per ``_query_batch`` call
    fetch_batch: ClassVar[int] = 1000
    query_batch: ClassVar[int] = 1024
    #: rows per ``_scan`` page at the most, where the engine refuses larger ones
    scan_batch: ClassVar[int | None] = None
    #: the retry policy of a remote engine; None: failures are not retried
    retry: RetryPolicy | None = None
    #: the SDK's rows of the error table (:mod:`indexcheck.remote.translate`); None: SDK
    #: exceptions propagate
    errors: ClassVar[ErrorMap | None] = None
    #: how messages name the engine ('Upstash'); the scheme when empty
    label: ClassVar[str] = ""
    #: the refusals of a bad search, ``str.format`` templates over ``store`` (the store),
    #: ``label`` (its name), ``k``, ``got`` and ``want`` (query and store dimensions)
    k_message: ClassVar[str] = "k must be at least 1 for a {label} query, got {k}"
    dimension_message: ClassVar[str] = "expected vectors of dimension {want}, got {got}"
    dimension_error: ClassVar[type[InputError]] = SpecError
    no_exact_message: ClassVar[str] = (
        "the {label} store offers no exact search; indexcheck computes exact results "
        "itself from vectors read with iter_vectors"
    )

    spec: str = ""
    requests: int = 0
    """SDK calls attempted through :meth:`_call` (retries included)."""
    retries: int = 0
    """Retries :meth:`_call` made."""
    """The spec it was opened with, secrets removed (safe to print)."""
    has_exact: bool = False
    """True when :meth:`exact_query` runs an exact search inside the backend."""
    where: str = ""
    """Where the index lives (host, path), for messages; never holds a secret."""
    ordered: bool = False
    """True when ``iter_vectors`` yields rows in build (insertion) order (a store says so
    itself: faiss, parquet, lancedb, llamaindex); False, the default, for engines that
    return rows sorted by id or hash, so no order is invented (check-index then reports
    shifts as ``holds_vector_of`` chains instead of positional offsets)."""
    order_source: str = "store order"
    """How the rows are ordered, for findings (``details.order``)."""

    def __init__(self, spec: StoreSpec | None = None, options: Any = None) -> None:
        if spec is not None:
            self.spec = f"{spec.scheme}:{spec.location}"
            self.where = spec.location
            self.values = self.check_params(spec.params)
        self.options = options

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def check_params(cls, given: Mapping[str, str]) -> dict[str, Any]:
        """Typed option values; SpecError (exit 2) for an unknown key or a bad value."""
        return check_params(cls.scheme or cls.__name__, given, cls.params, cls.param_hints)

    @classmethod
    def open(cls: type[S], spec: StoreSpec, options: Any = None) -> S:
        """Validate the options of ``spec`` against ``params``, then build the store."""
        cls.check_params(spec.params)
        return cls.from_spec(spec, options)

    @classmethod
    def from_spec(cls: type[S], spec: StoreSpec, options: Any = None) -> S:
        """Build the store from a checked spec; the default calls ``cls(spec, options)``."""
        return cls(spec, options)

    # -- what a store implements -----------------------------------------------------------
    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Yield every stored vector once, in blocks of about ``batch``."""
        raise TypeError(f"{type(self).__name__} must implement _scan")

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for at most ``fetch_batch`` ids, in the order asked."""
        raise TypeError(f"{type(self).__name__} must implement _fetch_batch")

    def _search_dimension(self) -> int | None:
        """The dimension queries must have; None (the default) leaves them unchecked."""
        return None

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search inside the backend for checked float32 (q, d) vectors; a store
        with ``has_exact`` implements it."""
        raise TypeError(f"{type(self).__name__} must implement _exact_batch")

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal search for at most ``query_batch`` float32 (q, d) vectors; the default
        is an exact search over the scanned vectors (``info().metric`` sets the score)."""
        from .local import LOCAL_METRICS, exact_knn, ids_of

        ids, matrix = self._all_vectors()
        metric = self.info().metric
        D, P = exact_knn(matrix, vectors, k, metric if metric in LOCAL_METRICS else "cosine")
        return D, ids_of(P, ids)

    def _native_filter(self, node: Any) -> Any:
        """The engine's own filter for a parsed portable filter (:mod:`indexcheck.filters`);
        a store that cannot filter keeps this default, which refuses (exit 2)."""
        raise FilterError(
            f"the {self._label} store cannot filter its search; "
            "run without --filter (or without per-question filters) on this store"
        )

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Normal search under ``native`` (what ``_native_filter`` returned) for at most
        ``query_batch`` vectors; a store that filters implements it."""
        raise FilterError(f"the {self._label} store cannot filter its search")

    def native_filter(self, filter: Any) -> Any:
        """Parse (JSON text, a dict, or an already parsed node) and translate once."""
        from ..filters import parse_filter
        from ..filters.grammar import And, Cond, Or

        node = filter if isinstance(filter, Cond | And | Or) else parse_filter(filter)
        return self._native_filter(node)

    def _translate(self, exc: BaseException, doing: str = "reading") -> Exception | None:
        """The IndexcheckError for an SDK exception raised while ``doing`` something, a
        :class:`TransientError` when retrying may help, or None when it is not the SDK's:
        :func:`indexcheck.remote.translate.translate` by the rows of ``errors``."""
        return translate(exc, self.errors, **self._fields(doing))

    def _error_fields(self, doing: str) -> dict[str, Any]:
        """Fields the messages of ``errors`` use besides name, text, doing and store
        (an HTTP status, a redacted text, a ``what`` phrase); none by default."""
        return {}

    def _fields(self, doing: str) -> dict[str, Any]:
        return {"store": self, "doing": doing, "label": self._label, **self._error_fields(doing)}

    @property
    def _label(self) -> str:
        return self.label or self.scheme or type(self).__name__

    # -- defaults --------------------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Count and dimension from a scan; ``metric`` from ``?metric=`` (cosine default)."""
        from .local import LOCAL_METRICS

        ids, matrix = self._all_vectors()
        metric = str(getattr(self, "values", {}).get("metric", "cosine"))
        _, score, higher = LOCAL_METRICS.get(metric, ("ip", "unknown", True))
        return StoreInfo(
            backend=self.scheme or type(self).__name__,
            count=len(ids),
            dimension=int(matrix.shape[1]) if matrix.ndim == 2 else 0,
            metric=metric,
            score=score,
            higher_is_better=higher,
            approximate=False,
        )

    def described(
        self, count: int, dimension: int, metric: str, approximate: bool, details: dict[str, Any]
    ) -> StoreInfo:
        """The store's :class:`StoreInfo`, the score formula and its direction taken from
        this scheme's row of the one metric table (:mod:`.metric_table`; ``unknown`` for a
        metric it does not list)."""
        from .metric_table import score_of

        score, higher = score_of(self.scheme or "", metric) or ("unknown", None)
        return StoreInfo(
            self.scheme or type(self).__name__, count, dimension, metric, score, higher,
            approximate, details,
        )  # fmt: skip

    def fingerprint(self) -> str:
        """xxh3-128 over every id and vector (one scan)."""
        import xxhash

        h = xxhash.xxh3_128()
        for b in self.iter_vectors():
            for i, vid in enumerate(b.ids):
                h.update(vid.encode("utf-8") + b"\0")
                h.update(np.ascontiguousarray(b.vectors[i]).tobytes())
        return h.hexdigest()

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search inside the backend, same shapes and scale as :meth:`query`; a
        store without ``has_exact`` refuses (InputError, exit 2)."""
        if not self.has_exact:
            raise InputError(self.no_exact_message.format(store=self, label=self._label))
        xq = self._checked(vectors, k)
        if xq.shape[0] == 0:
            return empty_result(0, k)
        return self._exact_batch(xq, k)

    def close(self) -> None:
        """Release the connection or memory; closing twice is fine."""
        return None

    def __enter__(self: S) -> S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r})"

    # -- batching, written once ------------------------------------------------------------
    def fetch(self, ids: Sequence[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked: float32 (n, d), found, dims, texts."""
        ids = [str(i) for i in ids]
        size = max(1, int(self.fetch_batch))
        if len(ids) <= size:
            return self._fetch_batch(ids)
        parts = [self._fetch_batch(ids[i : i + size]) for i in range(0, len(ids), size)]
        texts = None
        if any(p.texts is not None for p in parts):
            texts = [t for p in parts for t in (p.texts or [None] * len(p.ids))]
        return Fetched(
            ids=ids,
            vectors=np.concatenate([p.vectors for p in parts]),
            found=np.concatenate([p.found for p in parts]),
            dims=np.concatenate([p.dims for p in parts]),
            texts=texts,
        )

    def iter_vectors(self, batch: int = 1000) -> Iterator[VectorBatch]:
        """Every stored vector once, in blocks of at most ``batch``."""
        if int(batch) < 1:
            raise SpecError(f"batch must be at least 1, got {batch}")
        cap = self.scan_batch
        yield from self._scan(int(batch) if cap is None else min(int(batch), cap))

    def query(
        self, vectors: np.ndarray, k: int, filter: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Normal (approximate) search: ``vectors`` float32 (q, d) -> (D float32 (q, k) in
        the backend's scale, NaN where missing; I object (q, k) ids, None where missing).

        ``filter``: a portable metadata filter (JSON text, dict or parsed node), validated
        and translated once (``_native_filter``), then passed to the engine per batch.
        InputError (exit 2) for k < 1 or queries of another dimension than the store's."""
        xq = self._checked(vectors, k)
        if xq.shape[0] == 0:
            return empty_result(0, k)
        native = None if filter is None else self.native_filter(filter)

        def run(part: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if filter is None:
                return self._query_batch(part, k)
            return self._filtered_query_batch(part, k, native)

        size = max(1, int(self.query_batch))
        if xq.shape[0] <= size:
            return run(xq)
        parts = [run(xq[i : i + size]) for i in range(0, xq.shape[0], size)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _checked(self, vectors: np.ndarray, k: int) -> np.ndarray:
        """``vectors`` as float32 (q, d), once k and the dimension are checked."""
        if k < 1:
            raise InputError(self.k_message.format(store=self, label=self._label, k=k))
        want = self._search_dimension()
        xq = as_float32_matrix(vectors)
        if want is not None and xq.shape[1] != want:
            raise self.dimension_error(
                self.dimension_message.format(
                    store=self, label=self._label, got=xq.shape[1], want=want
                )
            )
        return xq

    def _all_vectors(self) -> tuple[list[str], np.ndarray]:
        ids: list[str] = []
        blocks: list[np.ndarray] = []
        for b in self.iter_vectors():
            ids.extend(b.ids)
            blocks.append(b.vectors)
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        return ids, matrix

    # -- SDK calls: translation and retries, written once ----------------------------------
    def _sleep(self, seconds: float) -> None:
        """Wait between retries: ``_sleep_fn`` when a store was given one (tests), else
        ``time.sleep``."""
        getattr(self, "_sleep_fn", time.sleep)(seconds)

    def _call(self, doing: str, fn: Callable[[], T]) -> T:
        """Run one SDK call; turn what it raises into an IndexcheckError by ``errors``,
        retrying a :class:`TransientError` per ``retry`` (remote engines only) within its
        ``max_wait`` budget (time in requests plus backoff), in the one retry loop."""

        def once() -> T:
            with translating(self.errors, **self._fields(doing)):
                return fn()

        return (self.retry or RetryPolicy(max_retries=0)).run(
            once,
            who=self.scheme or type(self).__name__,
            gave_up=lambda err, attempts, _waited: self._gave_up(doing, err, attempts),
            chain=False,
            hooks=RetryHooks(sleep=self._sleep, before=self._before_call, on_retry=self._on_retry),
        )

    def _translating(self, doing: str) -> AbstractContextManager[None]:
        """Translate what the block raises by ``errors``, with no retries: for
        work that cannot be repeated piecewise (a server-side cursor, a generator)."""
        return translating(self.errors, gave_up=self._gave_up, **self._fields(doing))

    def _before_call(self) -> None:
        """Hook run before every attempt of an SDK call; counts ``requests``."""
        self.requests += 1

    def _on_retry(self) -> None:
        """Hook run before each retry; counts ``retries``."""
        self.retries += 1

    def _gave_up(
        self, doing: str, err: TransientError, attempts: int
    ) -> RateLimitError | BackendUnavailableError:
        """The error raised once a transient failure outlived every retry (the sentences
        of ``errors``, or the default ones)."""
        return (self.errors or _DEFAULT_ERRORS).gave_up(err, attempts, **self._fields(doing))


_DEFAULT_ERRORS = ErrorMap()
