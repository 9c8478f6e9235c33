"""indexcheck.integrations: indexes built by LangChain and LlamaIndex themselves with the
shipped default embedder pass check-index with the default embedder; a planted positional
shift fails; a missing framework names its pip install."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import MissingDependencyError

pytest.importorskip("langchain_community")
pytest.importorskip("llama_index.core")

ROOT = Path(__file__).resolve().parents[2]
N = 40
SHIFT_FROM = 17  # from this position on, each chunk holds the next chunk's vector


def chunks() -> list[dict[str, str]]:
    lines = (ROOT / "fixtures" / "chunks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:N]]


def shifted(vectors: list[list[float]]) -> list[list[float]]:
    """The positional-cache bug: row i gets row i+1's vector from SHIFT_FROM on."""
    if len(vectors) < 2:
        return vectors
    return [*vectors[:SHIFT_FROM], *vectors[SHIFT_FROM + 1 :], vectors[-1]]


def check(spec: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(
        cli, ["check-index", "--store", spec, "--trust-pickle", "--all", "--json", "-"]
    )
    assert r.exit_code in (0, 1), (r.exit_code, r.stderr)
    return r.exit_code, json.loads(r.stdout)


def langchain_build(folder: Path, shift: bool) -> str:
    from langchain_community.vectorstores import FAISS
    from langchain_core.documents import Document

    from indexcheck.integrations.langchain.embeddings import IndexcheckEmbeddings

    class Shifted(IndexcheckEmbeddings):  # type: ignore[misc, valid-type]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return shifted(super().embed_documents(texts))

    docs = [Document(page_content=c["text"], metadata={"file": c["file"]}) for c in chunks()]
    ids = [c["id"] for c in chunks()]
    emb = Shifted() if shift else IndexcheckEmbeddings()
    FAISS.from_documents(docs, emb, ids=ids).save_local(str(folder))
    return f"faiss:{folder}"


def llamaindex_build(folder: Path, shift: bool) -> str:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from indexcheck.integrations.llamaindex.embeddings import IndexcheckEmbedding

    class Shifted(IndexcheckEmbedding):  # type: ignore[misc, valid-type]
        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return shifted(super()._get_text_embeddings(texts))

    nodes = [TextNode(id_=c["id"], text=c["text"], metadata={"file": c["file"]}) for c in chunks()]
    emb = Shifted(embed_batch_size=N) if shift else IndexcheckEmbedding(embed_batch_size=N)
    index = VectorStoreIndex(nodes, embed_model=emb)
    index.storage_context.persist(str(folder))
    return f"llamaindex:{folder}"


@pytest.mark.parametrize("build", [langchain_build, llamaindex_build])
def test_index_built_with_the_shipped_embedder_passes_and_a_shift_fails(
    tmp_path: Path, build: Any
) -> None:
    code, data = check(build(tmp_path / "good", shift=False))
    assert code == 0, data.get("findings")
    assert data["ok"] is True
    code, data = check(build(tmp_path / "bad", shift=True))
    assert code == 1 and data["ok"] is False
    ids = [c["id"] for c in chunks()]
    held = {
        row["id"]: row.get("holds_vector_of")
        for row in data.get("chunks", [])
        if row.get("holds_vector_of")
    }
    # the shifted chunks are found, each holding the next chunk's vector
    assert held, data.get("findings")
    for cid, holder in held.items():
        assert ids.index(holder) == ids.index(cid) + 1


def test_the_classes_embed_as_the_default_embedder_does() -> None:
    from indexcheck.embedders import open_embedder
    from indexcheck.integrations.langchain.embeddings import IndexcheckEmbeddings
    from indexcheck.integrations.llamaindex.embeddings import IndexcheckEmbedding

    texts = [c["text"] for c in chunks()[:3]]
    default = open_embedder("minilm")
    want = default.embed(texts)
    # one text alone, as a query is embedded: the int8 model quantises its activations per
    # batch, so a text's vector moves by ~1e-5 with the texts batched beside it
    want_query = default.embed(texts[:1])[0]
    lc = IndexcheckEmbeddings("minilm")
    li = IndexcheckEmbedding()
    np.testing.assert_allclose(np.array(lc.embed_documents(texts)), want, atol=1e-6)
    np.testing.assert_allclose(np.array(li.get_text_embedding_batch(texts)), want, atol=1e-6)
    np.testing.assert_allclose(lc.embed_query(texts[0]), want_query, atol=1e-6)
    assert lc.model_id == li.model_name == "minilm:all-MiniLM-L6-v2-int8"


def test_a_spec_with_prefixes_embeds_documents_and_queries_apart() -> None:
    from indexcheck.integrations.langchain.embeddings import embeddings

    spec = "py:indexcheck.testing:HASH32?prefix=passage:%20&query_prefix=query:%20"
    emb = embeddings(spec)
    from indexcheck.testing import HashEmbedder

    plain = HashEmbedder(32)
    np.testing.assert_allclose(emb.embed_documents(["a"])[0], plain.embed(["passage: a"])[0])
    np.testing.assert_allclose(emb.embed_query("a"), plain.embed(["query: a"])[0])


@pytest.mark.parametrize(
    ("module", "name", "framework", "package"),
    [
        ("langchain", "IndexcheckEmbeddings", "langchain_core", "langchain-core"),
        ("llamaindex", "IndexcheckEmbedding", "llama_index", "llama-index-core"),
    ],
)
def test_a_missing_framework_names_the_pip_install(
    monkeypatch: pytest.MonkeyPatch, module: str, name: str, framework: str, package: str
) -> None:
    import importlib

    module = f"indexcheck.integrations.{module}"
    real = builtins.__import__

    def refuse(mod: str, *args: Any, **kwargs: Any) -> Any:
        if mod == framework or mod.startswith(framework + "."):
            raise ImportError(f"No module named '{mod}'")
        return real(mod, *args, **kwargs)

    for key in [k for k in sys.modules if k == framework or k.startswith(framework + ".")]:
        monkeypatch.delitem(sys.modules, key)
    for key in [k for k in sys.modules if k == module or k.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, key)  # the package and the module that makes the class
    monkeypatch.setattr(builtins, "__import__", refuse)
    mod = importlib.import_module(module)  # importing the module itself needs no framework
    with pytest.raises(MissingDependencyError) as err:
        getattr(mod, name)
    assert package in str(err.value) and "pip install" in str(err.value)
    assert err.value.exit_code == 2


def test_the_integrations_paths_name_the_same_classes() -> None:
    """``indexcheck.integrations.langchain``/``.llamaindex``, the paths users import from,
    name the very classes and functions their ``embeddings`` modules make."""
    import importlib

    # by module name (the test above re-imports these modules)
    langchain = importlib.import_module("indexcheck.integrations.langchain")
    llamaindex = importlib.import_module("indexcheck.integrations.llamaindex")
    made_lc = importlib.import_module("indexcheck.integrations.langchain.embeddings")
    made_li = importlib.import_module("indexcheck.integrations.llamaindex.embeddings")

    assert langchain.IndexcheckEmbeddings is made_lc.IndexcheckEmbeddings
    assert langchain.embeddings is made_lc.embeddings
    assert llamaindex.IndexcheckEmbedding is made_li.IndexcheckEmbedding
    assert llamaindex.embedding is made_li.embedding
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        langchain.Nope  # noqa: B018
