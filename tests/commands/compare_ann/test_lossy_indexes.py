"""compare-ann on indexes that compress (issue 17, item 8): a real FAISS IVF-PQ index over
the fixture corpus, whose compression loss is invisible against the vectors it gives back
and reported against the vectors as added (re-embedded chunks, or a Parquet export); a
flat index of the same corpus, where nothing about compression is said."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann, sample_queries
from indexcheck.commands.compare_ann.compression import compression_of
from indexcheck.commands.compare_ann.truth import from_store
from indexcheck.embedders import open_embedder
from indexcheck.errors import InputError
from indexcheck.stores import open_store
from indexcheck.stores.faiss.describe import describe_faiss
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import MemoryStore

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ROOT / "fixtures" / "questions.jsonl"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fixture chunks embedded once with the default model, as an IVF-PQ index, a
    flat index, an IDMap2-wrapped IVF-PQ, a Parquet export of the vectors as added, and
    the chunks file."""
    rows = [
        json.loads(line)
        for line in (ROOT / "fixtures" / "chunks.jsonl").read_text().split("\n")
        if line
    ]
    ids = [r["id"] for r in rows]
    texts = [r["text"] for r in rows]
    x = open_embedder("minilm").embed(texts)
    root = tmp_path_factory.mktemp("lossy")
    write_faiss_folder(root / "pq", ids, x, texts=texts, index_factory="IVF4,PQ16x4")
    write_faiss_folder(root / "flat", ids, x, texts=texts)
    write_faiss_folder(root / "pq_notext", ids, x, index_factory="IVF4,PQ16x4")
    # an IDMap2 around IVF-PQ: the ids are its int64 labels, no ids.json
    idmap = faiss.index_factory(x.shape[1], "IDMap2,IVF4,PQ16x4", faiss.METRIC_INNER_PRODUCT)
    idmap.train(x)
    idmap.add_with_ids(x, np.arange(len(ids), dtype=np.int64) + 1000)
    (root / "idmap").mkdir()
    faiss.write_index(idmap, str(root / "idmap" / "index.faiss"))
    table = pa.table({"id": ids, "vector": [v.tolist() for v in x]})
    pq.write_table(table, root / "vectors.parquet")
    pq.write_table(table.slice(0, 100), root / "partial.parquet")
    chunks = root / "chunks.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    return {"root": root, "ids": ids, "x": x, "chunks": chunks, "cache": root / "emb.sqlite"}


def invoke(*args: str) -> tuple[int, str, str]:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    r = CliRunner().invoke(group, ["compare-ann", *args], env={"COLUMNS": "300"})
    return r.exit_code, " ".join(r.stdout.split()), r.stderr


def run(corpus: dict[str, Any], index: str, *extra: str) -> tuple[int, str, dict[str, Any]]:
    out = corpus["root"] / f"{index}-{abs(hash(extra))}.json"
    code, stdout, err = invoke(
        "--store",
        f"faiss:{corpus['root'] / index}",
        "--questions",
        str(QUESTIONS),
        "--cache",
        str(corpus["cache"]),
        "--json",
        str(out),
        *extra,
    )
    assert code in (0, 1), err
    return code, stdout, json.loads(out.read_text())


