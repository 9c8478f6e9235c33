"""formats/llamaindex.py: for every node, the rebuilt text is node.get_content(EMBED).

Nodes cover what changes the embedded text: exclusion lists, custom metadata_template,
metadata_separator and text_template, empty and whitespace-only metadata, non-string
values, leading/trailing whitespace, braces in the text, and Document nodes (Node class,
text in text_resource). LlamaIndex itself builds and persists them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from indexcheck.errors import DataFileError, InputError
from indexcheck.inputs.formats.llamaindex import (
    embedded_text,
    embedded_text_from_row,
    read_persist_dir,
)
from tests.builders.framework_corpus import llamaindex_embedding

li_core = pytest.importorskip("llama_index.core")


def varied_nodes() -> list:
    from llama_index.core import Document
    from llama_index.core.schema import TextNode

    meta = {"file": "a.md", "title": "Opening hours", "page": 3, "score": 0.5}
    return [
        TextNode(id_="plain", text="Plain text.", metadata=dict(meta)),
        TextNode(id_="no-meta", text="No metadata at all."),
        TextNode(
            id_="excluded",
            text="Some keys excluded.",
            metadata=dict(meta),
            excluded_embed_metadata_keys=["file", "page"],
            excluded_llm_metadata_keys=["title"],
        ),
        TextNode(
            id_="all-excluded",
            text="Every key excluded.",
            metadata={"file": "b.md"},
            excluded_embed_metadata_keys=["file"],
        ),
        TextNode(
            id_="custom",
            text="Custom templates.",
            metadata=dict(meta),
            metadata_template="{key}=>{value}",
            metadata_separator=" | ",
            text_template="[{metadata_str}]\n{content}",
        ),
        TextNode(id_="blank-meta", text="Blank value.", metadata={"note": "   "}),
        TextNode(
            id_="values",
            text="Values of many types.",
            metadata={"n": 1, "x": 1.25, "ok": True, "none": None, "tags": ["a", "b"]},
        ),
        TextNode(id_="spaces", text="  leading and trailing  \n", metadata={"title": " padded "}),
        TextNode(id_="braces", text="A {literal} {{brace}} text", metadata={"k": "{v}"}),
        TextNode(id_="unicode", text="Émile — ½ café ✓", metadata={"titre": "Été"}),
        Document(id_="doc-meta", text="A whole document.", metadata={"file": "d.md"}),
        Document(id_="doc-bare", text="A document without metadata."),
        Document(
            id_="doc-excluded",
            text="  A document, keys excluded.  ",
            metadata={"file": "d.md", "author": "x"},
            excluded_embed_metadata_keys=["file"],
        ),
    ]


def persist(root: Path, kind: str) -> tuple[Path, list]:
    from llama_index.core import StorageContext, VectorStoreIndex

    nodes = varied_nodes()
    folder = root / kind
    if kind == "faiss":
        import faiss
        from llama_index.vector_stores.faiss import FaissVectorStore

        ctx = StorageContext.from_defaults(vector_store=FaissVectorStore(faiss.IndexFlatIP(384)))
    else:
        ctx = StorageContext.from_defaults()
    emb = llamaindex_embedding("correct")
    index = VectorStoreIndex(nodes, embed_model=emb, storage_context=ctx)
    index.storage_context.persist(str(folder))
    return folder, nodes


@pytest.mark.parametrize("kind", ["simple", "faiss"])
def test_rebuilt_text_is_exactly_what_llamaindex_embedded(tmp_path: Path, kind: str) -> None:
    from llama_index.core.schema import MetadataMode

    folder, nodes = persist(tmp_path, kind)
    got = read_persist_dir(folder)
    want = {n.id_: n.get_content(MetadataMode.EMBED) for n in nodes}
    assert got.layout == kind
    assert got.ids == [n.id_ for n in nodes]  # build order
    for cid, text in zip(got.ids, got.embedded_texts, strict=True):
        assert text == want[cid], cid
    assert got.metric == ("ip" if kind == "faiss" else "cosine")
    # and the stored vectors are the embeddings of exactly those texts
    from tests.builders.framework_corpus import embed_correct

    fresh = embed_correct(got.embedded_texts)
    stored = got.vectors / np.linalg.norm(got.vectors, axis=1, keepdims=True)
    assert float((stored * fresh).sum(axis=1).min()) > 0.9999


def test_rows_of_stores_that_keep_the_text(tmp_path: Path) -> None:
    """LlamaIndex's Chroma writer: text in the document, the node in _node_content."""
    import chromadb
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import MetadataMode
    from llama_index.vector_stores.chroma import ChromaVectorStore

    nodes = varied_nodes()
    for n in nodes:  # vector stores take flat metadata only
        n.metadata.pop("tags", None)
    col = chromadb.PersistentClient(path=str(tmp_path / "c")).get_or_create_collection("varied")
    ctx = StorageContext.from_defaults(vector_store=ChromaVectorStore(chroma_collection=col))
    VectorStoreIndex(nodes, embed_model=llamaindex_embedding("correct"), storage_context=ctx)
    got = col.get(include=["documents", "metadatas"])
    want = {n.id_: n.get_content(MetadataMode.EMBED) for n in nodes}
    for cid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
        assert embedded_text_from_row(doc, meta) == want[cid], cid


