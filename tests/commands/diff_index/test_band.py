"""diff-index of two ``parquet:`` stores compares both vector streams in a window of old
blocks (commands/diff_index/band.py): the pairs the window cannot serve (a reordered index)
are compared in a second, ordered pass; a holder anywhere in the old index is found from
the old rows' LSH keys; a wrong guess of the old dimension or a null element goes back to
the spill. Every answer is the row-by-row spill's answer on the same rows."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diff_index import (
    DiffIndexSettings,
    DiffResult,
    arrow_spill,
    band,
    diff_index,
)
from indexcheck.stores import open_store
from indexcheck.testing import MemoryStore

D, N = 8, 600


def _write(path: Path, ids: list[str], texts: list[str], vecs: list[Any]) -> str:
    table = pa.table(
        {
            "id": ids,
            "text": texts,
            "vector": pa.array(
                [None if v is None else np.asarray(v).tolist() for v in vecs],
                pa.list_(pa.float32()),
            ),
        }
    )
    pq.write_table(table, path, row_group_size=40)
    return f"parquet:{path}"


def _memory(ids: list[str], texts: list[str], vecs: list[Any]) -> MemoryStore:
    return MemoryStore(ids, [None if v is None else np.asarray(v, np.float32) for v in vecs], texts)


def _rows(r: DiffResult) -> list[tuple[Any, ...]]:
    return [(c.id, c.old_id, c.status, c.holds_vector_of, c.cosine) for c in r.chunks]


def _same(a: DiffResult, b: DiffResult) -> None:
    """The same result to the order of the rows, cosines within 1e-6."""
    assert (a.counts, a.compared, a.ok) == (b.counts, b.compared, b.ok)
    assert a.min_cosine == pytest.approx(b.min_cosine, abs=1e-6)
    ra, rb = _rows(a), _rows(b)
    assert [r[:4] for r in ra] == [r[:4] for r in rb]
    for x, y in zip(ra, rb, strict=True):
        assert (x[4] is None) == (y[4] is None)
        if x[4] is not None:
            assert x[4] == pytest.approx(y[4], abs=1e-6)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Blocks of 16 rows, a window of 64, and a count of the deferred pairs and of the
    spills (the band path writes none)."""
    monkeypatch.setattr(arrow_spill, "ROWS", 16)
    monkeypatch.setattr(band, "ROWS", 16)
    monkeypatch.setattr(band, "WINDOW_BYTES", 4 * D * 64)
    seen = {"deferred": 0, "spills": 0}
    add = band._Deferred.add

    def deferred(self: Any, nseq: np.ndarray, *a: Any) -> None:
        seen["deferred"] += len(nseq)
        add(self, nseq, *a)

    spill = arrow_spill._spill_arrow

    def spilled(*a: Any, **k: Any) -> Any:
        seen["spills"] += 1
        return spill(*a, **k)

    monkeypatch.setattr(band._Deferred, "add", deferred)
    monkeypatch.setattr(arrow_spill, "_spill_arrow", spilled)
    return seen


def _diff(tmp_path: Path, old: tuple[Any, ...], new: tuple[Any, ...]) -> DiffResult:
    """diff-index of the two row sets written as ``parquet:`` stores."""
    return diff_index(
        DiffIndexSettings(),
        open_store(_write(tmp_path / "old.parquet", *old)),
        open_store(_write(tmp_path / "new.parquet", *new)),
    )


def _old() -> tuple[list[str], list[str], list[Any]]:
    rng = np.random.default_rng(7)
    texts = [f"Chunk {i} on topic {i % 11}." for i in range(N)]
    return [f"o{i}" for i in range(N)], texts, list(rng.standard_normal((N, D)).astype(np.float32))


