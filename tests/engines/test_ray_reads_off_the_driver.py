"""What travels back to the driver under --engine ray, counted: with a Parquet pair (read,
embedded and compared on the workers) no block of fresh vectors ever comes back to the
driver, neither for the low chunks' window search (windows that cross a worker's block
are searched where the blocks are) nor for the sample that tells another model from
another text (each block sends back its best cosines, and the sampled chunks' own fresh
vectors are picked where they are: at most the sample's rows travel). The rows and
findings are the local engine's. A store the workers cannot split (FAISS) is read here
and its blocks of texts are sent to the workers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.engines import ray_hash_embedder
from tests.engines.runs import check_all, same_result

pytestmark = pytest.mark.slow

N = 1200
EMBEDDER = "py:tests.engines.ray_hash_embedder:embed"


def _pair(folder: Path, vec: np.ndarray, texts: list[str]) -> list[str]:
    ids = [f"c{i}" for i in range(N)]
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), vec.shape[1])
    pq.write_table(pa.table({"id": ids, "vector": arr}), folder / "vectors.parquet")
    pq.write_table(pa.table({"id": ids, "text": texts}), folder / "chunks.parquet")
    return ["--store", f"parquet:{folder / 'vectors.parquet'}", "--chunks",
            str(folder / "chunks.parquet"), "--embedder", EMBEDDER]  # fmt: skip


def _texts() -> list[str]:
    return [f"chunk {i} about topic {i % 17}" for i in range(N)]


def _travels(monkeypatch) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    """What comes back to the driver: whole blocks of fresh vectors, and rows picked."""
    from indexcheck.engines.ray.blocks import RemoteFresh

    seen: dict[str, list[int]] = {"blocks": [], "rows": []}
    block, take = RemoteFresh._block, RemoteFresh.take

    def pulled(self, j):  # type: ignore[no-untyped-def]
        seen["blocks"].append(j)
        return block(self, j)

    def picked(self, positions):  # type: ignore[no-untyped-def]
        seen["rows"].append(len(positions))
        return take(self, positions)

    monkeypatch.setattr(RemoteFresh, "_block", pulled)
    monkeypatch.setattr(RemoteFresh, "take", picked)
    return seen


def test_shifts_across_blocks_and_another_model_are_found_with_no_block_coming_back(
    nodes, tmp_path, monkeypatch
) -> None:
    texts = _texts()
    fresh = ray_hash_embedder.embed(texts)
    ray_hash_embedder.calls = 0
    # most vectors from another model: the sample that tells a model from a text runs
    vec = np.random.default_rng(7).standard_normal(fresh.shape).astype(np.float32)
    vec[390:415] = fresh[393:418]  # across the edge at 400: matches in the next block
    vec[600:610] = fresh[597:607]  # across the edge at 600: matches in the block before
    vec[700:710] = fresh[701:711]  # inside a block
    args = _pair(tmp_path, vec, texts)
    local = check_all(args, tmp_path, "local", block=200)
    assert local[0] == 1 and local[2]["counts"]["shift"] == 45
    assert "model_mismatch" in {f["kind"] for f in local[2]["findings"]}
    seen = _travels(monkeypatch)
    same_result(local, check_all(args, tmp_path, "ray", nodes.address, block=200))
    assert seen["blocks"] == []
    assert 0 < sum(seen["rows"]) <= 2000  # the sample's own fresh vectors, and no more


def test_a_store_the_workers_cannot_split_is_read_here_and_its_texts_sent(
    nodes, tmp_path, monkeypatch
) -> None:
    from indexcheck.engines import RayEngine
    from indexcheck.stores.faiss.store import write_faiss_folder

    texts = _texts()
    vec = ray_hash_embedder.embed(texts)
    ray_hash_embedder.calls = 0
    vec[300:310] = vec[302:312].copy()
    ids = [f"c{i}" for i in range(N)]
    write_faiss_folder(tmp_path / "faiss", ids, vec, texts)
    args = ["--store", f"faiss:{tmp_path / 'faiss'}", "--embedder", EMBEDDER]
    local = check_all(args, tmp_path, "local", block=200)
    sent: list[int] = []
    real = RayEngine.embed_blocks

    def spy(self, embedder, blocks):  # type: ignore[no-untyped-def]
        def counted():  # type: ignore[no-untyped-def]
            for texts in blocks:
                sent.append(len(texts))
                yield texts

        return real(self, embedder, counted())

    monkeypatch.setattr(RayEngine, "embed_blocks", spy)
    same_result(local, check_all(args, tmp_path, "ray", nodes.address, block=200))
    assert sum(sent) == N  # every text read here went out once, in blocks