# -- what the index keeps ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "kind", "read_back", "outer"),
    [
        ("IVF4,PQ16x4", "pq", "compressed", "IndexIVFPQ"),
        ("OPQ16,IVF4,PQ16x4", "pq", "compressed", "IndexPreTransform"),
        ("IDMap2,IVF4,SQ8", "sq", "compressed", "IndexIDMap2"),
        ("HNSW8,SQfp16", "sq", "compressed", "IndexHNSWSQ"),
        ("HNSW8_PQ16x4", "pq", "compressed", "IndexHNSWPQ"),
        ("IVF4,PQ16x4fs", "pq", "compressed", "IndexIVFPQFastScan"),
        ("IVF4,RQ4x4", "additive", "compressed", "IndexIVFResidualQuantizer"),
        ("PCA32,Flat", "none", "compressed", "IndexPreTransform"),  # fewer dimensions kept
        ("IVF4,PQ16x4,RFlat", "pq", "original", "IndexRefineFlat"),  # searches codes, keeps vectors
        ("IVF4,Flat", "none", "original", "IndexIVFFlat"),
        ("HNSW8", "none", "original", "IndexHNSWFlat"),
        ("IDMap,Flat", "none", "original", "IndexIDMap"),
    ],
)  # fmt: skip
def test_the_codec_is_read_through_every_wrapper(
    factory: str, kind: str, read_back: str, outer: str
) -> None:
    index = faiss.index_factory(64, factory, faiss.METRIC_INNER_PRODUCT)
    got = describe_faiss(index)
    assert (got["kind"], got["vectors_read_back"], got["layers"][0]) == (kind, read_back, outer)
    assert got["lossy"] is (factory not in ("IVF4,Flat", "HNSW8", "IDMap,Flat"))
    binary = describe_faiss(faiss.IndexLSH(64, 128))
    assert binary["kind"] == "binary" and binary["vectors_read_back"] == "compressed"


def test_other_engines_say_it_from_their_details_or_unknown() -> None:
    class Said(MemoryStore):
        def __init__(self, backend: str, details: dict[str, Any]) -> None:
            super().__init__(["a"], np.ones((1, 4), np.float32), metric="ip")
            self.backend, self.details = backend, details

        def info(self) -> Any:
            return dataclasses.replace(super().info(), backend=self.backend, details=self.details)

    lance = compression_of(Said("lancedb", {"index": {"index_type": "IVF_PQ"}}))
    assert (lance["kind"], lance["vectors_read_back"]) == ("pq", "original")
    assert (
        compression_of(Said("qdrant", {"quantization": "BinaryQuantization"}))["kind"] == "binary"
    )
    assert compression_of(Said("milvus", {"index_type": "IVF_SQ8"}))["kind"] == "sq"
    half = compression_of(Said("pgvector", {"vector_type": "halfvec", "index_type": "hnsw"}))
    assert half["vectors_read_back"] == "compressed"
    dunno = compression_of(Said("upstash", {}))
    assert (dunno["kind"], dunno["lossy"], dunno["vectors_read_back"]) == (
        "unknown",
        None,
        "unknown",
    )
    assert "does not say" in dunno["codec"]


# -- the IVF-PQ index of the fixture corpus ----------------------------------------------


def test_ivf_pq_truth_over_its_own_vectors_hides_the_compression(corpus: dict[str, Any]) -> None:
    code, stdout, data = run(corpus, "pq")
    c = data["compression"]
    assert (c["kind"], c["lossy"], c["vectors_read_back"]) == ("pq", True, "compressed")
    assert "PQ 16x4 bits" in c["codec"] and c["layers"] == ["IndexIVFPQ"]
    assert data["compression_loss"] is None and data["truth_vectors"] is None
    assert "which are compressed" in data["recommendation"]
    assert "--truth-from chunks" in data["recommendation"]
    assert "--truth-store SPEC" in data["recommendation"]
    assert "ground truth over the compressed vectors the index gives back" in stdout


