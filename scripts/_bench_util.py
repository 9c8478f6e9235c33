"""Helpers for scripts/bench_stores.py: request meters, data, checks and the printed table.

A meter counts the round trips a store makes to its engine while it is running:
``start()`` installs the counting, ``stop()`` removes it and returns a Counter of
requests by kind. Counting is installed on one object instance (never on a class), so
nothing else in the process is affected.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

WORDS = (
    "library card renew loan hold fine account room event digital ebook audiobook printer "
    "wifi laptop study quiet children teen adult branch hours holiday closed desk staff "
    "return overdue lost damaged replace membership guest visitor museum pass archive map"
).split()


@dataclass
class Data:
    """The rows every backend is built from: ids, float32 (n, d) unit vectors, texts."""

    ids: list[str]
    vectors: np.ndarray
    texts: list[str]
    row: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.row = {v: i for i, v in enumerate(self.ids)}


def make_data(n: int, dim: int, numeric_ids: bool = False, seed: int = 0) -> Data:
    """``n`` ids (``c0000042``, or ``42`` with ``numeric_ids``), float32 (n, dim) unit
    vectors (seeded) and ~40-word texts."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = np.asarray(WORDS)[rng.integers(0, len(WORDS), size=(n, 40))]
    texts = [" ".join(row) + f" (chunk {i})." for i, row in enumerate(words.tolist())]
    ids = [str(i) if numeric_ids else f"c{i:07d}" for i in range(n)]
    return Data(ids, vectors, texts)


def max_error(data: Data, ids: Sequence[str], vectors: np.ndarray) -> float:
    """Largest |stored - source| over ``ids``/``vectors`` (n, d); inf if any id is
    unknown, repeated or missing, or a shape is wrong."""
    if (
        len(ids) != len(data.ids)
        or len(set(ids)) != len(ids)
        or vectors.shape
        != (
            len(ids),
            data.vectors.shape[1],
        )
    ):
        return float("inf")
    try:
        rows = np.fromiter((data.row[i] for i in ids), dtype=np.int64, count=len(ids))
    except KeyError:
        return float("inf")
    return float(np.abs(vectors - data.vectors[rows]).max()) if len(ids) else 0.0


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class Meter:
    """Counts nothing: in-process stores (faiss, parquet) make no requests."""

    def start(self) -> None:
        return None

    def stop(self) -> Counter[str]:
        return Counter()


class MethodMeter(Meter):
    """Counts calls of the named methods of one object (patched on the instance)."""

    def __init__(self, obj: Any, names: Iterable[str], prefix: str = "") -> None:
        self.obj, self.prefix = obj, prefix
        self.names = [n for n in names if callable(getattr(obj, n, None))]
        self.counts: Counter[str] = Counter()
        self._own: dict[str, Any] = {}

    def start(self) -> None:
        self.counts = Counter()
        own = vars(self.obj)
        self._own = {n: own[n] for n in self.names if n in own}
        for name in self.names:
            setattr(self.obj, name, self._wrap(name, getattr(self.obj, name)))

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        counts, label = self.counts, self.prefix + name

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[label] += 1
            return fn(*args, **kwargs)

        return counted

    def stop(self) -> Counter[str]:
        for name in self.names:
            if name in self._own:
                setattr(self.obj, name, self._own[name])
            else:
                vars(self.obj).pop(name, None)  # back to the class's method
        return self.counts


