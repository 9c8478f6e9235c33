"""The LanceDB store against the real embedded engine (local datasets, IVF_PQ index)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexcheck.errors import InputError, SpecError
from indexcheck.stores import open_store
from tests.builders import lancedb as builder
from tests.store_contract import check_store_contract
from tests.util import documented_score, tree_digest

lancedb = pytest.importorskip("lancedb")
pa = pytest.importorskip("pyarrow")

N, D = 60, 16
NASTY = ["a'b", "back\\slash", "' OR 1=1 --", 'dq"x', "ünï", "x\\'y", "semi;colon"]


def _data(n: int = N, d: int = D, seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    vectors = (rng.standard_normal((n, d)) * 2.0).astype(np.float32)  # not unit length
    ids = [f"chunk-{i:04d}" for i in range(n)]
    texts = [f"text of chunk {i}" for i in range(n)]
    return ids, vectors, texts


def _path_of(spec: str) -> Path:
    return Path(spec.split(":", 1)[1].split("?")[0])


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[str, list[str], np.ndarray]]:
    """One IVF_PQ-indexed table per distance type: 3000 x 32 random vectors, coarse PQ."""
    out = {}
    for metric in builder.METRICS:
        ids, vectors, _ = _data(n=3000, d=32, seed=11)
        spec = builder.build(
            tmp_path_factory.mktemp(f"ivfpq_{metric}"),
            ids,
            vectors,
            None,
            metric=metric,
            index="IVF_PQ",
            num_partitions=16,
            num_sub_vectors=4,
        )
        out[metric] = (spec, ids, vectors)
    return out


def test_contract_flat(tmp_path: Path) -> None:
    ids, vectors, texts = _data()
    store = open_store(builder.build(tmp_path, ids, vectors, texts, metric="cosine"))
    try:
        assert store.has_exact is True
        check_store_contract(store, ids, vectors)
        info = store.info()
        assert (info.backend, info.metric, info.score) == ("lancedb", "cosine", "1-cos")
        assert info.approximate is False and info.details["metric_source"] == "spec"
    finally:
        store.close()


def test_default_metric_is_l2(tmp_path: Path) -> None:
    ids, vectors, _ = _data()
    spec = builder.build(tmp_path, ids, vectors, None, metric="l2").replace("&metric=l2", "")
    store = open_store(spec)
    try:
        info = store.info()
        assert (info.metric, info.score, info.details["metric_source"]) == (
            "l2",
            "l2^2",
            "lancedb default",
        )
    finally:
        store.close()


@pytest.mark.parametrize(
    ("metric", "score"), [("l2", "l2^2"), ("cosine", "1-cos"), ("dot", "1-dot")]
)
def test_flat_score_is_the_documented_formula(tmp_path: Path, metric: str, score: str) -> None:
    ids, vectors, _ = _data()
    store = open_store(builder.build(tmp_path, ids, vectors, None, metric=metric))
    try:
        assert store.info().score == score
        queries = (np.random.default_rng(3).standard_normal((6, D)) * 1.5).astype(np.float32)
        for fn in (store.query, store.exact_query):
            Dm, Im = fn(queries, 8)
            pos = {v: i for i, v in enumerate(ids)}
            for qi in range(len(queries)):
                expected = documented_score(score, vectors, queries[qi])
                rows = [pos[v] for v in Im[qi]]
                np.testing.assert_allclose(Dm[qi], expected[rows], rtol=1e-4, atol=1e-4)
                # and they are the true nearest under that formula
                assert rows == list(np.argsort(expected, kind="stable")[:8])
    finally:
        store.close()


@pytest.mark.parametrize(
    ("metric", "score"), [("l2", "l2^2"), ("cosine", "1-cos"), ("dot", "1-dot")]
)
def test_ivf_pq_misses_while_exact_matches_brute_force(
    indexed: dict[str, tuple[str, list[str], np.ndarray]], metric: str, score: str
) -> None:
    spec, ids, vectors = indexed[metric]
    store = open_store(spec)
    try:
        info = store.info()
        assert (info.metric, info.score, info.approximate) == (metric, score, True)
        assert info.details["metric_source"] == "index"
        assert info.details["index"]["index_type"] == "IVF_PQ"
        queries = np.random.default_rng(5).standard_normal((40, 32)).astype(np.float32)
        Da, Ia = store.query(queries, 10)
        De, Ie = store.exact_query(queries, 10)
        brute = np.stack([documented_score(score, vectors, q) for q in queries])  # (40, n)
        order = np.argsort(brute, axis=1, kind="stable")[:, :10]
        truth = np.asarray(ids, dtype=object)[order]
        assert (Ie == truth).all()
        np.testing.assert_allclose(De, np.take_along_axis(brute, order, 1), rtol=1e-4, atol=1e-4)
        misses = int((Ia[:, 0] != truth[:, 0]).sum())
        assert misses > 0, "the coarse IVF_PQ index was expected to miss some exact top-1"
        assert not np.isnan(Da).any()
    finally:
        store.close()


def test_metric_that_contradicts_the_index_is_refused(
    indexed: dict[str, tuple[str, list[str], np.ndarray]],
) -> None:
    spec, _, _ = indexed["cosine"]
    with pytest.raises(SpecError, match="distance type 'cosine'"):
        open_store(spec + "&metric=l2")
    store = open_store(spec + "&metric=cosine")  # agreeing is fine
    store.close()


def test_search_params_are_applied(indexed: dict[str, tuple[str, list[str], np.ndarray]]) -> None:
    spec, ids, vectors = indexed["l2"]
    queries = np.random.default_rng(9).standard_normal((40, 32)).astype(np.float32)
    truth = np.argsort(np.stack([documented_score("l2^2", vectors, q) for q in queries]), axis=1)[
        :, 0
    ]
    truth_ids = np.asarray(ids, dtype=object)[truth]
    hits = []
    for extra in ("", "&nprobes=16&refine_factor=1000"):
        store = open_store(spec + extra)
        try:
            _, Ia = store.query(queries, 1)
        finally:
            store.close()
        hits.append(int((Ia[:, 0] == truth_ids).sum()))
    assert hits[1] > hits[0]  # every partition probed and re-ranked exactly: better recall
    assert hits[1] == len(queries)


def test_user_files_are_byte_identical_after_full_use(
    indexed: dict[str, tuple[str, list[str], np.ndarray]],
) -> None:
    spec, ids, vectors = indexed["cosine"]
    path = _path_of(spec)
    before = tree_digest(path)
    store = open_store(spec)
    store.info()
    store.fingerprint()
    seen = [i for b in store.iter_vectors(batch=500) for i in b.ids]
    assert sorted(seen) == sorted(ids)
    assert store.fetch(ids + ["missing"]).found.sum() == len(ids)
    store.query(vectors[:20], 5)
    store.exact_query(vectors[:20], 5)
    store.close()
    assert tree_digest(path) == before


def test_version_is_pinned_and_fingerprint_follows_writes(tmp_path: Path) -> None:
    ids, vectors, texts = _data()
    spec = builder.build(tmp_path, ids, vectors, texts)
    store = open_store(spec)
    try:
        fp = store.fingerprint()
        table = lancedb.connect(str(_path_of(spec))).open_table("chunks")
        table.add(
            pa.table(
                {
                    "id": ["late"],
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors[0]), D),
                    "text": ["late"],
                }
            )
        )
        assert store.info().count == N  # still the version opened
        assert store.fetch(["late"]).found.tolist() == [False]
        assert store.fingerprint() == fp
    finally:
        store.close()
    again = open_store(spec)
    try:
        assert again.info().count == N + 1
        assert again.fingerprint() != fp
    finally:
        again.close()


def test_fetch_quotes_ids_safely(tmp_path: Path) -> None:
    ids, vectors, texts = _data(n=20)
    ids[: len(NASTY)] = NASTY
    store = open_store(builder.build(tmp_path, ids, vectors, texts))
    try:
        ask = [*NASTY, "x' OR '1'='1", "chunk-0010"]
        got = store.fetch(ask)
        assert got.found.tolist() == [True] * len(NASTY) + [False, True]
        for i, vid in enumerate(NASTY):
            np.testing.assert_array_equal(got.vectors[i], vectors[ids.index(vid)])
        assert got.texts is not None and got.texts[-1] == "text of chunk 10"
    finally:
        store.close()


def test_many_ids_are_fetched_in_batches(
    indexed: dict[str, tuple[str, list[str], np.ndarray]],
) -> None:
    spec, ids, vectors = indexed["l2"]
    store = open_store(spec)
    try:
        ask = ids[::-1]  # 3000 ids, reversed: order must follow the request
        got = store.fetch(ask)
        assert got.found.all()
        np.testing.assert_array_equal(got.vectors, vectors[::-1])
        assert got.texts is None  # this table has no text column
    finally:
        store.close()


def test_fetch_falls_back_to_id_filter_when_offsets_disagree(
    indexed: dict[str, tuple[str, list[str], np.ndarray]],
) -> None:
    """A wrong id -> offset map must never hand back another row's vector."""
    spec, ids, vectors = indexed["l2"]
    store = open_store(spec)
    try:
        store.fetch(ids[:1])  # builds the map
        store._offset_of = {i: (n + 7) % len(ids) for n, i in enumerate(ids)}  # corrupt it
        got = store.fetch(ids[100:130])
        assert got.found.all()
        np.testing.assert_array_equal(got.vectors, vectors[100:130])
    finally:
        store.close()


