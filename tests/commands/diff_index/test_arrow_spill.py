"""diff-index on ``parquet:`` stores (spilled from Arrow buffers, ``arrow_spill.py``) gives
what the row-by-row spill gives on the same rows: every status, holds_vector_of, cosine
(within 1e-6), count and finding, with renumbered ids, a shift, ragged, null, NaN, inf,
zero, tiny and huge vectors, repeated texts, CRLF and non-ASCII texts, several blocks."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diff_index import DiffIndexSettings, DiffResult, arrow_spill, diff_index
from indexcheck.errors import VectorTypeError
from indexcheck.stores import open_store
from indexcheck.testing import MemoryStore

D = 12
N = 300


def _texts(n: int) -> list[str]:
    out = [f"Section {i}. Fact {i} about subject {i % 9}." for i in range(n)]
    out[3] = "  caf\u00e9 au lait\r\n"  # NFC, CRLF and outer spaces
    out[4] = "e\u0301t\u00e9 \u3000"
    return out


def _pair() -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    rng = np.random.default_rng(4)
    vecs = [v for v in rng.standard_normal((N, D)).astype(np.float32)]
    texts = _texts(N)
    old = {"id": [f"o{i}" for i in range(N)], "text": texts, "vector": [v.tolist() for v in vecs]}
    nv: list[Any] = [v.copy() for v in vecs]
    nt, ni = list(texts), [f"n{i}" for i in range(N)]  # every id renumbered
    for k in range(40, 60):
        nv[k] = vecs[k - 1].copy()  # a shift run
    nv[70] = rng.standard_normal(D).astype(np.float32)  # vector_changed
    nv[71] = np.zeros(D, np.float32)
    nv[72] = np.full(D, np.nan, np.float32)
    nv[73] = np.array([np.inf] + [0.0] * (D - 1), np.float32)
    nv[74] = None
    nv[75] = np.ones(D - 4, np.float32)  # dimension_mismatch
    nv[76] = np.full(D, 1e-30, np.float32)  # squares underflow: not a zero vector
    nv[77] = np.full(D, 1e30, np.float32)  # squares overflow: finite
    nv[78] = np.array([], np.float32)  # an empty list: missing
    nt[80], ni[80] = nt[80] + " (edited)", "o80"  # changed
    nt[90] = texts[95]  # a repeated text
    nv[90] = vecs[95].copy()
    keep = [i for i in range(N) if i not in (100, 101)]  # removed
    new = {
        "id": [ni[i] for i in keep] + ["added-1"],
        "text": [nt[i] for i in keep] + ["A new text."],
        "vector": [None if nv[i] is None else np.asarray(nv[i]).tolist() for i in keep]
        + [rng.standard_normal(D).astype(np.float32).tolist()],
    }
    return old, new


def _parquet(path: Path, rows: dict[str, list[Any]], group: int = 50, ids: Any = None) -> str:
    table = pa.table(
        {
            "id": pa.array(rows["id"]) if ids is None else ids,
            "text": pa.array(rows["text"], pa.string()),
            "vector": pa.array(rows["vector"], pa.list_(pa.float32())),
        }
    )
    pq.write_table(table, path, row_group_size=group)
    return f"parquet:{path}"


def _memory(rows: dict[str, list[Any]]) -> MemoryStore:
    vecs = [None if v is None else np.asarray(v, np.float32) for v in rows["vector"]]
    return MemoryStore([str(i) for i in rows["id"]], vecs, rows["text"])


def _same(a: DiffResult, b: DiffResult) -> None:
    assert (a.compared, a.old_count, a.new_count, a.ok) == (
        b.compared,
        b.old_count,
        b.new_count,
        b.ok,
    )
    assert a.counts == b.counts
    assert a.min_cosine == pytest.approx(b.min_cosine, abs=1e-6)
    assert [(f.kind, f.severity, sorted(f.chunk_ids)) for f in a.findings] == [
        (f.kind, f.severity, sorted(f.chunk_ids)) for f in b.findings
    ]
    key = lambda r: (r.status, str(r.id), str(r.old_id))  # noqa: E731
    ra, rb = sorted(a.chunks, key=key), sorted(b.chunks, key=key)
    assert [(r.id, r.old_id, r.status, r.holds_vector_of) for r in ra] == [
        (r.id, r.old_id, r.status, r.holds_vector_of) for r in rb
    ]
    for x, y in zip(ra, rb, strict=True):
        if x.cosine is None or y.cosine is None:
            assert x.cosine is y.cosine
        else:
            assert x.cosine == pytest.approx(y.cosine, abs=1e-6)


@pytest.fixture
def arrow_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Small blocks, and a record of the stores that fell back to the row spill."""
    monkeypatch.setattr(arrow_spill, "ROWS", 64)
    fell: list[str] = []
    row_spill = arrow_spill.spill_store

    def counted(store: Any, *args: Any, **kwargs: Any) -> Any:
        fell.append(store.spec)
        return row_spill(store, *args, **kwargs)

    monkeypatch.setattr(arrow_spill, "spill_store", counted)
    return fell


