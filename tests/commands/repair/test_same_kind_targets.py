"""``--out KIND:DIR?...`` writes the repaired copy as a NEW store of that kind (a Chroma
collection, a LanceDB table, a Qdrant local collection, a FAISS folder) in a new folder,
in the layout the source's framework reads; the built-in proof runs check-index --all on
that store itself; the source is byte-identical after, also after a failed write; a target
that is or lies inside the source, an unknown kind or option are exit 2 before any work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import InputError, OutputError
from indexcheck.stores.files.store import write_vectors_file
from tests.builders import chroma as chroma_builder
from tests.builders import lancedb as lancedb_builder
from tests.builders import qdrant as qdrant_builder
from tests.builders.repeat_corpus import (
    hash_embed,
    langchain_chroma,
    repeat_corpus,
    seed_bug_vectors,
)
from tests.commands.repair.helpers import CountingEmbedder, file_hashes, write_chunks

HASH32 = "py:indexcheck.testing:HASH32"
N = 160


def _corpus_and_vectors() -> tuple[Any, np.ndarray]:
    c = repeat_corpus(N, 20)
    return c, seed_bug_vectors(c.texts, hash_embed(32))


def _parquet(root: Path) -> str:
    c, v = _corpus_and_vectors()
    path = root / "src" / "index.parquet"
    write_vectors_file(path, c.ids, v, c.texts)
    return f"parquet:{path}"


def _lancedb(root: Path) -> str:
    c, v = _corpus_and_vectors()
    return lancedb_builder.build(root / "src", c.ids, v, c.texts, "cosine")


def _qdrant(root: Path) -> str:
    c, v = _corpus_and_vectors()
    ids = [str(i) for i in range(N)]
    return qdrant_builder.build(root / "src", ids, v, c.texts, "cosine")


def _chroma(root: Path) -> str:
    c, v = _corpus_and_vectors()
    return chroma_builder.build(root / "src", c.ids, v, c.texts, "cosine")


def _milvus(root: Path) -> str:
    from tests.builders import milvus as milvus_builder

    c, v = _corpus_and_vectors()
    return milvus_builder.build(root / "src", c.ids, v, c.texts, "cosine")


def _folder(spec: str) -> Path:
    return Path(spec.split(":", 1)[1].split("?", 1)[0])


SOURCES = {"parquet": _parquet, "lancedb": _lancedb, "qdrant": _qdrant, "milvus": _milvus}
TARGETS = {
    "chroma": "chroma:{out}?collection=fixed",
    "lancedb": "lancedb:{out}?table=fixed",
    "qdrant": "qdrant:{out}?collection=fixed",
    "faiss": "faiss:{out}",
    "milvus": "milvus:{out}?collection=fixed",
}


@pytest.mark.parametrize(("source", "target"), [
    ("parquet", "chroma"), ("lancedb", "lancedb"), ("qdrant", "qdrant"), ("parquet", "faiss"),
    ("milvus", "milvus"),
])  # fmt: skip
def test_a_same_kind_target_is_written_and_proved_on_the_store_itself(
    tmp_path: Path, source: str, target: str
) -> None:
    spec = SOURCES[source](tmp_path)
    before = file_hashes(_folder(spec).parent if source == "parquet" else _folder(spec))
    out = tmp_path / "fixed"
    c = repeat_corpus(N, 20)  # the build order (a Qdrant scroll keeps none)
    ids = [str(i) for i in range(N)] if source == "qdrant" else c.ids
    chunks = write_chunks(tmp_path / "chunks.jsonl", ids, c.texts)
    r = api.repair(spec, out=TARGETS[target].format(out=out), chunks=chunks,
                   embedder=CountingEmbedder(32), trust_pickle=True)  # fmt: skip
    assert r.target_kind == target and r.target == str(out)
    assert r.target_check is not None and r.target_check["store"].startswith(f"{target}:")
    assert r.ok, r.problems
    assert r.target_check["checked"] == N
    assert (out / "vectors.parquet").is_file()  # always the Parquet copy beside the store
    assert file_hashes(_folder(spec).parent if source == "parquet" else _folder(spec)) == before


def test_a_langchain_chroma_source_gives_a_collection_langchain_chroma_searches(
    tmp_path: Path,
) -> None:
    from langchain_chroma import Chroma

    from tests.builders.repeat_corpus import buggy_langchain_embeddings

    corpus = repeat_corpus(N, 20)
    spec = langchain_chroma(tmp_path, corpus, hash_embed(32))
    before = file_hashes(_folder(spec))
    chunks = write_chunks(tmp_path / "chunks.jsonl", corpus.ids, corpus.texts)
    out = tmp_path / "fixed-db"
    r = api.repair(spec, out=f"chroma:{out}", chunks=chunks, embedder=CountingEmbedder(32))
    assert r.ok and r.target_spec == f"chroma:{out}?collection=seed_bug"  # the source's name
    assert file_hashes(_folder(spec)) == before
    opened = Chroma(collection_name="seed_bug", persist_directory=str(out),
                    embedding_function=buggy_langchain_embeddings(hash_embed(32)))  # fmt: skip
    # the last chunk's text: the shift's tail, whose vector the source held nowhere
    last = corpus.texts[-1]
    hit = opened.similarity_search(last, k=1)[0]
    assert hit.page_content == last and hit.metadata["package"] == corpus.doc_of[-1]


@pytest.mark.parametrize("kind", ["chroma", "lancedb", "qdrant", "milvus", "faiss", "parquet"])
def test_a_target_inside_the_source_is_exit_2_before_any_work(tmp_path: Path, kind: str) -> None:
    builders = {"chroma": _chroma, "lancedb": _lancedb, "qdrant": _qdrant, "milvus": _milvus}
    spec = builders.get(kind, _parquet)(tmp_path)
    inside = _folder(spec)  # the source's folder, or its file
    emb = CountingEmbedder(32)
    for out in (inside, inside / "fixed"):
        with pytest.raises(InputError, match="inside the source"):
            api.repair(spec, out=f"{kind}:{out}", embedder=emb, trust_pickle=True)
    assert emb.sent == []
    r = CliRunner().invoke(cli, ["repair", "--store", spec, "--trust-pickle", "--embedder",
                                 HASH32, "--out", f"{kind}:{inside / 'fixed'}"])  # fmt: skip
    assert r.exit_code == 2 and "inside the source" in " ".join(r.output.split())
    assert not (inside / "fixed").exists()


@pytest.mark.parametrize(("out", "says"), [
    ("chrome:{t}/n?collection=x", "did you mean chroma?"),
    ("chroma:{t}/n?colection=x", "did you mean collection?"),
    ("lancedb:{t}/n?tabel=x", "did you mean table?"),
    ("faiss:{t}/n?layout=llama", "must be one of langchain, indexcheck"),
    ("jsonl:{t}/n.jsonl", "not written by repair yet"),
    ("pinecone:idx?namespace=new", "add --yes"),
    ("upstash:http://127.0.0.1:9/x?namespace=n", "add --yes"),
    ("chroma:http://127.0.0.1:8000?collection=x", "a NEW local folder"),
])  # fmt: skip
def test_a_bad_target_spec_is_exit_2_with_what_to_do(tmp_path: Path, out: str, says: str) -> None:
    spec = _parquet(tmp_path)
    with pytest.raises(InputError):  # SpecError is one
        api.repair(spec, out=out.format(t=tmp_path), embedder=CountingEmbedder(32))
    r = CliRunner().invoke(cli, ["repair", "--store", spec, "--embedder", HASH32,
                                 "--out", out.format(t=tmp_path)])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert says in " ".join(r.output.split()) and "Traceback" not in r.output
    assert not (tmp_path / "n").exists()


def test_a_failed_write_to_a_chroma_target_leaves_no_target_and_the_source_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexcheck.commands.repair.targets.chroma import ChromaWriter

    spec = _chroma(tmp_path)
    before = file_hashes(_folder(spec))
    real = ChromaWriter.write
    calls = {"n": 0}

    def dies(self: ChromaWriter, batch: Any) -> None:
        calls["n"] += 1
        real(self, batch)  # the first rows are in the staging collection...
        raise OSError(28, "No space left on device")  # ...then the disk fills

    monkeypatch.setattr(ChromaWriter, "write", dies)
    chunks = write_chunks(tmp_path / "chunks.jsonl", *(lambda c: (c.ids, c.texts))(
        repeat_corpus(N, 20)))  # fmt: skip
    out = tmp_path / "fixed"
    with pytest.raises(OutputError, match="disk filled"):
        api.repair(spec, out=f"chroma:{out}?collection=fixed", chunks=chunks,
                   embedder=CountingEmbedder(32))  # fmt: skip
    assert calls["n"] == 1
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert file_hashes(_folder(spec)) == before
