"""Benchmark reading vectors out of every store backend, against the plain SDK read.

For each backend (built fresh in a temporary directory or loopback server; build time
is not part of any figure) it prints:

- vectors per second of ``store.fetch(ids)`` (every id, shuffled, in one call: the store
  batches as it normally does) and of ``store.iter_vectors()`` (default batch), both from
  an open store, and the round trips to the engine per 1000 vectors, counted for real:
  HTTP requests the Upstash emulator recorded, statements sent on the pgvector
  connection, SDK calls into the embedded engines (Chroma collection, Qdrant client,
  LanceDB table methods), and gRPC calls on the Milvus Lite stub. faiss and parquet
  read their file once when opened and make no requests: their figures include the open.
- the baseline in the same run: the same vectors (ids + float32 (n, d), no texts) read
  by the most direct SDK call a user would write, and indexcheck/baseline time ratios.
- ``qdrant`` keeps the string ids in the payload (``&id_field=``, fetch filters with
  ``scroll``); ``qdrant-int`` uses decimal ids as point ids (fetch uses ``retrieve``).
- ``max err``: the largest |read - written| over all vectors of all three reads (texts
  are checked too); ``MISMATCH`` if an id, a vector or a text is wrong or missing.

    .venv/bin/python scripts/bench_stores.py [--n 50000] [--dim 384]
        [--backends faiss,parquet,...] [--n-for qdrant=20000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
from _bench_util import (
    Data,
    EmulatorMeter,
    GrpcStubMeter,
    Meter,
    MethodMeter,
    PsycopgMeter,
    Row,
    describe,
    make_data,
    max_error,
    redactor,
    render,
    timed,
)

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = (
    "faiss",
    "parquet",
    "upstash",
    "pgvector",
    "chroma",
    "qdrant",
    "qdrant-int",
    "milvus",
    "lancedb",
)
IN_PROCESS = {"faiss", "parquet"}
SECRETS: list[str] = []  # blanked out of anything printed
redact = redactor(SECRETS)


@dataclass
class Built:
    """A freshly written index: its spec (may hold a password: never print it), what the
    baseline needs, and clean-up steps run after the backend is measured."""

    spec: str
    info: dict[str, Any] = field(default_factory=dict)
    cleanup: list[Callable[[], None]] = field(default_factory=list)


# Each baseline returns (open seconds, read seconds, ids, float32 (n, d) vectors).
Baseline = tuple[float, float, list[str], np.ndarray]


def _params(spec: str) -> dict[str, str]:
    return dict(parse_qsl(spec.rsplit("?", 1)[1])) if "?" in spec else {}


# ---- faiss -------------------------------------------------------------------------------


def build_faiss(root: Path, data: Data) -> Built:
    from indexcheck.stores.faiss.store import write_faiss_folder

    folder = root / "faiss"
    write_faiss_folder(folder, data.ids, data.vectors, data.texts, metric="ip")
    return Built(f"faiss:{folder}", {"folder": folder})


def base_faiss(b: Built, data: Data) -> Baseline:
    import faiss

    folder = b.info["folder"]

    def read() -> tuple[list[str], np.ndarray]:
        index = faiss.read_index(str(folder / "index.faiss"))
        rows = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        return [r["id"] for r in rows], index.reconstruct_n(0, index.ntotal)

    s, (ids, x) = timed(read)
    return 0.0, s, ids, x


# ---- parquet -----------------------------------------------------------------------------


def build_parquet(root: Path, data: Data) -> Built:
    from indexcheck.stores.files.store import write_vectors_file

    path = root / "vectors.parquet"
    write_vectors_file(path, data.ids, data.vectors, data.texts)
    return Built(f"parquet:{path}", {"path": path})


def base_parquet(b: Built, data: Data) -> Baseline:
    import pyarrow.parquet as pq

    def read() -> tuple[list[str], np.ndarray]:
        table = pq.read_table(b.info["path"], columns=["id", "vector"])
        col = table.column("vector").combine_chunks()
        x = col.flatten().to_numpy().reshape(len(col), -1)
        return table.column("id").to_pylist(), x

    s, (ids, x) = timed(read)
    return 0.0, s, ids, x


# ---- upstash (loopback emulator) -----------------------------------------------------------


def build_upstash(root: Path, data: Data) -> Built:
    from indexcheck.stores.upstash.store import TOKEN_ENV
    from tests.builders import upstash
    from tests.emulators.upstash_emulator import UpstashEmulator

    token = secrets.token_hex(16)
    SECRETS.append(token)
    emu = UpstashEmulator(token=token).start()
    os.environ[TOKEN_ENV] = token
    built = Built("", {"emulator": emu, "token": token})

    def forget_token() -> None:
        os.environ.pop(TOKEN_ENV, None)

    built.cleanup += [emu.stop, forget_token]
    try:
        built.spec = upstash.build(
            root, data.ids, data.vectors, data.texts, emulator=emu, params=""
        )
    except BaseException:
        for step in built.cleanup:
            step()
        raise
    built.info["url"] = built.spec.split(":", 1)[1].split("?", 1)[0]
    return built


def meter_upstash(store: Any, b: Built) -> Meter:
    return EmulatorMeter(b.info["emulator"])


def base_upstash(b: Built, data: Data) -> Baseline:
    from upstash_vector import Index

    o, index = timed(lambda: Index(url=b.info["url"], token=b.info["token"], allow_telemetry=False))

    def read() -> tuple[list[str], np.ndarray]:
        ids: list[str] = []
        vecs: list[list[float]] = []
        cursor = "0"
        while True:
            page = index.range(cursor=cursor, limit=1000, include_vectors=True)
            ids += [v.id for v in page.vectors]
            vecs += [v.vector for v in page.vectors]
            cursor = page.next_cursor
            if not cursor:
                return ids, np.asarray(vecs, dtype=np.float32)

    try:
        s, (ids, x) = timed(read)
    finally:
        index._client.close()
    return o, s, ids, x


# ---- pgvector (PostgreSQL + pgvector on loopback) ----------------------------------------------


def build_pgvector(root: Path, data: Data) -> Built:
    from tests import pg_support
    from tests.builders import pgvector

    built = Built("", cleanup=[pg_support.stop_shared_server])
    try:
        server = pg_support.shared_server()
        SECRETS.append(server.password)
        # no HNSW index: fetch and iter_vectors never use it, and building one on 50k x 384
        # takes minutes on two cores
        built.spec = pgvector.build(root, data.ids, data.vectors, data.texts, index=None)
    except BaseException:
        pg_support.stop_shared_server()
        raise
    built.info = {"dsn": server.dsn, "table": _params(built.spec)["table"]}
    return built


def meter_pgvector(store: Any, b: Built) -> Meter:
    return PsycopgMeter(store.conn)


def base_pgvector(b: Built, data: Data) -> Baseline:
    import psycopg

    o, conn = timed(lambda: psycopg.connect(b.info["dsn"], autocommit=True))

    def read() -> tuple[list[str], np.ndarray]:
        rows = conn.execute(f"SELECT id, embedding::text FROM {b.info['table']}").fetchall()
        # one numpy parse of all '[x,y,...]' texts joined: the fastest plain text route
        flat = np.fromstring(",".join(r[1][1:-1] for r in rows), sep=",", dtype=np.float32)
        return [r[0] for r in rows], flat.reshape(len(rows), -1)

    try:
        s, (ids, x) = timed(read)
    finally:
        conn.close()
    return o, s, ids, x


# ---- chroma (PersistentClient) ---------------------------------------------------------------


def build_chroma(root: Path, data: Data) -> Built:
    from tests.builders import chroma

    spec = chroma.build(root, data.ids, data.vectors, data.texts)
    return Built(spec, {"path": spec.split(":", 1)[1].split("?", 1)[0]})


def meter_chroma(store: Any, b: Built) -> Meter:
    return MethodMeter(store._col, ["get", "count", "query", "peek"], "collection.")


def base_chroma(b: Built, data: Data) -> Baseline:
    import chromadb
    from chromadb.config import Settings

    def connect() -> tuple[Any, Any]:
        client = chromadb.PersistentClient(
            path=b.info["path"], settings=Settings(anonymized_telemetry=False)
        )
        return client, client.get_collection("docs", embedding_function=None)

    o, (client, col) = timed(connect)

    def read() -> tuple[list[str], np.ndarray]:
        got = col.get(include=["embeddings"])
        return list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)

    try:
        s, (ids, x) = timed(read)
    finally:
        client.close()
    return o, s, ids, x


# ---- qdrant (local mode) ---------------------------------------------------------------------


def build_qdrant(root: Path, data: Data) -> Built:
    from tests.builders import qdrant

    # string ids live in the payload (point ids must be integers or UUIDs)
    spec = qdrant.build(root, data.ids, data.vectors, data.texts, id_mode="payload")
    return Built(spec, {"path": root / "qdrant"})


def build_qdrant_int(root: Path, data: Data) -> Built:
    from tests.builders import qdrant

    # decimal ids used as point ids: fetch goes through client.retrieve
    spec = qdrant.build(root, data.ids, data.vectors, data.texts, id_mode="int")
    return Built(spec, {"path": root / "qdrant", "payload": False})


def meter_qdrant(store: Any, b: Built) -> Meter:
    names = ["retrieve", "scroll", "count", "query_points", "query_batch_points"]
    return MethodMeter(store._client, names, "client.")


def base_qdrant(b: Built, data: Data) -> Baseline:
    from qdrant_client import QdrantClient

    o, client = timed(lambda: QdrantClient(path=str(b.info["path"])))

    payload = b.info.get("payload", True)

    def read() -> tuple[list[str], np.ndarray]:
        points, _ = client.scroll(
            "docs",
            limit=len(data.ids),
            with_vectors=True,
            with_payload=["doc_id"] if payload else False,
        )
        ids = [p.payload["doc_id"] if payload else str(p.id) for p in points]
        return ids, np.asarray([p.vector for p in points], dtype=np.float32)

    try:
        s, (ids, x) = timed(read)
    finally:
        client.close()
    return o, s, ids, x


# ---- milvus (Milvus Lite) ----------------------------------------------------------------------


def build_milvus(root: Path, data: Data) -> Built:
    from milvus_lite.server_manager import server_manager_instance

    from tests.builders import milvus

    spec = milvus.build(root, data.ids, data.vectors, data.texts)
    path = str((root / "milvus.db").absolute())
    # in case a baseline failed half-way: free the in-process Lite server
    return Built(spec, {"path": path}, [lambda: server_manager_instance.release_server(path)])


def meter_milvus(store: Any, b: Built) -> Meter:
    return GrpcStubMeter(store._client._get_connection())


def base_milvus(b: Built, data: Data) -> Baseline:
    from milvus_lite.server_manager import server_manager_instance
    from pymilvus import MilvusClient

    def connect() -> Any:
        client = MilvusClient(b.info["path"])
        if "NotLoad" in str(client.get_load_state("docs").get("state")):
            client.load_collection("docs")
        return client

    o, client = timed(connect)
    # the store filters pymilvus's "no mvccTs on Lite" warning too
    logging.getLogger("pymilvus.client.iterator.query_iterator").setLevel(logging.ERROR)

    def read() -> tuple[list[str], np.ndarray]:
        it = client.query_iterator("docs", batch_size=1000, output_fields=["pk", "vec"])
        ids: list[str] = []
        vecs: list[Any] = []
        try:
            while rows := it.next():
                ids += [r["pk"] for r in rows]
                vecs += [r["vec"] for r in rows]
        finally:
            it.close()
        return ids, np.asarray(vecs, dtype=np.float32)

    try:
        s, (ids, x) = timed(read)
    finally:
        client.close()
        server_manager_instance.release_server(b.info["path"])
    return o, s, ids, x


# ---- lancedb -----------------------------------------------------------------------------------


def build_lancedb(root: Path, data: Data) -> Built:
    from tests.builders import lancedb

    spec = lancedb.build(root, data.ids, data.vectors, data.texts)
    return Built(spec, {"path": str(root / "lancedb")})


def meter_lancedb(store: Any, b: Built) -> Meter:
    names = ["search", "query", "count_rows", "to_arrow", "to_lance", "take_offsets"]
    return MethodMeter(store._tbl, names, "table.")


def base_lancedb(b: Built, data: Data) -> Baseline:
    import lancedb

    o, table = timed(lambda: lancedb.connect(b.info["path"]).open_table("chunks"))

    def read() -> tuple[list[str], np.ndarray]:
        t = table.to_arrow()
        col = t.column("vector").combine_chunks()
        return t.column("id").to_pylist(), col.flatten().to_numpy().reshape(len(col), -1)

    s, (ids, x) = timed(read)
    return o, s, ids, x


# ---- the run -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    build: Callable[[Path, Data], Built]
    meter: Callable[[Any, Built], Meter]
    baseline: Callable[[Built, Data], Baseline]
    baseline_text: str
    numeric_ids: bool = False


def _no_meter(store: Any, b: Built) -> Meter:
    return Meter()


CASES: dict[str, Case] = {
    "faiss": Case(
        build_faiss, _no_meter, base_faiss, "faiss.read_index + reconstruct_n + ids.json"
    ),
    "parquet": Case(
        build_parquet, _no_meter, base_parquet, "pyarrow.parquet.read_table(id, vector)"
    ),
    "upstash": Case(
        build_upstash, meter_upstash, base_upstash, "Index.range pages of 1000 (vectors only)"
    ),
    "pgvector": Case(
        build_pgvector,
        meter_pgvector,
        base_pgvector,
        "SELECT id, embedding::text, all text parsed by one np.fromstring",
    ),
    "chroma": Case(
        build_chroma, meter_chroma, base_chroma, 'collection.get(include=["embeddings"]), 1 call'
    ),
    "qdrant": Case(
        build_qdrant, meter_qdrant, base_qdrant, "client.scroll(limit=n) with vectors, 1 call"
    ),
    "qdrant-int": Case(
        build_qdrant_int,
        meter_qdrant,
        base_qdrant,
        "client.scroll(limit=n) with vectors, 1 call",
        numeric_ids=True,
    ),
    "milvus": Case(
        build_milvus, meter_milvus, base_milvus, "client.query_iterator(batch_size=1000)"
    ),
    "lancedb": Case(build_lancedb, meter_lancedb, base_lancedb, "table.to_arrow()"),
}


def _texts_ok(data: Data, ids: list[str], texts: list[str | None] | None) -> bool:
    if texts is None or len(texts) != len(ids):
        return False
    row = data.row
    return all(i in row and t == data.texts[row[i]] for i, t in zip(ids, texts, strict=True))


def read_with_store(
    backend: str, b: Built, data: Data, op: str, seed: int
) -> tuple[float, float, Counter[str], float]:
    """(open s, fetch-or-iterate s, requests, max error) through a freshly opened store."""
    from indexcheck.stores import StoreOptions, open_store

    gc.collect()
    o, store = timed(lambda: open_store(b.spec, StoreOptions(trust_pickle=True)))
    try:
        meter = CASES[backend].meter(store, b)
        if op == "fetch":
            order = np.random.default_rng(seed).permutation(len(data.ids))
            asked = [data.ids[i] for i in order]
            meter.start()
            try:
                s, got = timed(lambda: store.fetch(asked))
            finally:
                req = meter.stop()
            ok = bool(got.found.all()) and got.ids == asked and _texts_ok(data, asked, got.texts)
            err = max_error(data, got.ids, got.vectors)
        else:
            meter.start()
            try:
                s, blocks = timed(lambda: list(store.iter_vectors()))
            finally:
                req = meter.stop()
            ids = [i for blk in blocks for i in blk.ids]
            texts = [t for blk in blocks for t in (blk.texts or [None] * len(blk.ids))]
            ok = _texts_ok(data, ids, texts)
            vectors = np.concatenate([blk.vectors for blk in blocks]) if blocks else np.zeros(0)
            err = max_error(data, ids, vectors)
    finally:
        store.close()
    return o, s, req, err if ok else float("inf")


def run_backend(backend: str, data: Data, repeat: int, log: Callable[[str], None]) -> Row:
    row = Row(backend, len(data.ids))
    case = CASES[backend]
    with tempfile.TemporaryDirectory(prefix=f"bench-{backend}-") as tmp:
        log(f"[{backend}] building {len(data.ids)} rows")
        row.build_s, built = timed(lambda: case.build(Path(tmp), data))
        log(f"[{backend}] built in {row.build_s:.1f} s (not part of any figure)")
        try:
            fetch_s, iter_s, base_s = [], [], []
            for r in range(repeat):
                o, s, req, err = read_with_store(backend, built, data, "fetch", seed=r)
                row.open_s = o if r == 0 else min(row.open_s, o)
                fetch_s.append(s + (o if backend in IN_PROCESS else 0.0))
                row.fetch_req = row.fetch_req or req
                row.errors.append(err)
                log(f"[{backend}] fetch {s:.2f} s")
                o, s, req, err = read_with_store(backend, built, data, "iter", seed=r)
                iter_s.append(s + (o if backend in IN_PROCESS else 0.0))
                row.iter_req = row.iter_req or req
                row.errors.append(err)
                log(f"[{backend}] iter_vectors {s:.2f} s")
                gc.collect()
                bo, bs, ids, x = case.baseline(built, data)
                row.base_open_s = bo if r == 0 else min(row.base_open_s, bo)
                base_s.append(bs)
                row.errors.append(max_error(data, ids, x))
                del ids, x
                log(f"[{backend}] baseline {bs:.2f} s")
            row.fetch_s, row.iter_s, row.base_s = min(fetch_s), min(iter_s), min(base_s)
        finally:
            for step in built.cleanup:
                step()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=50_000, help="vectors per backend")
    ap.add_argument("--dim", type=int, default=384, help="vector dimension")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated subset")
    ap.add_argument(
        "--n-for",
        action="append",
        default=[],
        metavar="BACKEND=N",
        help="a different n for one backend (e.g. one too slow to build at --n)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="best of R timings")
    args = ap.parse_args()
    chosen = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in chosen if b not in CASES]
    if unknown:
        ap.error(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(BACKENDS)}")
    n_for = {}
    for item in args.n_for:
        name, _, value = item.partition("=")
        if name not in CASES or not value.isdigit():
            ap.error(f"--n-for takes BACKEND=N with a known backend, got '{item}'")
        n_for[name] = int(value)
    sys.path.insert(0, str(ROOT))  # tests.builders and tests.emulators

    def log(msg: str) -> None:
        print(redact(msg), file=sys.stderr, flush=True)

    rows: list[Row] = []
    for backend in chosen:
        data = make_data(n_for.get(backend, args.n), args.dim, CASES[backend].numeric_ids)
        try:
            rows.append(run_backend(backend, data, max(1, args.repeat), log))
        except Exception as exc:  # one backend failing must not hide the others
            text = redact(f"{type(exc).__name__}: {exc}".splitlines()[0])[:150]
            rows.append(Row(backend, len(data.ids), failed=text))
            log(f"[{backend}] failed: {text}")
        del data
        gc.collect()

    load = os.getloadavg()[0]
    print(
        f"store read benchmark: d={args.dim} float32 unit vectors with ~270-char texts, "
        f"string ids (decimal for qdrant-int); best of {max(1, args.repeat)}; "
        f"{os.cpu_count()} cores, load {load:.1f} at the end "
        f"({time.strftime('%Y-%m-%d %H:%M')})"
    )
    print(render(rows, IN_PROCESS))
    print()
    print(
        "fetch = store.fetch(all ids, shuffled) in one call; iter = store.iter_vectors() "
        "(batch 1000); both from an open store,\n"
        "except faiss/parquet whose figures include opening (that is when they read "
        "the file). fetch/base, iter/base = indexcheck time / baseline time.\n"
        "0* = in-process: the file is read once at open, no requests. Requests = round "
        "trips to the engine during the call:"
    )
    for r in rows:
        if r.failed:
            continue
        where = "included" if r.backend in IN_PROCESS else "not in figures"
        print(
            f"  {r.backend:<10} fetch: {describe(r.fetch_req)}; iter: {describe(r.iter_req)}\n"
            f"  {'':<10} open {r.open_s:.2f} s ({where}); baseline: "
            f"{CASES[r.backend].baseline_text} (client open {r.base_open_s:.2f} s, not in "
            f"figures); build {r.build_s:.0f} s"
        )


if __name__ == "__main__":
    main()
