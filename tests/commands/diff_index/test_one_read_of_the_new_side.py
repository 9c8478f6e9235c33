"""diff-index of two ``parquet:`` stores reads the new side's vectors once, after the join,
without spilling them, and finds a moved vector's holder through the moved rows' sorted LSH
keys, in bounded slices of candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diff_index import DiffIndexSettings, arrow_spill, diff_index, vectors
from indexcheck.stores import open_store
from indexcheck.testing import MemoryStore

D, N = 16, 240


def _write(path: Path, ids: list[str], texts: list[str], vecs: np.ndarray) -> str:
    table = pa.table(
        {
            "id": ids,
            "text": texts,
            "vector": pa.array([v.tolist() for v in vecs], pa.list_(pa.float32())),
        }
    )
    pq.write_table(table, path, row_group_size=70)
    return f"parquet:{path}"


def _memory(ids: list[str], texts: list[str], vecs: np.ndarray) -> MemoryStore:
    return MemoryStore(ids, vecs, texts)


def _pair(tmp_path: Path) -> tuple[tuple[list[str], list[str], np.ndarray], ...]:
    rng = np.random.default_rng(11)
    texts = [f"Paragraph {i} on subject {i % 7}." for i in range(N)]
    old = ([f"o{i}" for i in range(N)], texts, rng.standard_normal((N, D)).astype(np.float32))
    nv = old[2].copy()
    nv[50:150] = old[2][10]  # 100 rows all hold text 10's old vector: one key, many rows
    nv[200] = rng.standard_normal(D)  # a vector that matches no text
    new = ([f"n{i}" for i in range(N)], list(texts), nv)
    return old, new


def test_neither_sides_vectors_are_spilled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_spill, "ROWS", 32)
    old, new = _pair(tmp_path)
    work = tmp_path / "work"
    got = diff_index(
        DiffIndexSettings(workdir=work),
        open_store(_write(tmp_path / "old.parquet", *old)),
        open_store(_write(tmp_path / "new.parquet", *new)),
    )
    spilled = sorted(p.name for p in work.iterdir() if p.is_file())
    assert spilled == ["new.keys.parquet", "old.keys.parquet"]  # keys only, no vectors
    want = diff_index(DiffIndexSettings(), _memory(*old), _memory(*new))
    assert got.counts == want.counts == {"unchanged": 139, "shift": 100, "vector_changed": 1}
    key = lambda r: str(r.id)  # noqa: E731
    assert [(r.id, r.status, r.holds_vector_of) for r in sorted(got.chunks, key=key)] == [
        (r.id, r.status, r.holds_vector_of) for r in sorted(want.chunks, key=key)
    ]
    for a, b in zip(sorted(got.chunks, key=key), sorted(want.chunks, key=key), strict=True):
        assert a.cosine == pytest.approx(b.cosine, abs=1e-6)


def test_many_moved_rows_on_one_lsh_key_are_scored_in_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every moved row shares its keys with old row 10: 100 candidates a table for that one
    old row, scored 7 at a time; each one's holder is text 10 (new id n10)."""
    monkeypatch.setattr(vectors, "PAIRS", 7)
    scored: list[int] = []
    real = vectors._candidates

    def counted(*args):  # type: ignore[no-untyped-def]
        for old, pos in real(*args):
            scored.append(len(old))
            yield old, pos

    monkeypatch.setattr(vectors, "_candidates", counted)
    old, new = _pair(tmp_path)
    got = diff_index(
        DiffIndexSettings(),
        open_store(_write(tmp_path / "old.parquet", *old)),
        open_store(_write(tmp_path / "new.parquet", *new)),
    )
    shifts = {r.id: r.holds_vector_of for r in got.chunks if r.status == "shift"}
    assert shifts == {f"n{k}": "n10" for k in range(50, 150)}
    assert max(scored) == 7 and sum(scored) >= 4 * 100
    assert [r.id for r in got.chunks if r.status == "vector_changed"] == ["n200"]


def test_a_null_element_in_the_new_vectors_compares_again_from_the_row_spill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found only when the new vectors are read after the join: the comparison starts over
    from ``spill_store``'s spill and gives the row reader's answer (the element is NaN)."""
    old, new = _pair(tmp_path)
    rows = [v.tolist() for v in new[2]]
    rows[120] = [None, *rows[120][1:]]
    table = pa.table(
        {"id": new[0], "text": new[1], "vector": pa.array(rows, pa.list_(pa.float32()))}
    )
    pq.write_table(table, tmp_path / "new.parquet", row_group_size=70)
    fell: list[str] = []
    row_spill = arrow_spill.spill_store

    def counted(store, *args, **kwargs):  # type: ignore[no-untyped-def]
        fell.append(store.spec)
        return row_spill(store, *args, **kwargs)

    monkeypatch.setattr(arrow_spill, "spill_store", counted)
    got = diff_index(
        DiffIndexSettings(),
        open_store(_write(tmp_path / "old.parquet", *old)),
        open_store(f"parquet:{tmp_path / 'new.parquet'}"),
    )
    assert fell == [f"parquet:{tmp_path / 'new.parquet'}"]
    nan = new[2].copy()
    nan[120, 0] = np.nan
    want = diff_index(DiffIndexSettings(), _memory(*old), _memory(new[0], new[1], nan))
    assert got.counts == want.counts
    assert {r.id: r.status for r in got.chunks} == {r.id: r.status for r in want.chunks}
    assert {r.id: r.status for r in got.chunks}["n120"] == "non_finite"