class _CountingRpc:
    """A gRPC multi-callable that counts its calls (``.future`` etc. pass through)."""

    def __init__(self, inner: Any, name: str, counts: Counter[str]) -> None:
        self._inner, self._name, self._counts = inner, name, counts

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._counts[self._name] += 1
        return self._inner(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr in ("future", "with_call"):  # the other ways of sending the RPC
            self._counts[self._name] += 1
        return getattr(self._inner, attr)


class GrpcStubMeter(Meter):
    """Counts every RPC sent through one pymilvus handler's service stub, by RPC name."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.counts: Counter[str] = Counter()
        self._saved: dict[str, Any] = {}

    def start(self) -> None:
        self.counts = Counter()
        stub = self.handler._stub
        self._saved = {k: v for k, v in vars(stub).items() if callable(v)}
        for name, rpc in self._saved.items():
            setattr(stub, name, _CountingRpc(rpc, name, self.counts))

    def stop(self) -> Counter[str]:
        stub = self.handler._stub
        for name, rpc in self._saved.items():
            setattr(stub, name, rpc)
        return self.counts


class PsycopgMeter(Meter):
    """Counts statements sent on one psycopg connection, by SQL verb.

    Swaps the connection's ``cursor_factory`` (used by ``conn.cursor()`` and
    ``conn.execute``) and ``server_cursor_factory`` for subclasses that count each
    ``execute`` (one statement), ``executemany`` (one per parameter set) and, on named
    cursors, each fetch (a FETCH statement).
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.counts: Counter[str] = Counter()
        self._saved: tuple[Any, Any] | None = None

    def start(self) -> None:
        import psycopg

        counts = self.counts = Counter()
        conn = self.conn

        def verb(query: Any) -> str:
            text = query if isinstance(query, str) else query.as_string(conn)
            return (text.split(None, 1) or ["?"])[0].upper()

        class CountingCursor(psycopg.Cursor):
            def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
                counts[verb(query)] += 1
                return super().execute(query, *args, **kwargs)

            def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> Any:
                params = list(params_seq)
                counts[verb(query)] += len(params)
                return super().executemany(query, params, **kwargs)

        class CountingServerCursor(psycopg.ServerCursor):
            def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
                counts["DECLARE"] += 1
                return super().execute(query, *args, **kwargs)

            def fetchone(self) -> Any:
                counts["FETCH"] += 1
                return super().fetchone()

            def fetchmany(self, size: int = 0) -> Any:
                counts["FETCH"] += 1
                return super().fetchmany(size)

            def fetchall(self) -> Any:
                counts["FETCH"] += 1
                return super().fetchall()

        self._saved = (conn.cursor_factory, conn.server_cursor_factory)
        conn.cursor_factory = CountingCursor
        conn.server_cursor_factory = CountingServerCursor

    def stop(self) -> Counter[str]:
        if self._saved is not None:
            self.conn.cursor_factory, self.conn.server_cursor_factory = self._saved
            self._saved = None
        return self.counts


class EmulatorMeter(Meter):
    """Counts the HTTP requests a loopback emulator recorded, by command."""

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self._first = 0

    def start(self) -> None:
        self._first = len(self.emulator.requests)

    def stop(self) -> Counter[str]:
        return Counter(r.command for r in self.emulator.requests[self._first :])


def redactor(secrets: list[str]) -> Callable[[str], str]:
    """A function blanking every string in ``secrets`` (read at call time) out of a text."""

    def redact(text: str) -> str:
        for s in secrets:
            if s:
                text = text.replace(s, "***")
        return text

    return redact


@dataclass
class Row:
    """One backend's figures: seconds, request counts and checks."""

    backend: str
    n: int
    fetch_s: float = float("nan")
    iter_s: float = float("nan")
    base_s: float = float("nan")
    fetch_req: Counter[str] = field(default_factory=Counter)
    iter_req: Counter[str] = field(default_factory=Counter)
    open_s: float = float("nan")
    base_open_s: float = float("nan")
    build_s: float = float("nan")
    errors: list[float] = field(default_factory=list)
    failed: str = ""


def _rate(n: int, s: float) -> str:
    return f"{n / s:,.0f}" if s == s and s > 0 else "-"


def _per_k(n: int, req: Counter[str], in_process: bool) -> str:
    if in_process:
        return "0*"
    return f"{1000 * sum(req.values()) / n:.2f}" if n else "-"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if a == a and b == b and b > 0 else "-"


def render(rows: list[Row], in_process: set[str]) -> str:
    """The result table as fixed-width text."""
    head = (
        "backend",
        "n",
        "fetch vec/s",
        "fetch req/1k",
        "iter vec/s",
        "iter req/1k",
        "base vec/s",
        "fetch/base",
        "iter/base",
        "max err",
    )
    lines: list[tuple[str, ...]] = [head]
    for r in rows:
        if r.failed:
            lines.append((r.backend, str(r.n), "failed: " + r.failed, *[""] * 7))
            continue
        err = max(r.errors) if r.errors else float("nan")
        lines.append(
            (
                r.backend,
                str(r.n),
                _rate(r.n, r.fetch_s),
                _per_k(r.n, r.fetch_req, r.backend in in_process),
                _rate(r.n, r.iter_s),
                _per_k(r.n, r.iter_req, r.backend in in_process),
                _rate(r.n, r.base_s),
                _ratio(r.fetch_s, r.base_s),
                _ratio(r.iter_s, r.base_s),
                "MISMATCH" if err == float("inf") else f"{err:.1e}",
            )
        )
    widths = [max(len(line[i]) for line in lines if len(line[i]) < 40) for i in range(len(head))]
    out = []
    for line in lines:
        cells = [line[0].ljust(widths[0])]
        cells += [
            c.rjust(w) if len(c) < 40 else c for c, w in zip(line[1:], widths[1:], strict=True)
        ]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def describe(req: Counter[str]) -> str:
    """``kind x count`` pairs, most frequent first."""
    return ", ".join(f"{k} x{v}" for k, v in req.most_common()) or "none"
