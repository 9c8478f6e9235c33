"""Test-only: realistic corpora with repeats of repeats, and the seed bug replayed exactly.

:func:`repeat_corpus` writes package-description chunks, as a catalogue of sibling
packages would: distinct descriptions, then boilerplate paragraphs ("Need more help?",
a licence line) that come back many times, copies of an earlier description a few chunks
later (inside one embedding batch) or far later (across batches), copies of a copy, and
two repeats in a row. Positions are build order; ``repeat_of`` maps each repeat to its
first copy.

:func:`seed_bug_vectors` replays the post-mortem's indexer batch by batch: every batch of
texts is embedded, and a text-hash cache (kept across batches) hands a repeated text its
first copy's stored vector *without advancing the position into the fresh embeddings*.
Every later chunk then holds an earlier chunk's vector and the lag grows by one at each
repeat. :func:`expected_shift` computes what check-index must report from the replay.

:func:`langchain_faiss` and :func:`llamaindex_simple` build the index through the
frameworks (``FAISS.from_documents``; ``VectorStoreIndex`` with nodes that point to their
source document), over an embedder wrapped with the bug.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

Embed = Callable[[list[str]], np.ndarray]

_NAMES = "astro bolt cedar delta ember fjord glint harbor iris juno kestrel lumen".split()
_WHAT = (
    "a parser for", "bindings to", "a thin client for", "utilities around", "a fast cache for",
    "a command-line tool for", "type stubs for", "an async wrapper over", "a test helper for",
)  # fmt: skip
_TOPIC = (
    "TOML files", "the S3 API", "PostgreSQL logical replication", "image thumbnails",
    "OAuth device flow", "Parquet metadata", "terminal colours", "ISO 8601 dates",
    "rate limiting", "YAML front matter", "SQLite full-text search", "HTTP retries",
)  # fmt: skip
_EXTRA = (
    "It has no dependencies.", "Wheels ship for Linux, macOS and Windows.",
    "The API is stable since 2.0.", "It streams large inputs in constant memory.",
    "Errors carry the line and column.", "Configuration comes from the environment.",
)  # fmt: skip
BOILERPLATE = (
    "Need more help? Open an issue on the tracker or ask on the forum.",
    "This package is released under the MIT licence; see LICENSE for details.",
    "Part of the toolkit family: install the meta-package to get every member.",
    "Security issues: please report them privately to the maintainers.",
)


@dataclass(frozen=True)
class RepeatCorpus:
    ids: list[str]
    texts: list[str]
    repeat_of: dict[int, int]
    doc_of: list[str]  # the package (document) each chunk comes from


def repeat_corpus(n: int = 1200, repeats: int = 120, seed: int = 0, head: int = 40,
                  batch: int = 64) -> RepeatCorpus:  # fmt: skip
    """``n`` chunks, ``repeats`` of them repeating an earlier chunk's text, none in the
    first ``head`` positions. Kinds of repeat (seeded mix): boilerplate (its first copy
    comes early, then it returns many times), a copy of a description within ``batch``
    positions, a copy from far back, a copy of a copy, and two repeats in a row."""
    rng = random.Random(seed)
    slots = sorted(rng.sample(range(head, n), repeats))
    # make some pairs adjacent: two repeats in a row
    for j in range(0, len(slots) - 1, 9):
        if slots[j] + 1 < n and slots[j] + 1 not in slots:
            slots[j + 1] = slots[j] + 1
    slots_set = set(sorted(slots))
    texts: list[str] = []
    doc_of: list[str] = []
    repeat_of: dict[int, int] = {}
    first: dict[str, int] = {}
    boiler_at = sorted(rng.sample(range(head), len(BOILERPLATE)))
    boiler = iter(BOILERPLATE)
    pkg = 0
    for p in range(n):
        if p in slots_set and texts:
            kind = rng.random()
            if kind < 0.35:
                text = rng.choice([b for b in BOILERPLATE if b in first] or [texts[0]])
            elif kind < 0.6:
                text = texts[rng.randrange(max(0, p - batch + 1), p)]  # same batch, mostly
            elif kind < 0.85:
                text = texts[rng.randrange(0, max(1, p - 4 * batch))]  # across batches
            else:
                reps = [q for q in repeat_of]
                text = texts[rng.choice(reps)] if reps else texts[0]  # a copy of a copy
            doc_of.append(f"pkg-{pkg:04d}")
        elif p in boiler_at:
            text = next(boiler)
            doc_of.append(f"pkg-{pkg:04d}")
        else:
            pkg += 1
            name = f"{rng.choice(_NAMES)}-{pkg:04d}"
            text = (
                f"{name} is {rng.choice(_WHAT)} {rng.choice(_TOPIC)}. "
                f"{rng.choice(_EXTRA)} {rng.choice(_EXTRA)} Release {pkg % 7}.{pkg % 11}."
            )
            doc_of.append(f"pkg-{pkg:04d}")
        if text in first:
            repeat_of[p] = first[text]
        else:
            first[text] = p
        texts.append(text)
    ids = [f"chunk-{p:05d}" for p in range(n)]
    return RepeatCorpus(ids, texts, repeat_of, doc_of)


def seed_bug_vectors(texts: list[str], embed: Embed, batch: int = 64) -> np.ndarray:
    """The post-mortem's indexer: float32 (n, d) as it stored them.

    Batch by batch, every text of the batch is embedded and appended to the fresh
    embeddings; a repeated text (its hash already cached, from this batch or an earlier
    one) gets the cached vector and the position into the fresh embeddings is NOT advanced,
    so each later chunk takes the fresh vector ``lag`` places back."""
    fresh: list[np.ndarray] = []
    out: list[np.ndarray] = []
    cache: dict[str, np.ndarray] = {}
    position = 0
    for start in range(0, len(texts), batch):
        part = texts[start : start + batch]
        fresh.extend(np.asarray(embed(part), dtype=np.float32))
        for t in part:
            if t in cache:
                out.append(cache[t])  # the bug: `position` stays where it is
                continue
            vec = fresh[position]
            cache[t] = vec
            out.append(vec)
            position += 1
    return np.stack(out).astype(np.float32)


@dataclass(frozen=True)
class ExpectedShift:
    start: int  # first shifted position
    first_trigger: int  # first repeat (position), before ``start``
    shifted: list[int]  # every position whose stored vector is another text's
    offsets: tuple[int, int]  # the lag range, most negative first
    widening: int  # repeats that widened the lag before the last shifted chunk
    holder_text_of: dict[int, str]  # shifted position -> the text its vector is of


def expected_shift(texts: list[str]) -> ExpectedShift:
    """What the seed bug did, replayed on positions (the oracle the tests compare with)."""
    seen: dict[str, int] = {}
    src: list[int] = []
    lag_of: dict[int, int] = {}
    reps: list[int] = []
    position = 0
    for p, t in enumerate(texts):
        if t in seen:
            src.append(src[seen[t]])
            reps.append(p)
        else:
            seen[t] = p
            src.append(position)
            position += 1
        lag_of[p] = len(reps) - (1 if reps and reps[-1] == p else 0)
    shifted = [p for p in range(len(texts)) if texts[src[p]] != texts[p]]
    lags = [lag_of[p] for p in shifted if p not in set(reps)]
    last = shifted[-1] if shifted else -1
    return ExpectedShift(
        shifted[0] if shifted else -1,
        reps[0] if reps else -1,
        shifted,
        (-max(lags), -min(lags)) if lags else (0, 0),
        sum(1 for r in reps if r < last),
        {p: texts[src[p]] for p in shifted},
    )


def hash_embed(dimension: int = 32) -> Embed:
    from indexcheck.testing import HashEmbedder

    emb = HashEmbedder(dimension)
    return lambda texts: emb.embed(list(texts))


def buggy_langchain_embeddings(embed: Embed, batch: int = 64) -> Any:
    """A LangChain ``Embeddings`` whose ``embed_documents`` runs the seed bug."""
    from langchain_core.embeddings import Embeddings

    class _Buggy(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return seed_bug_vectors(list(texts), embed, batch).tolist()

        def embed_query(self, text: str) -> list[float]:
            return np.asarray(embed([text]), dtype=np.float32)[0].tolist()

    return _Buggy()


def langchain_faiss(root: Path, corpus: RepeatCorpus, embed: Embed, batch: int = 64) -> str:
    """``FAISS.from_documents`` with the chunk ids; returns the indexcheck store spec."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.documents import Document

    docs = [
        Document(page_content=t, metadata={"package": d}, id=i)
        for i, t, d in zip(corpus.ids, corpus.texts, corpus.doc_of, strict=True)
    ]
    store = FAISS.from_documents(docs, buggy_langchain_embeddings(embed, batch), ids=corpus.ids)
    folder = root / "lc-faiss-seed-bug"
    store.save_local(str(folder))
    return f"faiss:{folder}"