def test_parquet_stores_give_the_row_spills_answer(tmp_path: Path, arrow_only: list[str]) -> None:
    old, new = _pair()
    got = diff_index(
        DiffIndexSettings(),
        open_store(_parquet(tmp_path / "old.parquet", old)),
        open_store(_parquet(tmp_path / "new.parquet", new)),
    )
    assert arrow_only == []  # both sides went through the Arrow path
    want = diff_index(DiffIndexSettings(), _memory(old), _memory(new))
    assert len(arrow_only) == 2
    _same(got, want)
    by = {c.id: c for c in got.chunks}
    assert by["n45"].status == "shift" and by["n45"].holds_vector_of == "n44"
    assert {by[f"n{k}"].status for k in (71, 72, 73, 74, 75, 76, 78)} == {
        "zero_vector",
        "non_finite",
        "missing_vector",
        "dimension_mismatch",
        "vector_changed",
    }
    assert got.counts["duplicate_text"] == 1


def test_a_first_vector_of_another_length_spills_again_with_the_same_answer(
    tmp_path: Path, arrow_only: list[str]
) -> None:
    old, new = _pair()
    old["vector"][0] = old["vector"][0][:5]  # the Arrow pass guesses d = 5, the store says 12
    got = diff_index(
        DiffIndexSettings(),
        open_store(_parquet(tmp_path / "old.parquet", old)),
        open_store(_parquet(tmp_path / "new.parquet", new)),
    )
    assert arrow_only == []  # the second pass knows the dimension: Arrow again
    _same(got, diff_index(DiffIndexSettings(), _memory(old), _memory(new)))


def test_integer_ids_pair_as_their_strings(tmp_path: Path, arrow_only: list[str]) -> None:
    old, new = _pair()
    new = {k: v[:N] for k, v in old.items()}
    new["vector"] = [list(v) for v in new["vector"]]
    new["vector"][7] = [x + 1.0 for x in new["vector"][7]]
    ints = pa.array(np.arange(N, dtype=np.int64) + 1000)
    got = diff_index(
        DiffIndexSettings(),
        open_store(_parquet(tmp_path / "old.parquet", old)),
        open_store(_parquet(tmp_path / "new.parquet", new, ids=ints)),
    )
    assert arrow_only == []
    new["id"] = [str(1000 + i) for i in range(N)]
    _same(got, diff_index(DiffIndexSettings(), _memory(old), _memory(new)))
    assert [c.id for c in got.chunks if c.status == "vector_changed"] == ["1007"]


