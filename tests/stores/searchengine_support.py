"""What the Elasticsearch, OpenSearch and MongoDB store tests share: the corpus, the seed
bug as a LangChain embeddings wrapper, the chunks file, seeded filters and numpy's truth,
unit vectors handed out by text, and the read-only check over an emulator's request log."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.testing import positional_cache_bug

N = 120
EMBEDDER = "py:indexcheck.testing:HASH32"
#: POSTs that read (searches, counts, opening a point in time or a scroll page) and DELETEs
#: that only release a read context the scan opened (a point in time, a scroll)
READ_POSTS = {"_search", "_count", "_pit", "scroll", "point_in_time"}
RELEASES = {"_pit", "scroll", "point_in_time"}


def corpus() -> tuple[list[str], list[dict[str, Any]]]:
    """Texts with two repeats (33 = 4, 70 = 8) and metadata of each kind, some missing."""
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(N)]
    texts[33], texts[70] = texts[4], texts[8]
    metas = [
        {"topic": f"T{i % 4}", "year": 2000 + i % 25, "draft": i % 5 == 0}
        | ({"lang": "en" if i % 3 else "de"} if i % 7 else {})
        for i in range(N)
    ]
    return texts, metas


def buggy(inner: Any) -> Any:
    """The seed bug as a user's embeddings wrapper (a text-hash cache that does not
    advance the position into the fresh embeddings)."""
    from langchain_core.embeddings import Embeddings

    class _Buggy(Embeddings):  # type: ignore[misc]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            fresh = np.asarray(inner.embed_documents(texts), dtype=np.float32)
            return positional_cache_bug(texts, fresh).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return inner.embed_query(text)  # type: ignore[no-any-return]

    return _Buggy()


def chunks_file(path: Path, ids: list[str], texts: list[str]) -> Path:
    rows = zip(ids, texts, strict=True)
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    return path


def writes(requests: list[tuple[str, str, dict[str, str]]]) -> list[tuple[str, str]]:
    """The requests of a log that could change an index (every verb but the reads)."""
    out = []
    for method, path, _ in requests:
        last = path.rstrip("/").rsplit("/", 1)[-1]
        read = method in ("GET", "HEAD") or (method == "POST" and last in READ_POSTS)
        if not (read or (method == "DELETE" and last in RELEASES)):
            out.append((method, path))
    return out


def random_filter(rng: random.Random) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["topic", "year", "yearin", "draft", "lang", "or"])
        if kind == "topic":
            parts.append({"topic": {rng.choice(["$eq", "$ne"]): f"T{rng.randrange(5)}"}})
        elif kind == "year":
            op = rng.choice(["$gt", "$gte", "$lt", "$lte"])
            parts.append({"year": {op: 2000 + rng.randrange(25)}})
        elif kind == "yearin":
            vals = rng.sample(range(2000, 2025), 3)
            parts.append({"year": {rng.choice(["$in", "$nin"]): vals}})
        elif kind == "draft":
            parts.append({"draft": rng.choice([True, False])})
        elif kind == "lang":
            exists = {"lang": {"$exists": rng.random() < 0.5}}
            parts.append(rng.choice([exists, {"lang": {"$ne": "en"}}, {"lang": {"$nin": ["de"]}}]))
        else:
            parts.append({"$or": [{"topic": "T1"}, {"year": {"$lt": 2005}}]})
    return parts[0] if len(parts) == 1 else {"$and": parts}


def truth(engine: str, vecs: np.ndarray, metas: list[dict[str, Any]], ids: list[str],
          q: np.ndarray, flt: dict[str, Any], k: int) -> list[str]:  # fmt: skip
    """numpy's top-k ids by cosine among the rows the filter keeps."""
    mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING[engine])
    x = vecs.astype(np.float64)
    cos = x @ q / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
    order = [i for i in np.argsort(-cos, kind="stable") if mask[i]]
    return [ids[i] for i in order[:k]]


def unit(n: int = 200, d: int = 16, seed: int = 7) -> np.ndarray:
    """``n`` seeded unit-length float32 (n, d) rows."""
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)  # type: ignore[no-any-return]


def fixed_embeddings(texts: list[str], vectors: np.ndarray) -> Any:
    """LangChain embeddings that hand out the given vectors by text (probe-scale's corpus)."""
    from langchain_core.embeddings import Embeddings

    table = dict(zip(texts, vectors.tolist(), strict=True))

    class _Fixed(Embeddings):  # type: ignore[misc]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [table[t] for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return table.get(text) or next(iter(table.values()))

    return _Fixed()