def test_a_reordered_index_is_compared_in_the_second_pass(
    tmp_path: Path, small: dict[str, int]
) -> None:
    ids, texts, vecs = _old()
    order = np.random.default_rng(3).permutation(N)  # every row somewhere else
    nv = [vecs[i].copy() for i in order]
    nv[5] = vecs[order[4]].copy()  # a shift inside the shuffle: n5 holds n4's vector
    nv[9] = np.random.default_rng(1).standard_normal(D).astype(np.float32)  # moved, no holder
    nv[12] = None
    new = ([f"n{i}" for i in range(N)], [texts[i] for i in order], nv)
    got = _diff(tmp_path, (ids, texts, vecs), new)
    assert small["deferred"] > N / 2 and small["spills"] == 0
    want = diff_index(DiffIndexSettings(), _memory(ids, texts, vecs), _memory(*new))
    _same(got, want)
    by = {c.id: c for c in got.chunks}
    assert by["n5"].status == "shift" and by["n5"].holds_vector_of == "n4"
    assert by["n9"].status == "vector_changed" and by["n12"].status == "missing_vector"


def test_a_holder_far_behind_the_window_and_before_the_first_move_is_found(
    tmp_path: Path, small: dict[str, int]
) -> None:
    """Row 590 holds row 3's vector: found from the old rows' keys, row 3's row group read
    again; an index in the same order otherwise (nothing deferred)."""
    ids, texts, vecs = _old()
    nv = [v.copy() for v in vecs]
    nv[590] = vecs[3].copy()
    new = ([f"n{i}" for i in range(N)], list(texts), nv)
    got = _diff(tmp_path, (ids, texts, vecs), new)
    assert small == {"deferred": 0, "spills": 0}
    _same(got, diff_index(DiffIndexSettings(), _memory(ids, texts, vecs), _memory(*new)))
    assert [(c.id, c.status, c.holds_vector_of) for c in got.chunks] == [("n590", "shift", "n3")]


def test_identical_old_vectors_name_the_first_holder(tmp_path: Path, small: dict[str, int]) -> None:
    ids, texts, vecs = _old()
    vecs[100] = vecs[450].copy()  # two old texts with one vector
    nv = [v.copy() for v in vecs]
    nv[300] = vecs[450].copy()
    new = ([f"n{i}" for i in range(N)], list(texts), nv)
    got = _diff(tmp_path, (ids, texts, vecs), new)
    _same(got, diff_index(DiffIndexSettings(), _memory(ids, texts, vecs), _memory(*new)))
    assert [(c.id, c.holds_vector_of) for c in got.chunks] == [("n300", "n100")]


@pytest.mark.parametrize("fault", ["first_vector_short", "null_element"])
def test_what_the_band_cannot_serve_goes_back_to_the_spill(
    tmp_path: Path, small: dict[str, int], fault: str
) -> None:
    """The old index's first vector has another length than most (the guessed dimension
    is wrong), or an old vector holds a null element: the spill's answer, from the spill."""
    ids, texts, vecs = _old()
    rows: list[Any] = [v.tolist() for v in vecs]
    if fault == "first_vector_short":
        rows[0] = rows[0][:-3]
    else:
        rows[200] = [None, *rows[200][1:]]
    nv = [v.copy() for v in vecs]
    nv[50] = vecs[49].copy()
    new = ([f"n{i}" for i in range(N)], list(texts), nv)
    got = _diff(tmp_path, (ids, texts, rows), new)
    assert small["spills"] >= 1
    memory_rows = [
        None if r is None else np.asarray([np.nan if x is None else x for x in r], np.float32)
        for r in rows
    ]
    _same(got, diff_index(DiffIndexSettings(), _memory(ids, texts, memory_rows), _memory(*new)))
    assert {c.id: c.status for c in got.chunks}["n50"] == "shift"


