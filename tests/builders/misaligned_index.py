"""Test-only: a man-page corpus and every misalignment bug users meet, replayed by a
LangChain indexer over ``IndexcheckEmbeddings``.

:func:`manpage_corpus` writes man-page sections as a documentation site would chunk them:
distinct NAME/DESCRIPTION/OPTIONS sections, boilerplate sections that come back on most
pages (REPORTING BUGS, SEE ALSO, AUTHOR), repeats of repeats, and long COPYRIGHT sections
whose first 256 words are one licence text (a model that reads 256 tokens gives them one
embedding: :class:`WindowHashEmbedder` simulates it).

:func:`build` runs one bug (:data:`BUGS`) inside a LangChain ``Embeddings`` wrapping
``IndexcheckEmbeddings`` and zips the vectors it returns with the chunks by position, as an
indexer does (``FAISS.from_embeddings``); it returns the store spec and the oracle
``source`` (int64 (n,): the position whose fresh embedding each chunk holds, -1 none).
:func:`build_pgvector` does the same through LangChain's ``PGVector``. The bugs: the
positional cache that skips repeats, a dropped and a duplicated item, results sorted by
length inside each batch, two batches swapped, and a text cache that returns each batch's
hits before its misses (``cache_hits_first``, :data:`BATCH` 32).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indexcheck.testing import HashEmbedder

WINDOW = 256


class WindowHashEmbedder(HashEmbedder):
    """A hash embedder that reads only the first ``WINDOW`` words, as a model reads its
    first 256 tokens: texts equal there get one embedding."""

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        return super()._embed_batch([" ".join(str(t).split()[:WINDOW]) for t in texts])


#: ``--embedder py:tests.builders.misaligned_index:WINDOW32``
WINDOW32 = WindowHashEmbedder(32)

_CMDS = "grep sed awk find xargs tar gzip rsync curl ssh git make cut sort uniq tr".split()
_VERBS = "prints filters copies compresses searches joins splits formats lists renames".split()
_OBJ = "lines files archives records fields streams directories patterns bytes links".split()
_LICENCE = " ".join(
    f"licence clause {i} permits copying modification and distribution under terms"
    for i in range(30)
)  # 330 words: past the window
BOILER = (
    "REPORTING BUGS: report bugs to the project tracker; include the version and a recipe.",
    "SEE ALSO: the full documentation is maintained as a Texinfo manual.",
    "AUTHOR: written by the project contributors; see the AUTHORS file.",
    "EXIT STATUS: 0 on success, 1 if no match was found, 2 on trouble.",
)


@dataclass(frozen=True)
class Corpus:
    ids: list[str]
    texts: list[str]


def manpage_corpus(pages: int = 330, seed: int = 0) -> Corpus:
    """About 8 chunks per page (2,000+ for the default): per page NAME, SYNOPSIS, one to
    three DESCRIPTION/OPTIONS sections, then boilerplate sections (repeated across pages),
    sometimes a long COPYRIGHT section (licence first, then the page's own line)."""
    rng = random.Random(seed)
    ids: list[str] = []
    texts: list[str] = []
    for page in range(pages):
        cmd = f"{rng.choice(_CMDS)}{page}"

        def add(section: str, text: str, cmd: str = cmd) -> None:
            ids.append(f"{cmd}.1#{section}-{len(ids):05d}")
            texts.append(text)

        add("name", f"NAME: {cmd} - {rng.choice(_VERBS)} {rng.choice(_OBJ)} (page {page})")
        add("synopsis", f"SYNOPSIS: {cmd} [OPTION]... PATTERN [FILE]... for page {page}")
        for k in range(rng.randint(1, 3)):
            words = " ".join(rng.choice(_OBJ + _VERBS) for _ in range(rng.randint(20, 60)))
            add("description", f"DESCRIPTION {k} of {cmd}: {words}")
        for b in rng.sample(BOILER, rng.randint(1, 3)):
            add("boiler", b)
        if page % 4 == 0:
            add("copyright", f"COPYRIGHT: {_LICENCE} Page {cmd} is maintained by team {page}.")
    return Corpus(ids, texts)


# --- the bugs, on the list of fresh vectors an embedding call returns -------------------

SKIP_REPEAT = "skip_repeat"
DROPPED = "dropped_item"
DUPLICATED = "duplicated_item"
PERMUTED = "permuted_in_batches"
BATCH_MISPLACED = "batch_misplaced"
CACHE_HITS_FIRST = "cache_hits_first"
BUGS = (SKIP_REPEAT, DROPPED, DUPLICATED, PERMUTED, BATCH_MISPLACED, CACHE_HITS_FIRST)
#: the same cache warmed by an earlier run: its hits are no longer the repeats alone
CACHE_WARM = "cache_hits_first_warm"
#: the batch each bug strikes inside (the indexer's or the client's batches)
BATCH = {PERMUTED: 16, CACHE_HITS_FIRST: 32, CACHE_WARM: 32}


def replay(bug: str, texts: list[str], batch: int, at: int) -> list[int]:
    """The positions whose fresh embedding each returned vector is, in the order the buggy
    client returns them (its length may differ from ``texts``'s). ``at``: where the bug
    strikes (the dropped or duplicated item, the first misplaced batch)."""
    n = len(texts)
    if bug == SKIP_REPEAT:  # the founding bug: a text-hash cache that does not advance
        out, cache, position = [], {}, 0
        for t in texts:
            if t in cache:
                out.append(cache[t])
                continue
            cache[t] = position
            out.append(position)
            position += 1
        return out
    if bug == DROPPED:  # the provider skips one input; the rest come back in order
        return [p for p in range(n) if p != at]
    if bug == DUPLICATED:  # a retried input comes back twice
        return [q for p in range(n) for q in ((p, p) if p == at else (p,))]
    if bug == PERMUTED:  # each batch comes back sorted by length (a provider's choice)
        out = []
        for s in range(0, n, batch):
            out += sorted(range(s, min(n, s + batch)), key=lambda p: (len(texts[p]), -p))
        return out
    if bug == BATCH_MISPLACED:  # two concurrent batches collected as they finished
        starts = list(range(0, n, batch))
        j = at // batch
        starts[j], starts[j + 1] = starts[j + 1], starts[j]
        return [p for s in starts for p in range(s, min(n, s + batch))]
    if bug in (CACHE_HITS_FIRST, CACHE_WARM):  # a text cache returns ``hits + misses``
        out, cache = [], {}
        if bug == CACHE_WARM:  # an earlier run embedded every third distinct text
            firsts = {t: p for p, t in reversed(list(enumerate(texts)))}
            cache = {t: p for t, p in firsts.items() if random.Random(t).random() < 1 / 3}
        for s in range(0, n, batch):
            inside = range(s, min(n, s + batch))
            hits = [cache[texts[p]] for p in inside if texts[p] in cache]
            misses = [p for p in inside if texts[p] not in cache]
            for p in misses:  # stored under their text: the misses are embedded right
                cache.setdefault(texts[p], p)
            out += hits + misses
        return out
    raise ValueError(bug)


class _Buggy:
    """A LangChain ``Embeddings`` over ``IndexcheckEmbeddings`` that replays ``bug``."""

    def __new__(cls, bug: str, batch: int, at: int) -> Any:
        from langchain_core.embeddings import Embeddings

        from indexcheck.integrations.langchain import IndexcheckEmbeddings

        inner = IndexcheckEmbeddings(WINDOW32)

        class Buggy(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                fresh = inner.embed_documents(texts)
                return [fresh[p] for p in replay(bug, list(texts), batch, at)]

            def embed_query(self, text: str) -> list[float]:
                return list(inner.embed_query(text))

        return Buggy()


def build(
    root: Path, corpus: Corpus, bug: str, batch: int = 64, at: int = 700
) -> tuple[str, np.ndarray]:
    """The indexer: vectors from the buggy embeddings zipped with the chunks (``zip``
    stops at the shorter list: a dropped item leaves the last chunk without a vector)."""
    from langchain_community.vectorstores import FAISS

    emb = _Buggy(bug, batch, at)
    vectors = emb.embed_documents(corpus.texts)
    rows = list(zip(corpus.ids, corpus.texts, vectors, strict=False))  # the indexer zips
    store = FAISS.from_embeddings(
        [(t, v) for _, t, v in rows],
        emb,
        metadatas=[{"page": i.split("#")[0]} for i, _, _ in rows],
        ids=[i for i, _, _ in rows],
    )
    folder = root / f"lc-faiss-{bug}"
    store.save_local(str(folder))
    order = replay(bug, corpus.texts, batch, at)
    source = np.full(len(corpus.ids), -1, np.int64)
    m = min(len(order), len(corpus.ids))
    source[:m] = order[:m]
    return f"faiss:{folder}", source


def build_pgvector(
    server: Any, corpus: Corpus, bug: str, batch: int = 64, at: int = 700
) -> tuple[str, np.ndarray]:
    """The same bug through LangChain's ``PGVector`` (langchain-postgres) into its shared
    ``langchain_pg_embedding`` table, collection ``manpages``, in a database of its own on
    the test ``server`` (ids are unique across collections); (spec, oracle)."""
    from langchain_postgres import PGVector

    from tests.pg_support import database

    name = "manpages"
    dsn = database(server, f"kinds_{bug}")
    emb = _Buggy(bug, batch, at)
    url = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
    store = PGVector(emb, connection=url, collection_name=name, pre_delete_collection=True)
    store.add_texts(corpus.texts, ids=corpus.ids)  # one embed_documents call, zipped by position
    order = replay(bug, corpus.texts, batch, at)
    source = np.full(len(corpus.ids), -1, np.int64)
    m = min(len(order), len(corpus.ids))
    source[:m] = order[:m]
    base = dsn.split("?", 1)[0]
    return f"pgvector:{base}?table=langchain_pg_embedding&collection={name}", source


def embedding_identity(texts: list[str]) -> np.ndarray:
    """int64 (n,): the first position whose text reads the same to the window embedder."""
    first: dict[str, int] = {}
    return np.asarray(
        [first.setdefault(" ".join(t.split()[:WINDOW]), p) for p, t in enumerate(texts)], np.int64
    )