@pytest.mark.parametrize("source", ["chunks", "store-texts", "truth-store"])
def test_ivf_pq_against_the_vectors_as_added_reports_the_compression_loss(
    corpus: dict[str, Any], source: str
) -> None:
    _, _, own = run(corpus, "pq")
    extra = {
        "chunks": ("--truth-from", "chunks", "--chunks", str(corpus["chunks"])),
        "store-texts": ("--truth-from", "chunks"),
        "truth-store": ("--truth-store", f"parquet:{corpus['root'] / 'vectors.parquet'}"),
    }[source]
    code, stdout, data = run(corpus, "pq", *extra)
    assert data["ground_truth"] == "true_exact"
    assert data["truth_vectors"]["source"] == (
        "truth-store" if source == "truth-store" else "chunks"
    )
    loss = data["compression_loss"]
    # independently: exact top-4 over the reconstructed vectors vs over the vectors added
    store = open_store(f"faiss:{corpus['root'] / 'pq'}")
    xq = open_embedder("minilm").embed(
        [json.loads(x)["question"] for x in QUESTIONS.read_text().split("\n") if x]
    )
    recon = store.matrix()
    true_top = np.argsort(-(xq @ corpus["x"].T), axis=1, kind="stable")[:, :4]
    comp_top = np.argsort(-(xq @ recon.T), axis=1, kind="stable")[:, :4]
    hits = sum(len(set(a) & set(b)) for a, b in zip(true_top, comp_top, strict=True))
    assert loss["recall_at_k"] == pytest.approx(hits / true_top.size, abs=0.02)
    assert loss["recall_at_k"] < 0.9 and loss["best_misses"] > 0  # the loss is real
    for mine, theirs in zip(data["by_fetch"], own["by_fetch"], strict=True):
        # the search's own loss is the figure measured against the index's vectors
        assert mine["search_recall_at_k"] == pytest.approx(theirs["recall_at_k"])
        assert mine["search_best_miss_rate"] == pytest.approx(theirs["best_miss_rate"])
        # against the vectors as added the ANN loses more: compression plus search
        assert mine["recall_at_k"] < theirs["recall_at_k"]
    assert code == 1 and data["ok"] is False
    assert "compression alone" in data["recommendation"]
    assert "no fetch depth or search effort recovers it" in data["recommendation"]
    assert "raise nprobe" in data["recommendation"]  # an IVF index: nprobe, not efSearch
    assert "exact (compressed)" in stdout and "search miss" in stdout
    assert data["truth_vectors"]["median_cosine"] > 0.5


def test_truth_store_and_truth_from_chunks_agree(corpus: dict[str, Any]) -> None:
    _, _, a = run(corpus, "pq", "--truth-from", "chunks")
    _, _, b = run(corpus, "pq", "--truth-store", f"parquet:{corpus['root'] / 'vectors.parquet'}")
    # the same figures, up to a near tie flipped by re-embedding noise (~1e-3)
    la, lb = a["compression_loss"], b["compression_loss"]
    assert la["recall_at_k"] == pytest.approx(lb["recall_at_k"], abs=0.02)
    assert abs(la["best_misses"] - lb["best_misses"]) <= 1
    for ra, rb in zip(a["by_fetch"], b["by_fetch"], strict=True):
        assert abs(ra["best_misses"] - rb["best_misses"]) <= 1


def test_an_idmap2_wrapped_ivf_pq_is_detected_and_measured(corpus: dict[str, Any]) -> None:
    store = open_store(f"faiss:{corpus['root'] / 'idmap'}")
    c = compression_of(store)
    assert c["layers"] == ["IndexIDMap2", "IndexIVFPQ"] and c["vectors_read_back"] == "compressed"
    export = MemoryStore(
        [str(i + 1000) for i in range(len(corpus["ids"]))], corpus["x"], metric="ip"
    )
    tv = from_store(store, export)
    qs = sample_queries(store, 60, seed=3)
    r = compare_ann(CompareAnnSettings(k=4, fetch=(4, 10), true_vectors=tv), store, qs)
    assert r.compression_loss is not None and r.compression_loss["recall_at_k"] < 1.0
    assert r.truth_vectors is not None and r.truth_vectors["source"] == "truth-store"


# -- a flat index: nothing about compression ---------------------------------------------


def test_flat_index_says_nothing_about_compression(corpus: dict[str, Any]) -> None:
    code, stdout, data = run(corpus, "flat")
    assert code == 0
    c = data["compression"]
    assert (c["kind"], c["lossy"], c["vectors_read_back"]) == ("none", False, "original")
    assert "compress" not in stdout.lower() and "compress" not in data["recommendation"]
    # re-embedded texts differ from the indexed vectors by float noise (batching, ~1e-3):
    # a near tie may flip, nothing more
    code, _, data = run(corpus, "flat", "--truth-from", "chunks")
    assert data["compression_loss"]["recall_at_k"] >= 0.97
    assert data["compression_loss"]["best_misses"] <= 1
    assert data["truth_vectors"]["median_cosine"] > 0.999
    export = f"parquet:{corpus['root'] / 'vectors.parquet'}"
    code, _, data = run(corpus, "flat", "--truth-store", export)
    assert code == 0 and data["compression_loss"]["recall_at_k"] == 1.0
    assert data["compression_loss"]["best_misses"] == 0