def test_the_bit_screen_keeps_near_vectors_and_drops_far_ones() -> None:
    """A vector at cosine 0.9995 to a moved one differs from it in at most the screen's
    bound of its 96 sign bits; a random one nearly never does; no screen at cosine -1."""
    from indexcheck.commands.diff_index.band_holders import _differing, max_differing_bits
    from indexcheck.commands.diff_index.hash_join import lsh_keys, lsh_planes

    most = max_differing_bits(0.999)
    assert 5 <= most <= 20 and max_differing_bits(-1.0) == 96
    rng = np.random.default_rng(0)
    d = 64
    base = rng.standard_normal((2000, d)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    noise = rng.standard_normal((2000, d)).astype(np.float32)
    noise -= (noise * base).sum(axis=1, keepdims=True) * base
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    theta = np.arccos(0.9995)
    near = (np.cos(theta) * base + np.sin(theta) * noise).astype(np.float32)
    far = rng.standard_normal((2000, d)).astype(np.float32)
    planes = lsh_planes(d)
    kb, kn, kf = (lsh_keys(x, planes) for x in (base, near, far))
    assert (_differing(kb, kn) <= most).all()
    assert (_differing(kb, kf) <= most).mean() < 0.01


@pytest.mark.parametrize("side", ["old", "new"])
def test_a_repeated_id_is_still_refused_without_an_id_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side: str
) -> None:
    """diff-index opens its stores without lookups: no id map is built or cached for a
    pairing by text, and the repeated id it used to refuse at open is refused from the
    keys file (exit 2, the store's own words), before any vector is compared."""
    from click.testing import CliRunner

    from indexcheck import api
    from indexcheck.cli.app import cli
    from indexcheck.errors import DataFileError

    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    ids, texts, vecs = _old()
    new = (list(ids), list(texts), [v.copy() for v in vecs])
    old_spec = _write(tmp_path / "old.parquet", ids, texts, vecs)
    new_spec = _write(tmp_path / "new.parquet", *new)
    clean = api.diff_index(old_spec, new_spec)
    assert clean.ok and not list((tmp_path / "cache").glob("idmap/*/keys.npy"))  # no id map
    bad = list(ids)
    bad[450] = bad[7]
    path = tmp_path / f"{side}.parquet"
    _write(path, bad, texts, vecs)
    with pytest.raises(DataFileError, match=f"{path.name} has duplicate ids"):
        api.diff_index(old_spec, new_spec)
    out = CliRunner().invoke(cli, ["diff-index", "--old", old_spec, "--new", new_spec])
    assert out.exit_code == 2 and "has duplicate ids; each id must appear once" in out.output


def test_both_stores_open_at_once_and_a_failed_one_closes_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """diff-index opens old and new on two threads (each open reads its file for the
    fingerprint); the new store's error is the one raised, the other store is closed."""
    from indexcheck.errors import DataFileError
    from indexcheck.stores.files.store import ParquetStore
    from indexcheck.stores.opening import opened_pair

    closed: list[str] = []
    real = ParquetStore.close
    monkeypatch.setattr(ParquetStore, "close", lambda s: closed.append(s.spec) or real(s))
    good = _write(tmp_path / "good.parquet", *_old())
    with opened_pair(good, good) as (a, b):
        assert a is not b and a.count == b.count == N
    assert len(closed) == 2
    closed.clear()
    missing, also = f"parquet:{tmp_path / 'nope.parquet'}", f"parquet:{tmp_path / 'no2.parquet'}"
    with pytest.raises(DataFileError, match="nope.parquet"):
        with opened_pair(missing, also):
            pass
    with pytest.raises(DataFileError, match="nope.parquet"):
        with opened_pair(good, missing):
            pass
    assert closed == [f"parquet:{tmp_path / 'good.parquet'}"]


@pytest.mark.parametrize("cut", ["front", "rotated"])
def test_rows_removed_at_the_front_move_the_window_on(
    tmp_path: Path, small: dict[str, int], cut: str
) -> None:
    """The first 300 old rows (several windows) are gone, or come last: the window jumps to
    the first pair instead of deferring every pair after them (found by review: all 300
    were deferred, the new side written to deferred.f32 and the old file read twice)."""
    ids, texts, vecs = _old()
    keep = list(range(300, N)) + ([] if cut == "front" else list(range(300)))
    new = ([f"n{i}" for i in keep], [texts[i] for i in keep], [vecs[i].copy() for i in keep])
    got = _diff(tmp_path, (ids, texts, vecs), new)
    assert small["deferred"] == (0 if cut == "front" else 300) and small["spills"] == 0
    _same(got, diff_index(DiffIndexSettings(), _memory(ids, texts, vecs), _memory(*new)))


