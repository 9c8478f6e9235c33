"""LlamaIndex persist folders, and the text exactly as LlamaIndex embedded each node.

``VectorStoreIndex`` embeds ``node.get_content(MetadataMode.EMBED)``: a metadata header (one
``metadata_template`` line per key not in ``excluded_embed_metadata_keys``, joined by
``metadata_separator``), then the text, through ``text_template`` (default
``"{metadata_str}\n\n{content}"``). :func:`embedded_text` rebuilds it from a node's stored JSON
as ``llama_index/core/schema.py`` does (``TextNode`` strips header and result and returns the
bare text when the header is empty; ``Node``/``Document`` strip only the result), through
:func:`indexcheck.inputs.embed_text.safe_format`. :func:`read_persist_dir` reads
``docstore.json``, ``index_store.json`` and ``default__vector_store.json`` (a SimpleVectorStore's
JSON, or a FaissVectorStore's faiss index); rows are in build order, and nothing is unpickled
or imported from LlamaIndex. For stores that keep the text themselves, LlamaIndex writes the
node without it under ``_node_content``; :func:`embedded_text_from_row` rebuilds the embedded
text from that and the row's text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError, InputError
from ..embed_text import safe_format
from ..files import c_path, loads_json
from ..limits import read_document

DOCSTORE = "docstore.json"
INDEX_STORE = "index_store.json"
VECTOR_STORE = "default__vector_store.json"
VECTOR_STORE_FAISS = "default__vector_store.faiss"

DEFAULT_TEXT_NODE_TMPL = "{metadata_str}\n\n{content}"
DEFAULT_METADATA_TMPL = "{key}: {value}"
DEFAULT_METADATA_SEPARATOR = "\n"
TEXT_NODE_CLASSES = ("TextNode", "ImageNode", "IndexNode")
NODE_CLASSES = ("Node", "Document", "ImageDocument")
_TYPE_CLASS = {"1": "TextNode", "2": "ImageNode", "3": "IndexNode", "4": "Document"}


def _str_field(node: Mapping[str, Any], key: str, default: str, where: str) -> str:
    value = node.get(key, default)
    if not isinstance(value, str):
        raise DataFileError(f"{where}: '{key}' is not a string")
    return value


def _metadata_str(node: Mapping[str, Any], where: str) -> str:
    """``BaseNode.get_metadata_str(MetadataMode.EMBED)``."""
    metadata = node.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise DataFileError(f"{where}: node metadata is not an object")
    excluded = set(node.get("excluded_embed_metadata_keys") or [])
    template = _str_field(node, "metadata_template", DEFAULT_METADATA_TMPL, where)
    key = "metadata_separator" if "metadata_separator" in node else "metadata_seperator"
    separator = _str_field(node, key, DEFAULT_METADATA_SEPARATOR, where)
    return separator.join(
        safe_format(template, {"key": str(k), "value": str(v)}, f"{where} metadata_template")
        for k, v in metadata.items()
        if k not in excluded
    )


def _class_of(node: Mapping[str, Any], type_code: str | None) -> str:
    name = node.get("class_name")
    if isinstance(name, str) and name:
        return name
    return _TYPE_CLASS.get(str(type_code), "TextNode")


def embedded_text(
    node: Mapping[str, Any], type_code: str | None = None, where: str = "node"
) -> str:
    """The string LlamaIndex embedded for a node given as its stored JSON ``__data__``
    (``node.get_content(MetadataMode.EMBED)``); DataFileError for a node type without text."""
    cls = _class_of(node, type_code)
    template = _str_field(node, "text_template", DEFAULT_TEXT_NODE_TMPL, where)
    fields = f"{where} text_template"
    if cls in TEXT_NODE_CLASSES:
        text = node.get("text") or ""
        meta = _metadata_str(node, where).strip()
        if not meta:
            return str(text)
        return safe_format(template, {"content": str(text), "metadata_str": meta}, fields).strip()
    if cls in NODE_CLASSES:
        resource = node.get("text_resource")
        if not resource:
            return ""
        text = (resource.get("text") if isinstance(resource, Mapping) else None) or ""
        meta = _metadata_str(node, where)
        if not meta:
            return str(text)
        return safe_format(template, {"content": str(text), "metadata_str": meta}, fields).strip()
    raise DataFileError(
        f"{where}: node class '{cls}' is not a text node; indexcheck reads TextNode, "
        "IndexNode, ImageNode, Node and Document"
    )


def node_text(node: Mapping[str, Any]) -> str:
    """The node's own text (``text``, or ``text_resource.text`` for Node/Document)."""
    if "text" in node and node["text"] is not None:
        return str(node["text"])
    resource = node.get("text_resource")
    if isinstance(resource, Mapping):
        return str(resource.get("text") or "")
    return ""


