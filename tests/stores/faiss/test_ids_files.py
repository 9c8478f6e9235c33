"""A ``faiss:`` folder may list its ids in ``ids.parquet`` or ``ids.jsonl`` instead of
``ids.json``: streamed like ``ids.json`` (id map cached on disk, nothing held), with the
same answers (fetch, scan, search), the same refusals, and diff-index through them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diff_index import DiffIndexSettings, diff_index
from indexcheck.errors import DataFileError
from indexcheck.stores import open_store
from indexcheck.stores.faiss.store import write_faiss_folder

N, D = 3000, 8


def _data() -> tuple[list[str], list[str], np.ndarray]:
    rng = np.random.default_rng(2)
    v = rng.standard_normal((N, D)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ids = [f"c{i}" for i in range(N)]
    texts = [f"texte {i} \u00e9\u4e2d " + "y" * (i % 30) for i in range(N)]
    return ids, texts, v


def _folder(tmp_path: Path, kind: str, with_text: bool = True) -> tuple[Path, list[str]]:
    """A faiss folder whose ids.json is replaced by ids.<kind>."""
    ids, texts, v = _data()
    folder = tmp_path / f"ix-{kind}"
    write_faiss_folder(folder, ids, v, texts if with_text else None)
    (folder / "ids.json").unlink()
    if kind == "parquet":
        cols = {"id": ids, **({"text": texts} if with_text else {})}
        pq.write_table(pa.table(cols), folder / "ids.parquet", row_group_size=700)
    else:
        with (folder / "ids.jsonl").open("w", encoding="utf-8") as f:
            for i, t in zip(ids, texts, strict=True):
                row = {"id": i, "text": t} if with_text else i
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder, ids


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_ids_file_answers_as_ids_json(tmp_path: Path, kind: str) -> None:
    ids, texts, v = _data()
    write_faiss_folder(tmp_path / "ref", ids, v, texts)
    ref = open_store(f"faiss:{tmp_path / 'ref'}")
    folder, _ = _folder(tmp_path, kind)
    store = open_store(f"faiss:{folder}")
    assert (store.info().count, store.info().dimension) == (N, D)
    order = np.random.default_rng(5).permutation(N)[:500]
    want = [ids[p] for p in order] + ["nope", ids[0]]
    got, exp = store.fetch(want), ref.fetch(want)
    assert np.array_equal(got.vectors, exp.vectors) and np.array_equal(got.found, exp.found)
    assert got.texts == exp.texts
    scanned = list(store.iter_vectors(1024))
    assert [i for b in scanned for i in b.ids] == ids
    assert [t for b in scanned for t in b.texts or []] == texts
    _, i_got = store.query(v[:3], 2)
    _, i_ref = ref.query(v[:3], 2)
    assert (i_got == i_ref).all()
    assert open_store(f"faiss:{folder}")._rows.from_cache


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_ids_file_without_texts_gives_ids_only(tmp_path: Path, kind: str) -> None:
    folder, ids = _folder(tmp_path, kind, with_text=False)
    store = open_store(f"faiss:{folder}")
    got = store.fetch([ids[7], ids[3]])
    assert got.found.all() and got.texts is None


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_a_short_ids_file_is_refused(tmp_path: Path, kind: str) -> None:
    folder, ids = _folder(tmp_path, kind)
    path = folder / f"ids.{kind}"
    if kind == "parquet":
        pq.write_table(pa.table({"id": ids[:-1]}), path)
    else:
        path.write_text("\n".join(json.dumps(i) for i in ids[:-1]) + "\n")
    with pytest.raises(DataFileError, match="must match row for row"):
        open_store(f"faiss:{folder}")


def test_a_null_id_and_a_mixed_jsonl_are_refused(tmp_path: Path) -> None:
    folder, ids = _folder(tmp_path, "parquet")
    pq.write_table(pa.table({"id": [*ids[:5], None, *ids[6:]]}), folder / "ids.parquet")
    with pytest.raises(DataFileError, match="row 6 has no id"):
        open_store(f"faiss:{folder}")
    folder, ids = _folder(tmp_path, "jsonl")
    lines = [json.dumps(i) for i in ids]
    lines[9] = json.dumps({"id": ids[9], "text": "x"})
    (folder / "ids.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError, match="line 10 mixes kinds"):
        open_store(f"faiss:{folder}")


def test_diff_index_reads_a_faiss_folder_with_ids_parquet(tmp_path: Path) -> None:
    ids, texts, v = _data()
    write_faiss_folder(tmp_path / "old", ids, v, texts)
    moved = v.copy()
    moved[10] = -moved[10]
    folder = tmp_path / "new"
    write_faiss_folder(folder, ids, moved, texts)
    (folder / "ids.json").unlink()
    pq.write_table(pa.table({"id": ids, "text": texts}), folder / "ids.parquet")
    r = diff_index(
        DiffIndexSettings(), open_store(f"faiss:{tmp_path / 'old'}"), open_store(f"faiss:{folder}")
    )
    assert r.counts["unchanged"] == N - 1
    assert [(c.id, c.status) for c in r.chunks] == [(ids[10], "vector_changed")]
