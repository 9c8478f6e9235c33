"""Test-only: LangChain-built indexes on the framework corpus, with LangChain's defaults.

``mode`` is one of ``framework_corpus.MODES``; every builder returns a
:class:`~tests.builders.llamaindex_indexes.Built` whose ``spec`` is the one indexcheck is
meant to open it with.

- ``build_faiss``: ``FAISS.from_texts`` (default EUCLIDEAN_DISTANCE: ``IndexFlatL2``),
  ``save_local(folder, index_name="docs")`` -> ``docs.faiss`` + ``docs.pkl``;
- ``build_chroma``: ``langchain_chroma.Chroma(persist_directory=...)`` (Chroma's default
  space, l2);
- ``build_pgvector``: ``langchain_postgres.PGVector`` (tables ``langchain_pg_collection``
  and ``langchain_pg_embedding``); the corpus goes into collection ``library`` and, in the
  same table, a second collection ``other`` with unrelated rows;
- ``build_pgvectorstore``: ``langchain_postgres.PGVectorStore`` (the newer layout: one
  table per store, columns ``langchain_id`` uuid, ``content``, ``embedding``,
  ``langchain_metadata``); ids are uuid5 of the chunk ids, kept in ``details["uuid_of"]``.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.builders.framework_corpus import framework_corpus, langchain_embeddings
from tests.builders.llamaindex_indexes import Built

PG_NAMESPACE = uuid.UUID("6f1d3d52-0c1f-4b8e-9a53-2b0f7f0c9e11")


def build_faiss(root: Path, mode: str, index_name: str = "docs") -> Built:
    from langchain_community.vectorstores import FAISS

    c = framework_corpus()
    folder = root / f"lc-faiss-{mode}"
    store = FAISS.from_texts(c.texts, langchain_embeddings(mode), metadatas=c.metadata, ids=c.ids)
    store.save_local(str(folder), index_name=index_name)
    spec = f"faiss:{folder}?index_name={index_name}"
    return Built("langchain", "faiss", mode, folder, spec, list(c.ids), {"index_name": index_name})


def build_chroma(root: Path, mode: str) -> Built:
    from langchain_chroma import Chroma

    c = framework_corpus()
    folder = root / f"lc-chroma-{mode}"
    store = Chroma(
        collection_name="langchain",
        embedding_function=langchain_embeddings(mode),
        persist_directory=str(folder),
    )
    store.add_texts(c.texts, metadatas=c.metadata, ids=c.ids)
    spec = f"chroma:{folder}?collection=langchain"
    return Built(
        "langchain", "chroma", mode, folder, spec, list(c.ids), {"collection": "langchain"}
    )


def _sqlalchemy_url(dsn: str) -> str:
    return dsn.replace("postgresql://", "postgresql+psycopg://", 1)


def _other_texts() -> list[str]:
    return [f"Unrelated note {i}: the ferry timetable changes in spring." for i in range(12)]


def build_pgvector(
    dsn: str, mode: str, collection: str | None = None, uuid_ids: bool = False
) -> Built:
    """Rows of collection ``library-<mode>`` plus ``other-<mode>`` in the shared tables.

    ``uuid_ids``: let LangChain pick the ids (uuid4, its default when none are given);
    the chunk id is then kept in the metadata as ``chunk``."""
    from langchain_postgres import PGVector

    c = framework_corpus()
    name = collection or f"library-{mode}{'-uuid' if uuid_ids else ''}"
    url = _sqlalchemy_url(dsn)
    store = PGVector(langchain_embeddings(mode), connection=url, collection_name=name)
    if uuid_ids:
        metas = [{**m, "chunk": cid} for m, cid in zip(c.metadata, c.ids, strict=True)]
        store.add_texts(c.texts, metadatas=metas)
    else:
        store.add_texts(c.texts, metadatas=c.metadata, ids=c.ids)
    other = PGVector(langchain_embeddings("correct"), connection=url,
                     collection_name=f"other-{mode}")  # fmt: skip
    others = _other_texts()
    other.add_texts(others, ids=[f"{name}-other-{i}" for i in range(len(others))])
    base = dsn.split("?", 1)[0]
    spec = f"pgvector:{base}?table=langchain_pg_embedding&collection={name}"
    return Built("langchain", "pgvector", mode, None, spec, list(c.ids),
                 {"collection": name, "other_collection": f"other-{mode}", "dsn": dsn,
                  "uuid_ids": uuid_ids})  # fmt: skip


def build_pgvectorstore(dsn: str, mode: str) -> Built:
    from langchain_postgres import PGEngine, PGVectorStore

    c = framework_corpus()
    table = f"lc_store_{mode}"
    engine = PGEngine.from_connection_string(url=_sqlalchemy_url(dsn))
    engine.init_vectorstore_table(table_name=table, vector_size=384)
    store = PGVectorStore.create_sync(
        engine=engine, table_name=table, embedding_service=langchain_embeddings(mode)
    )
    uuid_of = {cid: str(uuid.uuid5(PG_NAMESPACE, cid)) for cid in c.ids}
    store.add_texts(c.texts, metadatas=c.metadata, ids=[uuid_of[i] for i in c.ids])
    base = dsn.split("?", 1)[0]
    spec = f"pgvector:{base}?table={table}&id=langchain_id&text=content"
    return Built("langchain", "pgvectorstore", mode, None, spec, list(c.ids),
                 {"table": table, "uuid_of": uuid_of, "dsn": dsn})  # fmt: skip