# -- what is refused ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "args", "message"),
    [
        ("pq", ["--truth-from", "chunks", "--truth-store", "parquet:x.pq"], "cannot be combined"),
        ("pq", ["--chunks", "c.jsonl"], "--chunks is read only by --truth-from chunks"),
        ("pq_notext", ["--truth-from", "chunks"], "does not hold the text of every vector"),
        ("pq", ["--truth-store", "parquet:{root}/partial.parquet"], "60 of the 160 ids"),
        ("pq", ["--truth-from", "chunks", "--embedder", "py:indexcheck.testing:HASH32"], "32-d"),
    ],
)  # fmt: skip
def test_bad_true_vectors_are_refused_with_one_line(
    corpus: dict[str, Any], index: str, args: list[str], message: str
) -> None:
    args = [a.replace("{root}", str(corpus["root"])) for a in args]
    code, _, err = invoke("--store", f"faiss:{corpus['root'] / index}", "--queries", "20", *args)
    assert code == 2, err
    assert message in err and "Traceback" not in err


def test_true_vectors_of_another_model_are_refused(corpus: dict[str, Any]) -> None:
    store = open_store(f"faiss:{corpus['root'] / 'pq'}")
    rot = np.linalg.qr(np.random.default_rng(0).standard_normal((384, 384)))[0].astype(np.float32)
    other = MemoryStore(corpus["ids"], corpus["x"] @ rot, metric="ip")
    with pytest.raises(InputError, match="does not match"):
        from_store(store, other)


def test_a_sweep_against_the_true_vectors_names_compression_as_the_limit(
    corpus: dict[str, Any],
) -> None:
    code, _, data = run(corpus, "pq", "--truth-from", "chunks", "--sweep", "nprobe=1,4")
    loss = data["compression_loss"]
    assert code == 1 and data["ok"] is False and loss["best_misses"] > 0
    every = data["sweep"]["runs"][-1]  # nprobe=4 probes all four lists: no search loss
    assert all(r["search_best_miss_rate"] == 0 for r in every["by_fetch"])
    first = every["by_fetch"][0]
    assert first["best_miss_rate"] == pytest.approx(loss["best_miss_rate"], abs=0.02)
    assert "none of the nprobe values tried (1, 4)" in data["recommendation"]
    assert "Compression alone" in data["recommendation"]
    assert "try higher nprobe values" not in data["recommendation"]  # it would not help


def test_the_library_front_door_takes_the_true_vectors(corpus: dict[str, Any]) -> None:
    import indexcheck

    spec = f"faiss:{corpus['root'] / 'pq'}"
    export = f"parquet:{corpus['root'] / 'vectors.parquet'}"
    r = indexcheck.compare_ann(spec, 80, truth_store=export, fetch=(4, 10))
    assert r.truth_vectors is not None and r.compression_loss is not None
    assert r.query_details["drawn_from"] == "the vectors as added"
    again = indexcheck.compare_ann(
        spec, 80, truth_from="chunks", chunks=corpus["chunks"], fetch=(4, 10)
    )
    assert again.compression_loss is not None and r.compression_loss is not None
    assert again.compression_loss["recall_at_k"] == pytest.approx(
        r.compression_loss["recall_at_k"], abs=0.03
    )
    assert indexcheck.compare_ann(spec, 80, fetch=(4,)).compression_loss is None
    with pytest.raises(InputError, match="cannot be combined"):
        indexcheck.compare_ann(spec, 10, truth_from="chunks", truth_store=export)
