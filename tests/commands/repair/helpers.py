"""Test-only: what the repair tests share: an embedder that records what it is sent, the
replayed seed bug's oracle, file hashes, and the target read back."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from indexcheck.testing import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """A hash embedder that records every text sent to it (``sent``, in order)."""

    def __init__(self, dimension: int = 32, **kwargs: Any) -> None:
        super().__init__(dimension, **kwargs)
        self.sent: list[str] = []

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        self.sent += [str(t) for t in texts]
        return super()._embed_batch(texts)


def held_source(texts: list[str]) -> list[int]:
    """The seed bug replayed (as tests/builders/repeat_corpus.seed_bug_vectors does it):
    the position whose fresh embedding each position's stored vector is."""
    seen: dict[str, int] = {}
    src: list[int] = []
    position = 0
    for p, t in enumerate(texts):
        if t in seen:
            src.append(src[seen[t]])
        else:
            seen[t] = p
            src.append(position)
            position += 1
    return src


def held_nowhere(texts: list[str]) -> list[int]:
    """The positions whose text's vector no stored row holds after the seed bug."""
    held = {texts[s] for s in held_source(texts)}
    return [p for p, t in enumerate(texts) if t not in held]


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (or of ``root`` itself), by relative path."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return {
        str(p.relative_to(root.parent)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files
    }


def target_rows(out: Path) -> dict[str, Any]:
    """The repaired copy's Parquet file: ids, float32 (n, d) vectors, texts, metadata."""
    import json

    import pyarrow.parquet as pq

    t = pq.read_table(out / "vectors.parquet")
    return {
        "ids": t.column("id").to_pylist(),
        "vectors": np.stack(t.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32),
        "texts": t.column("text").to_pylist(),
        "metadata": [json.loads(m) for m in t.column("metadata").to_pylist()],
        "text_hash": t.column("text_hash").to_pylist(),
    }


def write_chunks(path: Path, ids: list[str], texts: list[str]) -> Path:
    """A JSONL chunks file: id, text."""
    import json

    with path.open("w", encoding="utf-8") as f:
        for i, t in zip(ids, texts, strict=True):
            f.write(json.dumps({"id": i, "text": t}) + "\n")
    return path


def api_sections(result: object) -> list[Any]:
    """The result's sections, its renderer registered as the face registers them."""
    import indexcheck.commands.reports  # noqa: F401
    from indexcheck.output.registry import sections

    return sections(result)