def test_integer_id_column(tmp_path: Path) -> None:
    _, vectors, _ = _data(n=10)
    db = lancedb.connect(str(tmp_path))
    db.create_table(
        "ints",
        pa.table(
            {
                "pk": pa.array(range(100, 110), type=pa.int64()),
                "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), D),
            }
        ),
    )
    store = open_store(f"lancedb:{tmp_path}?table=ints&id=pk&vector=emb&metric=dot")
    try:
        check_store_contract(store, [str(i) for i in range(100, 110)], vectors)
        got = store.fetch(["105", "abc", "999"])
        assert got.found.tolist() == [True, False, False]
        assert store.iter_vectors().__next__().texts is None
    finally:
        store.close()


def test_variable_length_list_column(tmp_path: Path) -> None:
    """A plain list<float> column: ragged and null rows keep their true length in dims."""
    rows = [[1.0, 2.0, 3.0], [1.0, 0.0, 0.0], None, [0.5, 0.5]]
    db = lancedb.connect(str(tmp_path))
    db.create_table(
        "t",
        pa.table({"id": ["a", "b", "c", "d"], "emb": pa.array(rows, type=pa.list_(pa.float32()))}),
    )
    store = open_store(f"lancedb:{tmp_path}?table=t&vector=emb")
    try:
        assert store.info().dimension == 3
        got = store.fetch(["d", "a", "c", "zz"])
        assert got.found.tolist() == [True, True, True, False]
        assert got.dims.tolist() == [2, 3, 0, 0]
        np.testing.assert_array_equal(got.vectors[1], [1.0, 2.0, 3.0])
        dims = [int(x) for b in store.iter_vectors(batch=3) for x in b.dims]
        assert sorted(dims) == [0, 2, 3, 3]
        with pytest.raises(InputError, match="variable-length"):
            store.query(np.ones((1, 3), np.float32), 2)
    finally:
        store.close()