def test_a_null_element_reads_as_nan_in_a_uniform_column_and_is_refused_otherwise(
    tmp_path: Path, arrow_only: list[str]
) -> None:
    old, _ = _pair()
    new = {k: list(v) for k, v in old.items()}
    new["vector"] = [list(v) for v in new["vector"]]
    new["vector"][9][2] = None  # one length, no null vector: the element reads as NaN
    got = diff_index(
        DiffIndexSettings(),
        open_store(_parquet(tmp_path / "old.parquet", old)),
        open_store(_parquet(tmp_path / "new.parquet", new)),
    )
    assert arrow_only == [f"parquet:{tmp_path / 'new.parquet'}"]  # the row spill did it
    nan = {**new, "vector": [[math.nan if x is None else x for x in v] for v in new["vector"]]}
    _same(got, diff_index(DiffIndexSettings(), _memory(old), _memory(nan)))
    assert [c.id for c in got.chunks] == ["o9"] and got.chunks[0].status == "non_finite"
    new["vector"][20] = None  # a null vector too: the store refuses the null element
    with pytest.raises(VectorTypeError, match="row 10"):
        diff_index(
            DiffIndexSettings(),
            open_store(_parquet(tmp_path / "old.parquet", old)),
            open_store(_parquet(tmp_path / "new2.parquet", new)),
        )


def test_to_dict_is_asdict(tmp_path: Path) -> None:
    """The result's JSON form copies its long lists directly; it must equal ``asdict``."""
    from dataclasses import asdict

    old, new = _pair()
    r = diff_index(DiffIndexSettings(), _memory(old), _memory(new))
    assert r.to_dict() == asdict(r)
    assert list(r.to_dict()["findings"][0]) == list(asdict(r)["findings"][0])


def _decoded(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Vector rows decoded per file name, counted from here on."""
    from indexcheck.stores.files.readers import ParquetReader

    rows: dict[str, int] = {}
    groups = ParquetReader._groups

    def counted(self: ParquetReader, size: int, columns: list[str], *a: Any, **k: Any) -> Any:
        for start, rb in groups(self, size, columns, *a, **k):
            if self.vec_col in columns:
                rows[self.path.name] = rows.get(self.path.name, 0) + rb.num_rows
            yield start, rb

    monkeypatch.setattr(ParquetReader, "_groups", counted)
    return rows


def test_a_diff_of_two_parquet_files_decodes_each_vector_column_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening reads the ids only; the diff reads each vector column once in full (the old
    one's first block once more, for its dimension, and the row groups a shift's holders
    sit in), and the dimension it learned is cached with the id map for the next open."""
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    rows = _decoded(monkeypatch)
    old, new = _pair()
    specs = [_parquet(tmp_path / "old.parquet", old), _parquet(tmp_path / "new.parquet", new)]
    stores = [open_store(s) for s in specs]
    assert rows == {} and [s.known_dimension for s in stores] == [None, None]
    got = diff_index(DiffIndexSettings(), *stores)
    assert got.counts["shift"] == 20
    assert rows["new.parquet"] == len(new["id"])
    # the shift's holders (rows 39-58) sit in row groups 0 and 1 (50 rows each), and the
    # old rows before the first moved vector are keyed from there too: less than a second
    # pass over the 300 rows
    assert N <= rows["old.parquet"] <= N + 50 + 100 + 100
    assert [open_store(s).known_dimension for s in specs] == [D, D]


def test_a_clean_diff_of_two_parquet_files_computes_no_lsh_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing moved: no holder search, so no old row is keyed and none read again."""
    from indexcheck.commands.diff_index import band_holders

    keyed: list[int] = []
    real = band_holders.lsh_keys
    monkeypatch.setattr(band_holders, "lsh_keys", lambda u, p: keyed.append(len(u)) or real(u, p))
    rows = _decoded(monkeypatch)
    old, _ = _pair()
    specs = [_parquet(tmp_path / "old.parquet", old), _parquet(tmp_path / "new.parquet", old)]
    got = diff_index(DiffIndexSettings(), *(open_store(s) for s in specs))
    assert got.ok and got.counts == {"unchanged": N}
    assert keyed == []
    assert rows["new.parquet"] == N and N <= rows["old.parquet"] <= N + 50
