"""The one metric table (stores/metric_table.py): every store takes its scores from it."""

from __future__ import annotations


def test_every_store_takes_its_scores_from_the_one_metric_table() -> None:
    from indexcheck.stores import local as _local
    from indexcheck.stores.chroma import store as chroma
    from indexcheck.stores.lancedb import store as lancedb
    from indexcheck.stores.metric_table import scores_of
    from indexcheck.stores.milvus import store as milvus
    from indexcheck.stores.pgvector import sql as pgvector_sql
    from indexcheck.stores.qdrant import store as qdrant
    from indexcheck.stores.sqlitevec import store as sqlitevec
    from indexcheck.stores.weaviate import store as weaviate

    assert lancedb.DISTANCE_SCORES is scores_of("lancedb")  # its ?metric= choices
    # chroma, lancedb, milvus and qdrant describe themselves through BaseStore.described,
    # which reads their scheme's row of the table
    stores = (chroma.ChromaStore, lancedb.LanceDBStore, milvus.MilvusStore, qdrant.QdrantStore,
              sqlitevec.SqliteVecStore, weaviate.WeaviateStore)  # fmt: skip
    for cls in stores:
        store = object.__new__(cls)
        for metric, score in scores_of(cls.scheme).items():
            info = store.described(3, 4, metric, True, {})
            assert (info.backend, info.score, info.higher_is_better) == (cls.scheme, *score)
        assert store.described(3, 4, "no-such-metric", True, {}).score == "unknown"
    local = scores_of("local")
    assert {m: v[1:] for m, v in _local.LOCAL_METRICS.items()} == {
        m: tuple(s) for m, s in local.items()
    }
    assert {m: v[1] for m, v in pgvector_sql.METRICS.items()} == {
        m: s.formula for m, s in scores_of("pgvector").items()
    }
    # what users saw before the table existed, unchanged
    assert dict(scores_of("chroma")) == {
        "l2": ("l2^2", False),
        "ip": ("1-dot", False),
        "cosine": ("1-cos", False),
    }
    assert pgvector_sql.METRICS == {
        "cosine": ("<=>", "1-cos"),
        "l2": ("<->", "l2"),
        "ip": ("<#>", "-dot"),
        "l1": ("<+>", "l1"),
    }
