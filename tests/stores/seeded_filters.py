"""Rows and seeded random portable filters for the stores whose engines (or emulators)
evaluate their own filter language (Pinecone, turbopuffer, Weaviate): every operator,
fields some rows lack, nested ``$or``; the tests compare each engine's rows and top-k with
numpy's."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

N, D, K = 200, 8, 5


def seeded_rows() -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    """ids, float32 (N, D) vectors and metadata (``lang`` missing on every 7th row,
    ``topic`` on every 4th)."""
    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((N, D)).astype(np.float32)
    return [f"r{i:03d}" for i in range(N)], vecs, filter_metadata(N)


def filter_metadata(n: int) -> list[dict[str, Any]]:
    """Metadata for the filter suites: numbers, booleans, and ``lang``/``topic`` that some
    rows lack (where engines differ on ``$ne``/``$nin``)."""
    metas: list[dict[str, Any]] = []
    for i in range(n):
        m: dict[str, Any] = {"year": 2000 + i % 25, "draft": i % 5 == 0, "score": i / 10}
        if i % 7:
            m["lang"] = "en" if i % 3 else "de"
        if i % 4:
            m["topic"] = f"t{i % 6}"
        metas.append(m)
    return metas


def random_filter(rng: random.Random) -> dict[str, Any]:
    """One seeded random portable filter over :func:`filter_metadata`'s fields."""
    parts: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["topic", "year", "yearin", "draft", "lang", "score", "or"])
        if kind == "topic":
            parts.append({"topic": {rng.choice(["$eq", "$ne"]): f"t{rng.randrange(7)}"}})
        elif kind == "year":
            parts.append(
                {"year": {rng.choice(["$gt", "$gte", "$lt", "$lte"]): 2000 + rng.randrange(25)}}
            )
        elif kind == "yearin":
            parts.append({"year": {rng.choice(["$in", "$nin"]): rng.sample(range(2000, 2025), 4)}})
        elif kind == "draft":
            parts.append({"draft": rng.choice([True, False])})
        elif kind == "lang":
            exists = {"lang": {"$exists": rng.random() < 0.5}}
            parts.append(rng.choice([exists, {"lang": {"$ne": "en"}}, {"lang": {"$nin": ["de"]}}]))
        elif kind == "score":
            parts.append({"score": {rng.choice(["$gt", "$lte"]): rng.randrange(200) / 10 + 0.05}})
        else:
            parts.append({"$or": [{"topic": "t1"}, {"year": {"$lt": 2005}}]})
    return parts[0] if len(parts) == 1 else {"$and": parts}
