"""``--engine ray``: the chunks embedded on a Ray cluster, the model opened once per worker.

A chunks file Ray Data can split (Parquet, JSONL) is read as blocks **on the workers**
(``ray.data.read_parquet``/``read_json``) and embedded by an actor pool of
:class:`~.worker.EmbedWorker` in ``map_batches``; only the ids, the texts' 16-byte
digests and the vectors come back, in order. Other sources (a store's own texts, CSV, a
Corpus in memory) are read here and their blocks sent to an actor pool of the same class,
at most two blocks per actor in flight. With ``--cache FILE`` the blocks are read here too:
the cache is one SQLite file on this machine, so hits are never sent and what comes back is
committed block by block (a stopped run resumes from it).

A hosted embedder's requests pass one named :class:`~.worker.RateGate` actor:
``--concurrency`` requests in flight across the cluster, one Retry-After for every worker.
What fails on a worker comes back as a :class:`~.worker.WorkerFailure` and is raised
here as what it is (:func:`raised`).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ...errors import (
    BackendUnavailableError,
    BugError,
    IndexcheckError,
    InputError,
    MissingDependencyError,
)
from ...remote.translate import ErrorMap, Rule, doing
from .blocks import ActorPool, RemoteFresh
from .worker import CompareWorker, EmbedWorker, RateGate, WorkerFailure

#: Ray's rows of the error table: a head that does not answer the probe, or ray.init's refusal
RAY_ERRORS = ErrorMap(
    Rule(
        OSError,
        BackendUnavailableError,
        "cannot reach the Ray cluster at {address}: {reason}; check --ray-address (or "
        "RAY_ADDRESS): a head started with `ray start --head` listens on port 6379",
        when=doing("probing"),
    ),
    Rule(
        ConnectionError,
        BackendUnavailableError,
        "cannot reach the Ray cluster at {address}: {text}; check --ray-address",
        when=doing("connecting"),
    ),
    fields=lambda c: {"reason": getattr(c.exc, "strerror", None) or c.text},
    service="ray",
)

#: environment variables a worker needs to open a hosted embedder as the driver did
#: (keys, server URLs, the model cache); forwarded to the embedding actors
FORWARDED_ENV = ("MISTRAL_", "OPENAI_", "INDEXCHECK_", "HF_", "SENTENCE_TRANSFORMERS_")
#: the chunks files Ray Data reads on the workers
SPLITTABLE = {".parquet": "parquet", ".jsonl": "json"}
#: the job's runtime environment (JSON, or a JSON file's path), given to ray.init
RUNTIME_ENV_VAR = "INDEXCHECK_RAY_RUNTIME_ENV"
DOCS = "docs/guides/ray.md"


def runtime_env_from(value: str | None) -> dict[str, Any] | None:
    """The job's runtime environment from ``INDEXCHECK_RAY_RUNTIME_ENV``: a JSON object
    (``{"working_dir": ".", "pip": [...]}``) or the path of a file holding one; None when
    unset. InputError (exit 2) for anything else."""
    from ...inputs.files import json_object

    if not value or not value.strip():
        return None
    text = value.strip()
    if not text.startswith(("{", "[")):
        try:
            text = Path(text).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"{RUNTIME_ENV_VAR}={value}: cannot read {exc.filename or value} "
                f"({exc.strerror}); give a JSON object or the path of a JSON file"
            ) from None
    fix = 'give an object such as {"working_dir": "."}'
    return json_object(text, RUNTIME_ENV_VAR, fix, InputError)


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def _refuse_unreachable(address: str | None) -> None:
    """Exit 3 at once when nothing listens at a ``host:port`` (or ``ray://host:port``) Ray
    address: ray.init would wait minutes for the head's GCS before it gives up. Other forms
    ("auto", "local", None) are left to Ray."""
    import re
    import socket

    m = re.fullmatch(r"(?:ray://)?\[?([\w.\-:]+?)\]?:(\d+)", address or "")
    if m is None:
        return
    with RAY_ERRORS.mapping("probing", address=address):
        socket.create_connection((m.group(1), int(m.group(2))), timeout=5).close()


def _failure_in(exc: BaseException) -> WorkerFailure | None:
    """The WorkerFailure under Ray's wrappers (RayTaskError, Ray Data's UserCodeException)."""
    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, WorkerFailure) and hasattr(e, "kind"):
            return e
        todo += [e.__cause__, e.__context__, getattr(e, "cause", None)]
    return None


def raised(exc: BaseException) -> BaseException:
    """What a worker's failure is here: its indexcheck error as itself (same exit code), a
    module it cannot import as exit 2 naming what to install, anything else a BugError
    (INDEXCHECK_DEBUG=1 prints the worker's traceback). Ray's own errors pass through."""
    found = _failure_in(exc)
    text = str(exc)
    if found is None:
        if "No module named" not in text:
            return exc
        name = text.split("No module named", 1)[1].split()[0].strip("'\":")
        found = WorkerFailure("import", "ModuleNotFoundError", f"No module named '{name}'", "")
    if os.environ.get("INDEXCHECK_DEBUG") and found.trace:
        print(f"traceback on the Ray worker:\n{found.trace}", file=sys.stderr)
    if found.kind == "indexcheck":
        import importlib

        module, _, qual = found.cls.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), qual)
        except (ImportError, AttributeError):
            cls = BackendUnavailableError
        error = cls.__new__(cls)
        Exception.__init__(error, found.message)
        return error  # type: ignore[no-any-return]
    if found.kind == "import":
        from ..._version import __version__

        missing = MissingDependencyError.__new__(MissingDependencyError)
        Exception.__init__(
            missing,
            f"a Ray worker cannot import what the embedder needs ({found.message}); install "
            f"indexcheck=={__version__} with its extras on every node, or run through the "
            f"job's runtime_env (pip and working_dir: {DOCS})",
        )
        return missing
    return BugError(
        f"a bug in indexcheck on a Ray worker ({found}); please report it with the "
        "traceback INDEXCHECK_DEBUG=1 prints"
    )


@contextmanager
def worker_errors() -> Iterator[None]:
    """Raise what fails on a worker as :func:`raised` says."""
    try:
        yield
    except IndexcheckError:
        raise
    except Exception as exc:
        mapped = raised(exc)
        if mapped is exc:
            raise
        raise mapped from None


def _account(embedder: Any, cost: dict[str, Any], truncated: Iterable[str]) -> None:
    """Add a worker's cost and truncated texts to the driver's embedder, so the manifest
    and the truncated-text warning are the same on Ray as locally."""
    stats = getattr(embedder, "stats", None)
    if stats is not None:
        for key, value in cost.items():
            setattr(stats, key, getattr(stats, key) + value)
    cut = getattr(embedder, "truncated", None)
    if truncated and isinstance(cut, set):
        cut.update(truncated)


def _splittable(embedder: Any, source: Any) -> str | None:
    """The Ray Data reader of a chunks file the workers can read (``parquet``, ``json``),
    or None: another source, or a cache file that holds embeddings (the blocks are read on
    the driver then, so hits are never sent)."""
    kind = SPLITTABLE.get(str(getattr(source, "suffix", "")).lower())
    if getattr(source, "path", None) is None or getattr(embedder, "cache", None) is not None:
        return None
    return kind


class RayEngine:
    """Blocks on the Ray cluster at ``address`` (None: RAY_ADDRESS, else a new local
    cluster)."""

    name = "ray"

    def __init__(self, address: str | None = None, inflight: int | None = None) -> None:
        try:
            import ray
            import ray.data  # noqa: F401  (the 'data' extra: pandas, fsspec)
        except ImportError:
            raise MissingDependencyError("--engine ray", "ray", "ray[data]") from None
        self.ray = ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        self._owns = False
        runtime_env = runtime_env_from(os.environ.get(RUNTIME_ENV_VAR))
        if not ray.is_initialized():
            _refuse_unreachable(address)
            with RAY_ERRORS.mapping("connecting", address=address):
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         runtime_env=runtime_env)  # fmt: skip
            self._owns = True
        elif runtime_env is not None:
            raise InputError(
                f"{RUNTIME_ENV_VAR} is set but Ray was already initialised in this process; "
                "pass the runtime_env to your own ray.init(runtime_env=...) and unset it"
            )
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        self.inflight = inflight or max(2, 2 * self.cpus)
        self._call = ray.remote(_call)
        self._gate: Any = None

    # --- the embedding actors --------------------------------------------------------

    def _worker_kwargs(self, embedder: Any) -> dict[str, Any]:
        """What an EmbedWorker needs to open ``embedder`` on a worker: its spec (an
        embedder built as an object, with no spec, travels cloudpickled), the
        ``--concurrency``, the cluster's RateGate for a hosted one, the environment."""
        inner = getattr(embedder, "inner", embedder) if hasattr(embedder, "split") else embedder
        spec = getattr(inner, "spec", None)
        pickled = None
        if spec is None:
            import cloudpickle

            try:
                pickled = cloudpickle.dumps(inner)
            except Exception as exc:  # an SDK session or a compiled model
                raise BugError(
                    f"the embedder object {type(inner).__name__} cannot be sent to Ray "
                    f"workers ({exc}); open it from its spec (open_embedder) instead"
                ) from None
        base = inner
        while not hasattr(base, "_request") and hasattr(base, "inner"):
            base = base.inner
        concurrency = int(getattr(base, "concurrency", 1) or 1)
        gate = None
        if getattr(base, "hosted", False):
            gate = f"indexcheck-gate-{uuid.uuid4().hex[:12]}"
            remote = self.ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(RateGate)
            self._gate = remote.options(name=gate, scheduling_strategy=self._here()).remote(
                concurrency
            )
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}
        return {"spec": spec, "pickled": pickled, "concurrency": concurrency, "gate": gate,
                "env": env}  # fmt: skip

    def _here(self) -> Any:
        """Placed on the driver's node, where it is lost only with the driver."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = self.ray.get_runtime_context().get_node_id()
        return NodeAffinitySchedulingStrategy(node, soft=True)

    def embed_blocks(self, embedder: Any, blocks: Iterable[list[str]]) -> Iterator[np.ndarray]:
        """Blocks read here, embedded by one EmbedWorker per cluster CPU (hits of a
        ``CachedEmbedder`` never sent; what comes back committed to its cache). An actor
        whose process or node is lost is dropped and its blocks sent to the others."""
        cached = hasattr(embedder, "split") and hasattr(embedder, "merge")
        inner = embedder.inner if cached else embedder
        pool = ActorPool(self.ray, self._worker_kwargs(embedder), self.cpus)

        def submit(texts: list[str]) -> Any:
            if not cached:
                return texts, {}, texts, pool.submit(texts)
            known, todo = embedder.split(texts)
            return texts, known, todo, pool.submit(todo) if todo else None

        try:
            with worker_errors():
                for texts, known, todo, job in self._ordered(submit, blocks):
                    fresh = None
                    if job is not None:
                        fresh, cost, truncated = pool.get(job, todo)
                        _account(inner, cost, truncated)
                    if not cached:
                        assert fresh is not None
                        yield fresh
                    else:
                        yield embedder.merge(texts, known, todo, fresh)
        finally:
            pool.close()
            self._drop_gate()

    def read_on_workers(
        self, embedder: Any, source: Any, block: int
    ) -> Iterator[tuple[list[str], np.ndarray, np.ndarray]] | None:
        """A Ray Data pipeline over a Parquet or JSONL chunks file: read in blocks on the
        workers, embedded in ``map_batches`` by an actor pool of EmbedWorker; yields
        (ids, text digests uint64 (m, 2), float32 (m, d)) in file order. None for another
        source, or when a cache file holds embeddings (the blocks are read here then)."""
        kind = _splittable(embedder, source)
        if kind is None:
            return None
        return self._pipeline(embedder, source, kind, block)

    def _stage(self, source: Any, kind: str, block: int, worker: type, kwargs: Any) -> Any:
        """The chunks file read on the workers in blocks of ``block`` rows (in file order,
        ``id`` and ``text`` columns), mapped by an actor pool of ``worker`` (one actor per
        cluster CPU but one, the other left to the reads)."""
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        cols = {source.id_column: "id", source.text_column: "text"}
        read: Any = ray.data.read_parquet if kind == "parquet" else ray.data.read_json
        ds = read(str(os.path.abspath(source.path)), num_cpus=0.25).select_columns(list(cols))
        if any(k != v for k, v in cols.items()):
            ds = ds.rename_columns(cols)
        # one file is one block when read: cut it so that every actor gets work
        ds = ds.repartition(target_num_rows_per_block=block)
        return ds.map_batches(
            worker, fn_constructor_kwargs=kwargs, batch_size=block, batch_format="numpy",
            concurrency=max(1, self.cpus - 1), num_cpus=1,
        )  # fmt: skip

    def _pipeline(
        self, embedder: Any, source: Any, kind: str, block: int
    ) -> Iterator[tuple[list[str], np.ndarray, np.ndarray]]:
        import json

        inner = getattr(embedder, "inner", embedder) if hasattr(embedder, "split") else embedder
        kwargs = self._worker_kwargs(embedder)
        try:
            with worker_errors():
                ds = self._stage(source, kind, block, EmbedWorker, kwargs)
                for out in ds.iter_batches(batch_size=None, batch_format="numpy"):
                    for meta in out["meta"]:
                        if meta:
                            found = json.loads(meta)
                            _account(inner, found["cost"], found["truncated"])
                    vectors = np.asarray(np.stack(list(out["vector"])), np.float32)
                    yield list(out["id"]), np.asarray(out["digest"], np.uint64), vectors
        finally:
            self._drop_gate()

    def compare_on_workers(
        self, embedder: Any, source: Any, compare: Any, block: int
    ) -> ComparedOnWorkers | None:
        """The chunks read, embedded **and compared** on the workers (``compare`` opens the
        store there and compares a block, see :class:`.worker.CompareWorker`): None
        where :meth:`read_on_workers` would be, or when ``compare`` is None (a store the
        workers cannot read by id). The fresh vectors stay in the cluster's object store."""
        kind = _splittable(embedder, source)
        if compare is None or kind is None:
            return None
        kwargs = {**self._worker_kwargs(embedder), "compare": compare}
        inner = getattr(embedder, "inner", embedder) if hasattr(embedder, "split") else embedder
        try:
            with worker_errors():
                done = self._stage(source, kind, block, CompareWorker, kwargs).materialize()
        finally:
            self._drop_gate()
        return ComparedOnWorkers(self.ray, done, inner, int(compare.d))

    def _drop_gate(self) -> None:
        if self._gate is not None:
            self.ray.kill(self._gate)
            self._gate = None

    # --- anything else, as tasks ------------------------------------------------------

    def _ordered(self, submit: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """submit(item) for each item with at most ``inflight`` outstanding, in order."""
        queue: deque[Any] = deque()
        for item in items:
            queue.append(submit(item))
            if len(queue) >= self.inflight:
                yield queue.popleft()
        while queue:
            yield queue.popleft()

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        ref = self.ray.put(fn)
        for job in self._ordered(lambda item: self._call.remote(ref, item), items):
            yield self.ray.get(job)

    def close(self) -> None:
        self._drop_gate()
        if self._owns:
            self.ray.shutdown()


class ComparedOnWorkers:
    """A compared dataset left in the cluster's object store: :meth:`blocks` brings back
    what the result needs, in chunk order; :attr:`fresh` reads unit fresh vectors by
    position (only the blocks asked for travel)."""

    def __init__(self, ray: Any, done: Any, embedder: Any, d: int) -> None:
        self.ray, self.done, self.embedder, self.d = ray, done, embedder, d
        self.fresh = RemoteFresh(ray, done, d)

    def blocks(self) -> Iterator[WorkedBlock]:
        """What the result needs of each block, in chunk order (:class:`WorkedBlock`)."""
        import json

        light = self.done.drop_columns(["fresh"])
        with worker_errors():
            for out in light.iter_batches(batch_size=None, batch_format="numpy"):
                batches = []
                for r, meta in enumerate(out["meta"]):
                    if meta:
                        found = json.loads(meta)
                        _account(self.embedder, found["cost"], found["truncated"])
                        batches.append((r, int(found["rows"])))
                low = [np.frombuffer(b, np.float32) for b in out["low"] if len(b)]
                lows = np.stack(low) if low else np.zeros((0, self.d), np.float32)
                yield WorkedBlock(
                    list(out["id"]), np.asarray(out["digest"], np.uint64),
                    np.asarray(out["status"], np.uint8), np.asarray(out["cosine"], np.float32),
                    np.asarray(out["dim"], np.int32), lows, np.asarray(out["near"], np.int64),
                    batches,
                )  # fmt: skip


class WorkedBlock(NamedTuple):
    """A compared block as it comes back: ``ids``, text ``digests`` uint64 (m, 2),
    ``status`` uint8 (m,), ``cosine`` float32 (m,), stored lengths ``dims`` int32 (m,),
    the LOW rows' unit stored vectors ``low`` float32 (k, d) in row order, ``near`` int64
    (m,) a LOW row's nearest match within its window and its worker's batch (an offset; 0:
    none), and ``batches``: (row, rows) where each worker's batch starts in this block."""

    ids: list[str]
    digests: np.ndarray
    status: np.ndarray
    cosine: np.ndarray
    dims: np.ndarray
    low: np.ndarray
    near: np.ndarray
    batches: list[tuple[int, int]]


__all__ = [
    "FORWARDED_ENV", "RAY_ERRORS", "RUNTIME_ENV_VAR", "ComparedOnWorkers", "RayEngine",
    "RemoteFresh", "WorkedBlock", "raised", "runtime_env_from", "worker_errors",
]  # fmt: skip
