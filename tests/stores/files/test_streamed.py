"""The streamed ``parquet:`` and ``jsonl:`` stores return what the whole-file reader did.

The reference below is the whole-file reading the stores did before they streamed
(``pq.read_table`` then one ``pack_rows`` with the most common length as the store
dimension); every answer of the streamed store (fetch by id in any order, missing ids, the
scan, the exact search, the count and dimension) must equal it bit for bit, with ragged
vectors, null vectors, NaN and several row groups.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.errors import DataFileError, VectorTypeError
from indexcheck.stores import open_store
from indexcheck.stores.base import pack_rows


def _reference(rows: list[dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    vecs = [r["vector"] for r in rows]
    lengths = Counter(len(v) for v in vecs if v is not None)
    d = lengths.most_common(1)[0][0] if lengths else 0
    m, dims = pack_rows(vecs, d)
    return [str(r["id"]) for r in rows], m, dims, d


def _rows(n: int, d: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        v: list[float | None] | None = rng.standard_normal(d).astype(np.float32).tolist()
        if i % 17 == 3:
            v = rng.standard_normal(d - 2).astype(np.float32).tolist()  # ragged
        elif i % 19 == 5:
            v = None  # a null vector
        elif i % 23 == 7:
            v[1] = math.nan  # type: ignore[index]
        out.append({"id": f"c{i}", "vector": v, "text": f"text {i}", "metadata": {"n": i}})
    return out


def _write_parquet(path: Path, rows: list[dict[str, Any]], group: int) -> None:
    table = pa.table(
        {
            "id": pa.array([r["id"] for r in rows], pa.string()),
            "vector": pa.array([r["vector"] for r in rows], pa.list_(pa.float32())),
            "text": pa.array([r["text"] for r in rows], pa.string()),
            "metadata": pa.array([r["metadata"] for r in rows]),
        }
    )
    pq.write_table(table, path, row_group_size=group)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, allow_nan=True) + "\n")


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


@pytest.fixture(params=["parquet", "jsonl"])
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    rows = _rows(300, 12)
    if request.param == "parquet":
        path = tmp_path / "v.parquet"
        _write_parquet(path, rows, group=64)
    else:
        path = tmp_path / "v.jsonl"
        _write_jsonl(path, rows)
    return f"{request.param}:{path}", rows


def test_fetch_by_id_equals_the_whole_file_reader(stored: tuple[str, list[Any]]) -> None:
    spec, rows = stored
    ids, m, dims, d = _reference(rows)
    store = open_store(spec)
    info = store.info()
    assert (info.count, info.dimension) == (len(rows), d)
    order = np.random.default_rng(1).permutation(len(ids))
    want = [ids[p] for p in order] + ["nope", ids[0], "c-missing"]
    got = store.fetch(want)
    assert got.ids == want
    exp_found = np.array([True] * len(order) + [False, True, False])
    _same(got.found, exp_found)
    exp_dims = np.concatenate([dims[order], [0, dims[0], 0]]).astype(np.int32)
    _same(got.dims, exp_dims)
    zero = np.zeros((1, d), np.float32)
    _same(got.vectors, np.concatenate([m[order], zero, m[:1], zero]))
    assert got.texts == [rows[p]["text"] for p in order] + [None, rows[0]["text"], None]


def test_scan_and_search_equal_the_whole_file_reader(stored: tuple[str, list[Any]]) -> None:
    spec, rows = stored
    ids, m, dims, d = _reference(rows)
    store = open_store(spec)
    seen_ids: list[str] = []
    blocks, lens, texts, metas = [], [], [], []
    for b in store.iter_vectors(50):
        assert len(b.ids) <= 50
        seen_ids += b.ids
        blocks.append(b.vectors)
        lens.append(b.dims)
        texts += b.texts or []
        metas += b.metadata or []
    assert seen_ids == ids
    _same(np.concatenate(blocks), m)
    _same(np.concatenate(lens).astype(np.int32), dims)
    assert texts == [r["text"] for r in rows]
    assert metas == [r["metadata"] for r in rows]
    good = np.flatnonzero((dims == d) & np.isfinite(m).all(axis=1))
    q = m[good[:5]]
    D, I = store.exact_query(q, 4)
    assert [I[i, 0] for i in range(5)] == [ids[p] for p in good[:5]]
    assert D[:, 0] == pytest.approx(1.0, abs=1e-5)
    D2, I2 = store.query(q, 4)
    assert (I2 == I).all()


def test_a_repeated_id_is_refused(tmp_path: Path) -> None:
    rows = _rows(40, 4)
    rows[30]["id"] = rows[2]["id"]
    path = tmp_path / "dup.parquet"
    _write_parquet(path, rows, group=16)
    with pytest.raises(DataFileError, match="duplicate ids"):
        open_store(f"parquet:{path}")


def test_a_string_vector_column_is_still_a_vector_type_error(tmp_path: Path) -> None:
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "vector": ["x", "y"]}), path)
    with pytest.raises(VectorTypeError, match="holds string values"):
        open_store(f"parquet:{path}")
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"id": "a", "vector": [1, 2]}\n{"id": "b", "vector": "xy"}\n')
    with pytest.raises(VectorTypeError, match="line 2: 'vector' holds a string"):
        open_store(f"jsonl:{bad}")


def test_the_id_map_is_cached_by_the_file_fingerprint(tmp_path: Path) -> None:
    rows = _rows(100, 6)
    path = tmp_path / "v.parquet"
    _write_parquet(path, rows, group=32)
    first = open_store(f"parquet:{path}")
    assert first.fetch(["c5"]).texts == ["text 5"]
    reopened = open_store(f"parquet:{path}")
    assert reopened.map_from_cache
    rows[5]["text"] = "changed"
    path.unlink()
    _write_parquet(path, rows, group=32)
    changed = open_store(f"parquet:{path}")
    assert not changed.map_from_cache
    assert changed.fetch(["c5"]).texts == ["changed"]


def test_a_faiss_folder_streams_ids_json_and_reads_flat_rows_from_the_file(
    tmp_path: Path,
) -> None:
    from indexcheck.stores.faiss.store import write_faiss_folder

    n, d = 30_000, 8  # ids.json over 1 MB: entries cross the reader's chunks
    rng = np.random.default_rng(3)
    v = rng.standard_normal((n, d)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ids = [f"c{i}" for i in range(n)]
    texts = [f"texte {i} \u00e9\u00fc\u4e2d " + "y" * (i % 40) for i in range(n)]
    write_faiss_folder(tmp_path / "ix", ids, v, texts)
    store = open_store(f"faiss:{tmp_path / 'ix'}")
    assert store._flat is not None  # the rows are read from the file, not held
    order = rng.permutation(n)[:2000]
    want = [ids[p] for p in order] + ["nope"]
    got = store.fetch(want)
    _same(got.vectors, np.concatenate([v[order], np.zeros((1, d), np.float32)]))
    _same(got.found, np.array([True] * len(order) + [False]))
    assert got.texts == [texts[p] for p in order] + [None]
    scanned = list(store.iter_vectors(4096))
    assert [i for b in scanned for i in b.ids] == ids
    assert [t for b in scanned for t in b.texts or []] == texts
    _same(np.concatenate([b.vectors for b in scanned]), v)
    D, I = store.query(v[order[:3]], 2)
    assert list(I[:, 0]) == [ids[p] for p in order[:3]]
    assert D[:, 0] == pytest.approx(1.0, abs=1e-5)
    assert open_store(f"faiss:{tmp_path / 'ix'}")._rows.from_cache


def test_diff_index_batched_text_keys_are_the_per_text_keys() -> None:
    """diff-index hashes a block of stored texts with Arrow kernels; every key must be the
    one content_key gives (NFC, \\n line endings, str.strip's whitespace), bit for bit."""
    from indexcheck.inputs.text_keys import content_key, content_keys

    texts = [
        "a",
        " a\r\n",
        "x\x1c",
        "\x1fy ",
        "",
        "  ",
        "e\u0301",
        "\u00e9",
        " \u3000z\u3000 ",
        "a\r\nb",
        "a\rb",
        "\u2028q",
        "\u00df\r\n",
        "\x85w",
        "\r\n\r\n",
        "\t\x0b\x0cz",
    ]
    h1, h2 = content_keys(texts)
    assert [(int(a), int(b)) for a, b in zip(h1, h2, strict=True)] == [
        content_key(t) for t in texts
    ]
    sliced = pa.array(texts).slice(3, 6)
    k1, k2 = content_keys(sliced)
    assert [(int(a), int(b)) for a, b in zip(k1, k2, strict=True)] == [
        content_key(t) for t in texts[3:9]
    ]


@pytest.mark.parametrize("with_null", [False, True])
def test_a_fixed_size_column_read_from_its_statistics_equals_the_reference(
    tmp_path: Path, with_null: bool
) -> None:
    rows = [r for r in _rows(200, 6) if r["vector"] is None or len(r["vector"]) == 6]
    if not with_null:
        rows = [r for r in rows if r["vector"] is not None]
    path = tmp_path / "fixed.parquet"
    vec = pa.array([r["vector"] for r in rows], pa.list_(pa.float32(), 6))
    pq.write_table(
        pa.table({"id": [r["id"] for r in rows], "vector": vec}), path, row_group_size=50
    )
    ids, m, dims, d = _reference(rows)
    store = open_store(f"parquet:{path}")
    assert store.info().dimension == d == 6
    got = store.fetch(ids[::-1])
    _same(got.vectors, m[::-1])
    _same(got.dims, dims[::-1])
    _same(np.concatenate([b.vectors for b in store.iter_vectors(64)]), m)
