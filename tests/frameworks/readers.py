"""Test-side reading of the framework-built indexes, and the per-chunk comparison.

Until the stores open these layouts (second round), the tests read them here: LangChain
FAISS through indexcheck's allow-list unpickler (``read_langchain_pickle``) and the faiss
file, Chroma through its client, PostgreSQL with plain SELECTs, LlamaIndex folders through
``indexcheck.inputs.formats.llamaindex``. ``compare`` then does what check-index does per chunk:
cosine with the fresh embedding of the text, and which chunk's text a low vector holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from indexcheck.vectors import normalize_rows
from tests.builders.framework_corpus import embed_correct, framework_corpus
from tests.builders.llamaindex_indexes import Built, read_chroma_rows


@dataclass
class Rows:
    """Stored rows in corpus (build) order: ids, float32 (n, d) vectors, stored texts,
    and the texts the framework embedded when the layout keeps them (else None)."""

    ids: list[str]
    vectors: np.ndarray
    texts: list[str]
    embedded: list[str] | None = None


def _in_corpus_order(ids: list[str], vecs: Any, texts: list[str], want: list[str]) -> Rows:
    at = {cid: k for k, cid in enumerate(ids)}
    idx = [at[cid] for cid in want]
    arr = np.asarray(vecs, dtype=np.float32)[idx]
    return Rows(list(want), arr, [texts[k] for k in idx])


def read_rows(built: Built) -> Rows:
    if built.framework == "llamaindex":
        return _read_llamaindex(built)
    if built.layout == "faiss":
        import faiss

        from indexcheck.stores.faiss.store import read_langchain_pickle

        name = built.details["index_name"]
        ids, texts = read_langchain_pickle(built.path / f"{name}.pkl")
        index = faiss.read_index(str(built.path / f"{name}.faiss"))
        vecs = index.reconstruct_n(0, index.ntotal)
        return _in_corpus_order(ids, vecs, [t or "" for t in texts], built.ids)
    if built.layout == "chroma":
        import chromadb

        col = chromadb.PersistentClient(path=str(built.path)).get_collection(
            built.details["collection"]
        )
        got = col.get(include=["embeddings", "documents"])
        return _in_corpus_order(got["ids"], got["embeddings"], got["documents"], built.ids)
    return _read_pg(built)


def _read_llamaindex(built: Built) -> Rows:
    from indexcheck.inputs.formats.llamaindex import embedded_text_from_row, read_persist_dir

    if built.layout == "pgvector":
        import psycopg

        table = built.details["table"]
        with psycopg.connect(built.details["dsn"]) as conn:
            got = conn.execute(
                f'SELECT node_id, embedding::text, text, metadata_ FROM "{table}" ORDER BY id'
            ).fetchall()
        vecs = [_parse_vector(r[1]) for r in got]
        rows = _in_corpus_order([r[0] for r in got], vecs, [r[2] for r in got], built.ids)
        meta = {r[0]: r[3] for r in got}
        pairs = zip(rows.ids, rows.texts, strict=True)
        rows.embedded = [embedded_text_from_row(t, meta[i]) for i, t in pairs]
        return rows
    if built.layout == "chroma":
        got = read_chroma_rows(built)
        embedded = [
            embedded_text_from_row(t, m)
            for t, m in zip(got["documents"], got["metadatas"], strict=True)
        ]
        arr = np.asarray(got["embeddings"], dtype=np.float32)
        return Rows(got["ids"], arr, got["documents"], embedded)
    index = read_persist_dir(built.path)
    rows = _in_corpus_order(index.ids, index.vectors, index.texts, built.ids)
    at = {cid: k for k, cid in enumerate(index.ids)}
    rows.embedded = [index.embedded_texts[at[cid]] for cid in built.ids]
    return rows


def _parse_vector(text: str) -> list[float]:
    return [float(x) for x in text.strip("[]").split(",")]


def _read_pg(built: Built) -> Rows:
    import psycopg

    with psycopg.connect(built.details["dsn"]) as conn:
        if built.layout == "pgvector":
            cur = conn.execute(
                "SELECT e.id, e.embedding::text, e.document FROM langchain_pg_embedding e "
                "JOIN langchain_pg_collection c ON e.collection_id = c.uuid WHERE c.name = %s",
                (built.details["collection"],),
            )
            rows = cur.fetchall()
            ids = [r[0] for r in rows]
        else:
            table = built.details["table"]
            cur = conn.execute(
                f'SELECT langchain_id::text, embedding::text, content FROM "{table}"'
            )
            rows = cur.fetchall()
            chunk_of = {u: c for c, u in built.details["uuid_of"].items()}
            ids = [chunk_of[r[0]] for r in rows]
    vecs = [_parse_vector(r[1]) for r in rows]
    return _in_corpus_order(ids, vecs, [r[2] for r in rows], built.ids)


@dataclass
class Compared:
    """Per chunk (corpus order): cosine with its own fresh embedding, the id whose text's
    fresh embedding the stored vector is (None when it is its own or nobody's), and
    whether its own text is the nearest fresh embedding."""

    cosines: np.ndarray
    holds: dict[str, str]
    own_nearest: np.ndarray


def compare(rows: Rows, texts: list[str], min_cosine: float = 0.999) -> Compared:
    from indexcheck.commands.check_index.text_differs import own_is_nearest

    stored = normalize_rows(rows.vectors)
    fresh = embed_correct(texts)
    cos = (stored * fresh).sum(axis=1)
    sims = stored @ fresh.T
    holds: dict[str, str] = {}
    for i, cid in enumerate(rows.ids):
        if cos[i] >= min_cosine:
            continue
        match = np.flatnonzero(sims[i] >= min_cosine)
        match = match[match != i]
        if match.size:
            holds[cid] = rows.ids[int(match[0])]
    own = own_is_nearest(stored, fresh, np.arange(len(rows.ids)))
    return Compared(cos, holds, own)


def repeated_groups() -> list[list[str]]:
    c = framework_corpus()
    groups: dict[str, list[str]] = {}
    for cid, t in zip(c.ids, c.texts, strict=True):
        groups.setdefault(t, []).append(cid)
    return [g for g in groups.values() if len(g) > 1]