def test_texts_in_iteration(tmp_path: Path) -> None:
    ids, vectors, texts = _data()
    store = open_store(builder.build(tmp_path, ids, vectors, texts))
    try:
        blocks = list(store.iter_vectors(batch=25))
        assert sum(len(b.ids) for b in blocks) == N
        for b in blocks:
            assert b.texts == [texts[ids.index(i)] for i in b.ids]
    finally:
        store.close()


def test_missing_path_is_refused_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere"
    with pytest.raises(InputError, match="no such directory"):
        open_store(f"lancedb:{path}?table=chunks")
    assert not path.exists()


def test_missing_table_names_it_and_lists_existing(tmp_path: Path) -> None:
    ids, vectors, _ = _data()
    spec = builder.build(tmp_path, ids, vectors, None)
    with pytest.raises(InputError) as err:
        open_store(spec.replace("table=chunks", "table=nope"))
    assert "'nope'" in str(err.value) and "chunks" in str(err.value)
    assert err.value.exit_code == 2


def test_missing_columns_are_input_errors(tmp_path: Path) -> None:
    ids, vectors, _ = _data()
    spec = builder.build(tmp_path, ids, vectors, None)
    with pytest.raises(InputError, match="no id column 'key'.*columns: id, vector"):
        open_store(spec + "&id=key")
    with pytest.raises(InputError, match="no vector column 'emb'.*vector columns: vector"):
        open_store(spec + "&vector=emb")
    with pytest.raises(InputError, match="not a list of floats"):
        open_store(spec + "&vector=id")
    with pytest.raises(InputError, match="no text column 'body'"):
        open_store(spec + "&text=body")


def test_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="table"):
        open_store(f"lancedb:{tmp_path}")
    with pytest.raises(SpecError, match="metric"):
        open_store(f"lancedb:{tmp_path}?table=t&metric=hamming")
    with pytest.raises(SpecError, match="nprobes"):
        open_store(f"lancedb:{tmp_path}?table=t&nprobes=many")
    with pytest.raises(SpecError, match="local"):
        open_store("lancedb:s3://bucket/db?table=t")


def test_paged_scan_and_fetch_over_fragments_and_deletions(tmp_path: Path) -> None:
    """Scans read the table page by page (offset/limit over the pinned version): across
    appended fragments and deleted rows they yield every live row once, in table order,
    and fetch by offset still returns each id's own vector."""
    ids, vectors, _ = _data(n=7000, d=4, seed=3)

    def block(a: int, b: int) -> pa.Table:
        flat = pa.array(vectors[a:b].reshape(-1))
        return pa.table({"id": ids[a:b], "vector": pa.FixedSizeListArray.from_arrays(flat, 4)})

    db = lancedb.connect(str(tmp_path))
    table = db.create_table("t", block(0, 2500))
    table.add(block(2500, 5000))
    table.add(block(5000, 7000))
    gone = [3, 2600, 2601, 6999]
    table.delete("id IN (" + ", ".join(f"'{ids[i]}'" for i in gone) + ")")
    live = [i for i in range(7000) if i not in gone]
    store = open_store(f"lancedb:{tmp_path}?table=t&metric=l2")
    try:
        got_ids, got_vecs = [], []
        for batch in store.iter_vectors(333):
            assert len(batch.ids) <= 333
            got_ids += batch.ids
            got_vecs.append(batch.vectors)
        assert got_ids == [ids[i] for i in live]
        np.testing.assert_array_equal(np.concatenate(got_vecs), vectors[live])
        ask = [ids[i] for i in (2602, 3, 6998, 0, 4999)]
        got = store.fetch(ask)
        assert got.found.tolist() == [True, False, True, True, True]
        np.testing.assert_array_equal(got.vectors[got.found], vectors[[2602, 6998, 0, 4999]])
    finally:
        store.close()