def test_a_store_opened_without_lookups_keeps_the_dimension_it_learned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No id map is cached for diff-index's stores, but the dimension their pass learned
    is, so the next diff of the same files need not guess it from the first vector (found
    by review: a file whose first vector is short paid the band pass and the spill every
    run)."""
    from indexcheck import api
    from indexcheck.stores import StoreOptions

    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    ids, texts, vecs = _old()
    rows: list[Any] = [v.tolist() for v in vecs]
    rows[0] = rows[0][:-3]  # the first vector is short: the first diff falls back once
    spec = _write(tmp_path / "old.parquet", ids, texts, rows)
    new_spec = _write(tmp_path / "new.parquet", ids, texts, vecs)
    lazy = StoreOptions(lookups=False)
    assert open_store(spec, lazy).known_dimension is None
    first = api.diff_index(spec, new_spec)
    assert open_store(spec, lazy).known_dimension == D
    assert not list((tmp_path / "cache").glob("idmap/*/keys.npy"))  # still no id map
    _same(api.diff_index(spec, new_spec), first)


def test_the_band_pass_runs_its_products_on_one_blas_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LSH product runs beside the two reader threads: BLAS threads spinning for a core
    made it 5x slower on two cores (commands/kit/blas_threads.py). Limited during the run only."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from indexcheck.commands.diff_index import band_holders

    def blas() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    seen: list[list[int]] = []
    keys = band_holders.lsh_keys

    def counted(unit: np.ndarray, planes: np.ndarray) -> np.ndarray:
        seen.append(blas())
        return keys(unit, planes)

    monkeypatch.setattr(band_holders, "lsh_keys", counted)
    ids, texts, vecs = _old()
    nv = [v.copy() for v in vecs]
    nv[5] = vecs[4].copy()  # a moved vector: the old rows are keyed
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas()
        assert before  # numpy's BLAS is seen: the check below is not over nothing
        got = _diff(tmp_path, (ids, texts, vecs), ([f"n{i}" for i in range(N)], texts, nv))
        assert blas() == before  # given back
    assert got.counts.get("shift") == 1
    assert seen and all(s == [1] * len(s) for s in seen)


def _process_blas() -> list[int]:
    """The process-wide BLAS thread counts (numpy's); an OpenMP build's is per thread."""
    from threadpoolctl import threadpool_info

    return [
        i["num_threads"]
        for i in threadpool_info()
        if i["user_api"] == "blas" and i.get("threading_layer") != "openmp"
    ]


def test_one_blas_thread_gives_the_limits_back_after_the_last_of_two_threads() -> None:
    """Two diffs on two threads of one process: the limit is the process's, so it holds
    until the last block ends, and the previous limits come back then, also when the first
    thread (which set the limit) is still alive and the last block ends on the other (it
    was left at one thread for good)."""
    import threading

    from indexcheck.commands.kit.blas_threads import one_blas_thread

    before = _process_blas()
    assert before
    first_in, first_out, finish = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:  # a long-lived thread: it leaves its block, then waits
        with one_blas_thread():
            first_in.set()
            first_out.wait(10)
        finish.wait(10)

    t = threading.Thread(target=first)
    t.start()
    assert first_in.wait(10)
    with one_blas_thread():
        assert _process_blas() == [1] * len(before)
        first_out.set()  # the first block ends while this one runs
        time.sleep(0.05)
        assert _process_blas() == [1] * len(before)
    assert _process_blas() == before  # the last block out, on another thread, gave them back
    finish.set()
    t.join(10)
    assert _process_blas() == before


def test_one_blas_thread_holds_after_another_thread_set_a_limit() -> None:
    """A limit that a thread still alive set earlier (a library's pool thread, an earlier
    command in the process) made OpenBLAS ignore this thread's: the block ran on every core
    (threadpoolctl 3.6+ lets only the thread that set a limit change it)."""
    import threading

    from threadpoolctl import threadpool_limits

    from indexcheck.commands.kit.blas_threads import _release_control, one_blas_thread

    before = _process_blas()
    if max(before, default=1) < 2:
        pytest.skip("a BLAS with one thread cannot show the limit")
    set_there, done = threading.Event(), threading.Event()

    def other_thread() -> None:  # alive, as a pool's worker thread stays
        threadpool_limits(limits=before[0], user_api="blas")
        set_there.set()
        done.wait(10)

    _release_control()  # whoever held it before, the other thread takes it
    other = threading.Thread(target=other_thread)
    other.start()
    assert set_there.wait(10)
    try:
        with one_blas_thread():
            assert _process_blas() == [1] * len(before)
        assert _process_blas() == before
    finally:
        done.set()
        other.join(10)
        _release_control()
        threadpool_limits(limits=before[0], user_api="blas")
