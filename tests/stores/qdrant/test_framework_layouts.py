"""Qdrant collections as LangChain's ``QdrantVectorStore`` (``page_content`` and a nested
``metadata`` payload) and LlamaIndex's ``QdrantVectorStore`` (the node, text included, as
JSON under ``_node_content``) write them on their defaults, in local mode, opened with no
``&text_field=``: a correct build passes, the positional-cache build is one shift story, a
filter on a metadata key reaches the nested key, and nothing is written."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores import StoreOptions, open_store
from indexcheck.testing import HashEmbedder
from tests.stores.searchengine_support import EMBEDDER, buggy, corpus
from tests.util import tree_digest

pytest.importorskip("langchain_qdrant")
pytest.importorskip("llama_index.vector_stores.qdrant")


def langchain_build(folder: Path, bug: bool) -> list[str]:
    from langchain_qdrant import QdrantVectorStore

    from indexcheck.integrations.langchain.embeddings import embeddings

    texts, metas = corpus()
    emb = embeddings(EMBEDDER)
    store = QdrantVectorStore.from_texts(
        texts, buggy(emb) if bug else emb, metadatas=metas, path=str(folder),
        collection_name="lc",
    )  # fmt: skip
    ids = [p.id for p in store.client.scroll("lc", limit=1000)[0]]
    store.client.close()
    return [str(i) for i in ids]


def llamaindex_build(folder: Path, bug: bool) -> None:
    """``VectorStoreIndex`` over TextNodes with metadata: LlamaIndex embeds the metadata
    header and the text, so the repeats carry their first copy's metadata (a chunk
    indexed twice) for the positional cache to see them as repeats."""
    import qdrant_client
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.qdrant import QdrantVectorStore

    from indexcheck.integrations.llamaindex.embeddings import embedding
    from indexcheck.testing import positional_cache_bug

    texts, metas = corpus()
    metas[33], metas[70] = metas[4], metas[8]
    inner = embedding(EMBEDDER)

    class Buggy(type(inner)):  # type: ignore[misc]
        def _get_text_embeddings(self, batch: list[str]) -> list[list[float]]:
            fresh = np.asarray(super()._get_text_embeddings(batch), dtype=np.float32)
            return positional_cache_bug(batch, fresh).tolist()  # type: ignore[no-any-return]

    model = Buggy(EMBEDDER, embed_batch_size=1000) if bug else inner
    nodes = [TextNode(text=t, metadata=dict(m)) for t, m in zip(texts, metas, strict=True)]
    client = qdrant_client.QdrantClient(path=str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # payload indexes in local mode
        store = QdrantVectorStore(client=client, collection_name="li")
        ctx = StorageContext.from_defaults(vector_store=store)
        VectorStoreIndex(nodes, embed_model=model, storage_context=ctx)
    client.close()


def check(spec: str, *extra: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(cli, ["check-index", "--store", spec, "--embedder", EMBEDDER,
                                 "--trust-pickle", "--all", "--json", "-", *extra])  # fmt: skip
    assert r.exit_code in (0, 1), (r.exit_code, r.stderr)
    return r.exit_code, json.loads(r.stdout)


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_correct_framework_collection_passes_with_no_mapping_given(
    tmp_path: Path, framework: str
) -> None:
    name = "lc" if framework == "langchain" else "li"
    (langchain_build if framework == "langchain" else llamaindex_build)(tmp_path, False)
    before = tree_digest(tmp_path)
    code, out = check(f"qdrant:{tmp_path}?collection={name}")
    assert code == 0, [f["message"] for f in out["findings"]]
    assert out["checked"] == len(corpus()[0])
    with open_store(f"qdrant:{tmp_path}?collection={name}", StoreOptions(trust_pickle=True)) as s:
        details = s.info().details
        assert details["layout"] == framework
        got = s.fetch([next(iter(s.iter_vectors(5))).ids[0]])
        (text,) = got.texts or [None]
        if framework == "llamaindex":  # what LlamaIndex embedded: the header, then the text
            assert text is not None and text.startswith("topic: T")
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_the_positional_cache_bug_is_one_shift_story(tmp_path: Path, framework: str) -> None:
    name = "lc" if framework == "langchain" else "li"
    (langchain_build if framework == "langchain" else llamaindex_build)(tmp_path, True)
    code, out = check(f"qdrant:{tmp_path}?collection={name}")
    assert code == 1
    kinds = {f["kind"] for f in out["findings"] if f["severity"] == "error"}
    assert kinds == {"shift"}, [f["message"] for f in out["findings"]]


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_filter_on_a_metadata_key_reaches_where_the_framework_put_it(
    tmp_path: Path, framework: str
) -> None:
    name = "lc" if framework == "langchain" else "li"
    (langchain_build if framework == "langchain" else llamaindex_build)(tmp_path, False)
    texts, metas = corpus()
    topic = {t: m["topic"] for t, m in zip(texts, metas, strict=True)}
    q = HashEmbedder(32).embed([texts[5]])
    spec = f"qdrant:{tmp_path}?collection={name}"
    with open_store(spec, StoreOptions(trust_pickle=True)) as s:
        _, ids = s.query(q, 10, filter={"topic": "T1"})
        got = [i for i in ids[0] if i is not None]
        fetched = s.fetch(got)
    assert len(got) == 10
    bare = [t.rsplit("\n\n", 1)[-1] for t in fetched.texts or []]
    assert {topic[t] for t in bare} == {"T1"}