def embedded_text_from_row(text: str, metadata: Mapping[str, Any], where: str = "row") -> str:
    """Embedded text for a row of a store that keeps the text itself (LlamaIndex's Chroma,
    PostgreSQL, ... writers): ``metadata["_node_content"]`` is the node without its text."""
    raw = metadata.get("_node_content")
    if not isinstance(raw, str):
        raise DataFileError(
            f"{where}: no '_node_content' in the metadata; this row was not written by LlamaIndex"
        )
    try:
        node = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{where}: '_node_content' is not JSON ({exc})") from None
    if not isinstance(node, dict):
        raise DataFileError(f"{where}: '_node_content' is not a JSON object")
    cls = node.get("class_name") or metadata.get("_node_type") or "TextNode"
    node["class_name"] = cls
    if cls in NODE_CLASSES:
        node["text_resource"] = {"text": text}
    else:
        node["text"] = text
    return embedded_text(node, where=where)


@dataclass
class LlamaIndexIndex:
    """A persisted LlamaIndex vector index: rows in build order.

    ``vectors`` float32 (n, d) as stored; ``texts`` the nodes' own texts;
    ``embedded_texts`` what LlamaIndex sent to the embedding model; ``metric`` is
    ``cosine`` for SimpleVectorStore (its default similarity), ``l2`` or ``ip`` for faiss.
    """

    layout: str
    index_id: str
    ids: list[str]
    vectors: np.ndarray
    texts: list[str]
    embedded_texts: list[str]
    metadata: list[dict[str, Any]]
    metric: str
    files: list[Path] = field(default_factory=list)
    #: each node's source document (its SOURCE relationship), None when it has none
    ref_doc_ids: list[str | None] = field(default_factory=list)