def test_stored_templates_cannot_reach_python_objects(tmp_path: Path) -> None:
    folder, _ = persist(tmp_path, "simple")
    path = folder / "docstore.json"
    data = json.loads(path.read_text())
    node = data["docstore/data"]["plain"]["__data__"]
    node["text_template"] = "{content.__class__.__mro__}"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="unknown field"):
        read_persist_dir(folder)
    node["text_template"] = "{metadata_str:>{content}}"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="format spec"):
        read_persist_dir(folder)


def test_missing_files_and_nodes_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="does not exist"):
        read_persist_dir(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataFileError, match="persist"):
        read_persist_dir(tmp_path / "empty")
    folder, _ = persist(tmp_path, "simple")
    path = folder / "docstore.json"
    data = json.loads(path.read_text())
    del data["docstore/data"]["plain"]
    path.write_text(json.dumps(data))
    with pytest.raises(DataFileError, match="no node 'plain'"):
        read_persist_dir(folder)
    with pytest.raises(DataFileError, match="not a text node"):
        embedded_text({"class_name": "SomethingElse"})
    with pytest.raises(DataFileError, match="_node_content"):
        embedded_text_from_row("text", {"file": "x"})


def test_two_indexes_in_one_folder_need_index_id(tmp_path: Path) -> None:
    from llama_index.core import StorageContext, VectorStoreIndex

    ctx = StorageContext.from_defaults()
    nodes = varied_nodes()
    emb = llamaindex_embedding("correct")
    first = VectorStoreIndex(nodes[:4], embed_model=emb, storage_context=ctx)
    second = VectorStoreIndex(nodes[4:], embed_model=emb, storage_context=ctx)
    ctx.persist(str(tmp_path / "two"))
    with pytest.raises(InputError, match="index_id"):
        read_persist_dir(tmp_path / "two")
    got = read_persist_dir(tmp_path / "two", index_id=second.index_id)
    assert got.ids == [n.id_ for n in nodes[4:]]
    assert read_persist_dir(tmp_path / "two", index_id=first.index_id).ids == [
        n.id_ for n in nodes[:4]
    ]
    with pytest.raises(InputError, match="no vector index 'nope'"):
        read_persist_dir(tmp_path / "two", index_id="nope")


def test_malformed_stored_fields_are_data_errors(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="'metadata_template' is not a string"):
        embedded_text({"class_name": "TextNode", "text": "x", "metadata": {"a": 1},
                       "metadata_template": None})  # fmt: skip
    folder, _ = persist(tmp_path, "simple")
    (folder / "docstore.json").write_text("[]")
    with pytest.raises(DataFileError, match="docstore/data"):
        read_persist_dir(folder)
    (folder / "index_store.json").write_text("{}")
    with pytest.raises(DataFileError, match="index_store/data"):
        read_persist_dir(folder)
