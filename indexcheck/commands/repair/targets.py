"""The repaired copy written: a NEW folder holding ``vectors.parquet`` (``id``, ``vector``,
``text``, ``metadata`` as a JSON string, ``text_hash``) and, for a FAISS source, a new
FAISS index in the source's layout (LangChain's ``index.faiss`` + ``index.pkl``, or
indexcheck's ``index.faiss`` + ``ids.json``). Everything is written in a hidden folder
beside the target, each file fsynced, then renamed into place in one rename: a killed
repair leaves no target, only a hidden ``.NAME.tmp-*`` folder."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError, OutputError
from ...output.files import disk_full, publish, staging
from ...stores.faiss.store import write_faiss_folder
from .rows import SourceRows

PARQUET = "vectors.parquet"
#: rows written to the Parquet file at once
WRITE_ROWS = 65536


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet(path: Path, rows: SourceRows, vectors: np.ndarray, hashes: list[str]) -> None:
    """``vectors`` float32 (n, d) beside ``rows``'s ids, texts and metadata, in row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = vectors.shape[1]
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("vector", pa.list_(pa.float32(), d)),
            ("text", pa.string()),
            ("metadata", pa.string()),
            ("text_hash", pa.string()),
        ]
    )
    with pq.ParquetWriter(path, schema) as w:
        for lo in range(0, len(rows), WRITE_ROWS):
            hi = min(len(rows), lo + WRITE_ROWS)
            flat = pa.array(np.ascontiguousarray(vectors[lo:hi]).reshape(-1), pa.float32())
            cols = [
                pa.array(rows.ids[lo:hi], pa.string()),
                pa.FixedSizeListArray.from_arrays(flat, d),
                pa.array(rows.texts[lo:hi], pa.string()),
                pa.array(
                    [json.dumps(m, ensure_ascii=False, default=str) for m in rows.metadata[lo:hi]]
                ),
                pa.array(hashes[lo:hi], pa.string()),
            ]
            w.write_table(pa.Table.from_arrays(cols, schema=schema))


def write_langchain_faiss(folder: Path, rows: SourceRows, vectors: np.ndarray, metric: str) -> None:
    """LangChain's ``save_local`` layout: ``index.faiss`` (flat, the source's metric) and
    ``index.pkl`` = pickle of (InMemoryDocstore of Documents, {row: id})."""
    import faiss

    try:
        from langchain_community.docstore.in_memory import InMemoryDocstore
        from langchain_core.documents import Document
    except ImportError:
        raise InputError(
            "writing a LangChain FAISS folder needs langchain-community, which built the "
            "source; run: pip install langchain-community"
        ) from None
    xb = np.ascontiguousarray(vectors, np.float32)
    index = faiss.IndexFlatIP(xb.shape[1]) if metric == "ip" else faiss.IndexFlatL2(xb.shape[1])
    index.add(xb)
    faiss.write_index(index, str(folder / "index.faiss"))
    docs = {
        cid: Document(page_content=t, metadata=m, id=cid)
        for cid, t, m in zip(rows.ids, rows.texts, rows.metadata, strict=True)
    }
    payload = (InMemoryDocstore(docs), dict(enumerate(rows.ids)))
    with (folder / "index.pkl").open("wb") as f:
        pickle.dump(payload, f)


def write_target(
    out: Path,
    rows: SourceRows,
    vectors: np.ndarray,
    hashes: list[str],
    faiss: dict[str, Any] | None,
) -> list[Path]:
    """Everything written into a staging folder, fsynced, and renamed to ``out`` (which
    must not exist); ``faiss``: ``{"layout": "langchain" | "indexcheck", "metric": ...}``
    for a FAISS source, else None. Returns the files, as they are named after the rename."""
    try:
        with staging(out) as tmp:
            work = tmp / out.name
            work.mkdir()
            write_parquet(work / PARQUET, rows, vectors, hashes)
            if faiss is not None and faiss["layout"] == "langchain":
                write_langchain_faiss(work, rows, vectors, faiss["metric"])
            elif faiss is not None:
                write_faiss_folder(work, rows.ids, vectors, rows.texts, faiss["metric"])
            names = sorted(p.name for p in work.iterdir())
            for name in names:
                _fsync(work / name)
            _fsync(work)
            publish(work, out)
            _fsync(out.parent if str(out.parent) else Path("."))
    except OSError as exc:
        if disk_full(exc):
            raise OutputError(
                f"the disk filled while writing {out}; nothing was left there, free space "
                "and run again (with --cache the embeddings are not paid twice)"
            ) from None
        raise OutputError(f"could not write {out}: {exc.strerror or exc}") from None
    return [out / n for n in names]


__all__ = ["PARQUET", "write_target"]
