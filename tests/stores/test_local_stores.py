"""The local stores (FAISS folders incl. LangChain's layout, Parquet/JSONL) and `embed`."""

from __future__ import annotations

import json
import pickle
import sys
import types
from pathlib import Path

import faiss
import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import DataFileError, InputError, SpecError
from indexcheck.stores import StoreOptions, open_store
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder
from tests.store_contract import check_store_contract
from tests.util import tree_digest


def data(n: int = 40, d: int = 8) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    v = rng.standard_normal((n, d)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return [f"id-{i}" for i in range(n)], v, [f"text {i}" for i in range(n)]


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_faiss_folder_contract_and_scores(tmp_path: Path, metric: str) -> None:
    ids, v, texts = data()
    write_faiss_folder(tmp_path / "ix", ids, v, texts, metric=metric)
    before = tree_digest(tmp_path / "ix")
    store = open_store(f"faiss:{tmp_path / 'ix'}")
    check_store_contract(store, ids, v)
    info = store.info()
    assert info.score == ("dot" if metric == "ip" else "l2^2")
    D, I = store.query(v[:3], 2)
    j = ids.index(I[0, 1])
    expect = float(v[0] @ v[j]) if metric == "ip" else float(((v[0] - v[j]) ** 2).sum())
    assert D[0, 1] == pytest.approx(expect, abs=1e-5)
    assert store.fetch(["id-1"]).texts == ["text 1"]
    assert tree_digest(tmp_path / "ix") == before


def test_faiss_hnsw_search_parameter_from_spec(tmp_path: Path) -> None:
    ids, v, _ = data(300, 16)
    write_faiss_folder(tmp_path / "h", ids, v, metric="ip", index_factory="HNSW8")
    store = open_store(f"faiss:{tmp_path / 'h'}?efSearch=4")
    assert store.info().approximate and store.info().details["efSearch"] == 4
    with pytest.raises(SpecError, match="no parameter nprobe"):
        open_store(f"faiss:{tmp_path / 'h'}?nprobe=3")


def test_faiss_idmap_needs_no_id_file(tmp_path: Path) -> None:
    _, v, _ = data()
    index = faiss.IndexIDMap(faiss.IndexFlatIP(8))
    index.add_with_ids(v, np.arange(100, 140, dtype=np.int64))
    (tmp_path / "m").mkdir()
    faiss.write_index(index, str(tmp_path / "m" / "index.faiss"))
    store = open_store(f"faiss:{tmp_path / 'm'}")
    got = store.fetch(["105"])
    np.testing.assert_allclose(got.vectors[0], v[5], atol=1e-6)


def test_faiss_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="does not exist"):
        open_store(f"faiss:{tmp_path / 'none'}")
    (tmp_path / "e").mkdir()
    with pytest.raises(DataFileError, match="index.faiss does not exist"):
        open_store(f"faiss:{tmp_path / 'e'}")
    ids, v, _ = data()
    write_faiss_folder(tmp_path / "x", ids, v)
    (tmp_path / "x" / "ids.json").write_text(json.dumps(ids[:-1]))
    with pytest.raises(DataFileError, match="holds 40 vectors but the id list has 39"):
        open_store(f"faiss:{tmp_path / 'x'}")
    with pytest.raises(InputError, match="never overwrites"):
        write_faiss_folder(tmp_path / "x", ids, v)