def llamaindex_simple(root: Path, corpus: RepeatCorpus, embed: Embed, batch: int = 64) -> str:
    """``VectorStoreIndex`` over ``TextNode``s (no metadata, so the embedded text is the
    text) whose SOURCE relationship names the package; LlamaIndex calls the buggy
    embedding in batches of ``batch``, the cache lives across them."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    state: dict[str, Any] = {"cache": {}, "fresh": [], "position": 0}

    def buggy(texts: list[str]) -> list[list[float]]:
        state["fresh"].extend(np.asarray(embed(list(texts)), dtype=np.float32))
        out = []
        for t in texts:
            if t in state["cache"]:
                out.append(state["cache"][t])
                continue
            vec = state["fresh"][state["position"]]
            state["cache"][t] = vec
            state["position"] += 1
            out.append(vec)
        return [v.tolist() for v in out]

    class _Buggy(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return np.asarray(embed([query]), dtype=np.float32)[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return buggy([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return buggy(list(texts))

    nodes = []
    for i, t, d in zip(corpus.ids, corpus.texts, corpus.doc_of, strict=True):
        node = TextNode(id_=i, text=t)
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=d)
        nodes.append(node)
    index = VectorStoreIndex(
        nodes, embed_model=_Buggy(model_name="seed-bug", embed_batch_size=batch)
    )
    folder = root / "li-simple-seed-bug"
    index.storage_context.persist(str(folder))
    return f"llamaindex:{folder}"


def langchain_chroma(root: Path, corpus: RepeatCorpus, embed: Embed, batch: int = 64) -> str:
    """``langchain_chroma.Chroma.add_texts`` with the chunk ids over the buggy embeddings
    (one ``embed_documents`` call: the cache lives across its batches); Chroma keeps no
    build order, so the chunks file gives it."""
    from langchain_chroma import Chroma

    folder = root / "lc-chroma-seed-bug"
    store = Chroma(
        collection_name="seed_bug",
        embedding_function=buggy_langchain_embeddings(embed, batch),
        persist_directory=str(folder),
    )
    metas = [{"package": d} for d in corpus.doc_of]
    store.add_texts(corpus.texts, metadatas=metas, ids=corpus.ids)
    return f"chroma:{folder}?collection=seed_bug"