def _read_json(path: Path) -> Any:
    try:
        return loads_json(read_document(path).decode("utf-8-sig"), str(path))
    except FileNotFoundError:
        raise DataFileError(
            f"{path} does not exist; a LlamaIndex persist folder (StorageContext.persist) "
            f"holds {DOCSTORE}, {INDEX_STORE} and {VECTOR_STORE}"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None


def _vector_structs(folder: Path) -> dict[str, dict[str, Any]]:
    raw = _read_json(folder / INDEX_STORE)
    data = raw.get("index_store/data") if isinstance(raw, dict) else None
    if not isinstance(data, dict):
        raise DataFileError(f"{folder / INDEX_STORE} has no 'index_store/data'")
    out: dict[str, dict[str, Any]] = {}
    for key, entry in data.items():
        if not isinstance(entry, dict) or entry.get("__type__") != "vector_store":
            continue
        inner = entry.get("__data__")
        struct = json.loads(inner) if isinstance(inner, str) else inner
        if isinstance(struct, dict):
            out[str(struct.get("index_id", key))] = struct
    return out


def _pick_struct(folder: Path, index_id: str | None) -> tuple[str, dict[str, Any]]:
    structs = _vector_structs(folder)
    if not structs:
        raise DataFileError(f"{folder / INDEX_STORE} holds no vector index")
    if index_id is not None:
        if index_id not in structs:
            raise InputError(
                f"{folder}: no vector index '{index_id}'; the folder holds "
                f"{', '.join(sorted(structs))}"
            )
        return index_id, structs[index_id]
    if len(structs) > 1:
        raise InputError(
            f"{folder} holds {len(structs)} vector indexes ({', '.join(sorted(structs))}); "
            "pick one with ?index_id=ID"
        )
    return next(iter(structs.items()))


def _is_faiss_file(path: Path) -> bool:
    with path.open("rb") as f:
        head = f.read(4)
    return head[:2] == b"Ix" or head[:3] == b"IwF" or head[:3] == b"IxF"


def read_persist_dir(folder: str | Path, index_id: str | None = None) -> LlamaIndexIndex:
    """Read a LlamaIndex persist folder (SimpleVectorStore or FaissVectorStore).

    Raises DataFileError for missing or malformed files, InputError when several vector
    indexes share the folder and ``index_id`` does not pick one."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise DataFileError(f"LlamaIndex persist folder {root} does not exist; check --store")
    vec_path = root / VECTOR_STORE
    if not vec_path.is_file() and (root / VECTOR_STORE_FAISS).is_file():
        vec_path = root / VECTOR_STORE_FAISS
    if not vec_path.is_file():
        raise DataFileError(
            f"{root} has no {VECTOR_STORE}; persist the index with "
            "index.storage_context.persist(DIR)"
        )
    iid, struct = _pick_struct(root, index_id)
    nodes_dict = struct.get("nodes_dict") or {}
    raw_docs = _read_json(root / DOCSTORE)
    docs = raw_docs.get("docstore/data") if isinstance(raw_docs, dict) else None
    if not isinstance(docs, dict):
        raise DataFileError(f"{root / DOCSTORE} has no 'docstore/data'; is it LlamaIndex's?")
    if _is_faiss_file(vec_path):
        layout, ids, vectors, metric = "faiss", *_read_faiss(vec_path, nodes_dict)
    else:
        layout, metric = "simple", "cosine"
        ids, vectors = _read_simple(vec_path, set(nodes_dict.values()) or None)
    texts: list[str] = []
    embedded: list[str] = []
    metas: list[dict[str, Any]] = []
    refs: list[str | None] = []
    for nid in ids:
        entry = docs.get(nid)
        if not isinstance(entry, dict) or not isinstance(entry.get("__data__"), dict):
            raise DataFileError(
                f"{root / DOCSTORE}: no node '{nid}', which the vector store holds; persist "
                "the docstore with the index"
            )
        node = entry["__data__"]
        where = f"{root / DOCSTORE} node '{nid}'"
        texts.append(node_text(node))
        embedded.append(embedded_text(node, entry.get("__type__"), where))
        metas.append(dict(node.get("metadata") or {}))
        refs.append(_ref_doc_id(node))
    return LlamaIndexIndex(
        layout, iid, ids, vectors, texts, embedded, metas, metric,
        [vec_path, root / DOCSTORE, root / INDEX_STORE], refs,
    )  # fmt: skip


def _ref_doc_id(node: Mapping[str, Any]) -> str | None:
    """``BaseNode.ref_doc_id``: the node id of its SOURCE relationship ("1")."""
    rel = node.get("relationships")
    src = rel.get("1") if isinstance(rel, Mapping) else None
    nid = src.get("node_id") if isinstance(src, Mapping) else None
    return str(nid) if nid is not None else None


def _read_simple(path: Path, wanted: set[str] | None) -> tuple[list[str], np.ndarray]:
    raw = _read_json(path)
    emb = raw.get("embedding_dict") if isinstance(raw, dict) else None
    if not isinstance(emb, dict):
        raise DataFileError(f"{path} has no 'embedding_dict'; is it a SimpleVectorStore?")
    ids = [str(k) for k in emb if wanted is None or k in wanted]
    if not ids:
        return ids, np.zeros((0, 0), dtype=np.float32)
    dims = {len(emb[i]) for i in ids}
    if len(dims) != 1:
        raise DataFileError(f"{path}: embeddings of several lengths {sorted(dims)}")
    return ids, np.asarray([emb[i] for i in ids], dtype=np.float32)


def _read_faiss(path: Path, nodes_dict: Mapping[str, str]) -> tuple[list[str], np.ndarray, str]:
    import faiss

    try:
        with c_path(path) as readable:
            index = faiss.read_index(readable)
    except RuntimeError as exc:
        raise DataFileError(f"{path} is not a faiss index: {exc}") from None
    n = int(index.ntotal)
    try:
        ids = [str(nodes_dict[str(r)]) for r in range(n)]
    except KeyError as exc:
        raise DataFileError(
            f"{path}: faiss row {exc} has no node in index_store.json's nodes_dict"
        ) from None
    if isinstance(index, faiss.IndexIVF):
        index.make_direct_map()
    vectors = index.reconstruct_n(0, n).astype(np.float32) if n else np.zeros((0, index.d))
    metric = "ip" if index.metric_type == faiss.METRIC_INNER_PRODUCT else "l2"
    return ids, np.asarray(vectors, dtype=np.float32), metric