def _langchain_folder(tmp_path: Path, ids: list[str], v: np.ndarray, texts: list[str]) -> Path:
    """Write a folder shaped like LangChain's FAISS.save_local, with stand-in classes under
    LangChain's module names (LangChain itself is not a dependency)."""
    mods = {}
    for name in (
        "langchain_community",
        "langchain_community.docstore",
        "langchain_community.docstore.in_memory",
        "langchain_core",
        "langchain_core.documents",
        "langchain_core.documents.base",
    ):
        mods[name] = types.ModuleType(name)

    class InMemoryDocstore:
        def __init__(self, d: dict) -> None:
            self._dict = d

    class Document:
        def __init__(self, page_content: str, metadata: dict) -> None:
            self.page_content, self.metadata = page_content, metadata

        def __getstate__(self) -> dict:  # pydantic models pickle their fields this way
            return {"__dict__": dict(self.__dict__), "__pydantic_fields_set__": set()}

    InMemoryDocstore.__module__ = "langchain_community.docstore.in_memory"
    Document.__module__ = "langchain_core.documents.base"
    InMemoryDocstore.__qualname__, Document.__qualname__ = "InMemoryDocstore", "Document"
    mods["langchain_community.docstore.in_memory"].InMemoryDocstore = InMemoryDocstore
    mods["langchain_core.documents.base"].Document = Document
    # the real packages may be imported already (framework tests): put them back after,
    # else later imports make second copies of their classes (pickle and isinstance fail)
    saved = {name: sys.modules[name] for name in mods if name in sys.modules}
    sys.modules.update(mods)
    try:
        uuids = [f"uuid-{i}" for i in range(len(ids))]
        store = InMemoryDocstore(
            {u: Document(t, {"id": i}) for u, t, i in zip(uuids, texts, ids, strict=True)}
        )
        folder = tmp_path / "lc"
        folder.mkdir()
        index = faiss.IndexFlatL2(v.shape[1])
        index.add(v)
        faiss.write_index(index, str(folder / "index.faiss"))
        with (folder / "index.pkl").open("wb") as f:
            pickle.dump((store, dict(enumerate(uuids))), f)
    finally:
        for name in mods:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
    return folder


def test_langchain_folder_read_with_trust_pickle(tmp_path: Path) -> None:
    ids, v, texts = data()
    folder = _langchain_folder(tmp_path, ids, v, texts)
    with pytest.raises(InputError, match="--trust-pickle"):
        open_store(f"faiss:{folder}")
    store = open_store(f"faiss:{folder}", StoreOptions(trust_pickle=True))
    got = store.fetch(["uuid-3"])
    assert got.found[0] and got.texts == ["text 3"]
    np.testing.assert_allclose(got.vectors[0], v[3], atol=1e-6)
    assert store.info().score == "l2^2"


def test_langchain_pickle_refuses_other_classes(tmp_path: Path) -> None:
    ids, v, texts = data()
    folder = _langchain_folder(tmp_path, ids, v, texts)
    (folder / "index.pkl").write_bytes(pickle.dumps((Path("/etc"), {})))
    with pytest.raises(DataFileError, match="refusing to unpickle pathlib"):
        open_store(f"faiss:{folder}", StoreOptions(trust_pickle=True))


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_vectors_file_contract(tmp_path: Path, suffix: str) -> None:
    ids, v, texts = data()
    path = tmp_path / f"v{suffix}"
    write_vectors_file(path, ids, v, texts)
    store = open_store(f"parquet:{path}")
    check_store_contract(store, ids, v)
    assert store.fetch(["id-2"]).texts == ["text 2"]
    with pytest.raises(DataFileError, match="already exists"):
        write_vectors_file(path, ids, v)
    with pytest.raises(DataFileError, match="no column 'emb'"):
        open_store(f"parquet:{path}?vector=emb")


def test_embed_command_writes_hash_keyed_vectors(tmp_path: Path) -> None:
    chunks = tmp_path / "c.jsonl"
    rows = [{"id": f"c{i}", "text": f"text {i % 7}"} for i in range(20)]
    chunks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, folder = tmp_path / "v.parquet", tmp_path / "fx"
    r = CliRunner().invoke(
        cli,
        [
            "embed",
            "--chunks",
            str(chunks),
            "--embedder",
            "py:indexcheck.testing:HASH32",
            "--out",
            str(out),
            "--faiss",
            str(folder),
            "--json",
            str(tmp_path / "m.json"),
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert "20 chunks (7 distinct texts)" in r.stdout
    store = open_store(f"parquet:{out}")
    ref = HashEmbedder(32).embed([x["text"] for x in rows])
    got = store.fetch([x["id"] for x in rows])
    np.testing.assert_allclose(got.vectors, ref, atol=1e-6)
    assert open_store(f"faiss:{folder}").info().count == 20
    manifest = json.loads((tmp_path / "m.json").read_text())["manifest"]
    assert manifest["distinct_texts"] == 7
    r2 = CliRunner().invoke(
        cli,
        [
            "embed",
            "--chunks",
            str(chunks),
            "--embedder",
            "py:indexcheck.testing:HASH32",
            "--out",
            str(out),
        ],
    )
    assert r2.exit_code == 2 and "already exists" in r2.stderr
    r3 = CliRunner().invoke(cli, ["embed", "--chunks", str(chunks)])
    assert r3.exit_code == 2 and "--out FILE and/or --faiss DIR" in r3.stderr
