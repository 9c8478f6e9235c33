"""Validation of the id lists that sit beside a FAISS index: ``ids.json`` and LangChain's
``index.pkl`` payload. Both come from user files, so a wrong shape is bad input (exit 2)
naming the file and entry, never a KeyError deep inside a check.

Hooks: ``stores/json_list.py`` returns ``parse_ids_json(raw, path)``
after ``json.loads``; ``stores/langchain_pickle.py`` returns
``langchain_rows(payload, path, _state_dict)`` after unpickling.

:func:`store_paths` names the files and folders every store type reads, so no output is
ever written over them (:mod:`indexcheck.output.files`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import DataFileError, InputError
from ...inputs.corpus import chunk_id


def parse_ids_json(raw: Any, path: Path) -> tuple[list[str], list[str | None] | None]:
    """(ids, texts or None) from a parsed ``ids.json``: a list of ids (strings or integers),
    or a list of objects with ``id`` and optional ``text``; one kind throughout."""
    if not isinstance(raw, list):
        raise DataFileError(f"{path} must hold a JSON list of ids, got {type(raw).__name__}")
    if not raw:
        return [], None
    as_objects = isinstance(raw[0], dict)
    ids: list[str] = []
    texts: list[str | None] = []
    for n, entry in enumerate(raw):
        cid, text = ids_json_entry(entry, n, as_objects, path)
        ids.append(cid)
        texts.append(text)
    return ids, (texts if as_objects else None)


#: what to do about a bad id in the store's own id file (no --id-column names it)
ID_FILE_FIX = "fix that entry of the id file the index was saved with"


def ids_json_entry(raw: Any, n: int, as_objects: bool, path: Path) -> tuple[str, str | None]:
    """Entry ``n`` of an ``ids.json`` as (id, text or None), refused (exit 2) when its kind
    is not the list's first entry's (``as_objects``), its id is not one, or its text is
    not a string or null; the id is checked before the text."""
    where = f"{path} entry {n}"
    if isinstance(raw, dict) != as_objects:
        first = "objects" if as_objects else "plain ids"
        raise DataFileError(
            f"{where} mixes kinds: the list starts with {first}; use one kind throughout"
        )
    if not as_objects:
        return chunk_id(raw, where, "id", ID_FILE_FIX), None
    if "id" not in raw:
        raise DataFileError(f'{where} has no "id"; each object needs {{"id": ..., "text": ...}}')
    cid = chunk_id(raw["id"], where, "id", ID_FILE_FIX)
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise DataFileError(f'{where}: "text" must be a string or null')
    return cid, text


def langchain_rows(
    payload: Any, path: Path, state_dict: Callable[[Any], dict[str, Any]]
) -> tuple[list[str], list[str | None]]:
    """(ids in faiss row order, texts) from LangChain's ``(docstore, index_to_docstore_id)``;
    any other shape is refused (exit 2). ``state_dict`` reads a stand-in object's state."""
    if not isinstance(payload, tuple | list) or len(payload) < 2:
        raise DataFileError(
            f"{path} is not a LangChain FAISS pickle: expected (docstore, "
            f"index_to_docstore_id), got {type(payload).__name__}"
        )
    docstore, index_to_id = payload[0], payload[1]
    if not isinstance(index_to_id, dict) or not all(
        isinstance(k, int) and not isinstance(k, bool) for k in index_to_id
    ):
        raise DataFileError(
            f"{path} is not a LangChain FAISS pickle: index_to_docstore_id must map row "
            "numbers to document ids"
        )
    rows = sorted(index_to_id.items())
    if [k for k, _ in rows] != list(range(len(rows))):
        raise DataFileError(f"{path}: index_to_docstore_id must number rows 0..n-1")
    docs = state_dict(docstore).get("_dict", {})
    if not isinstance(docs, dict):
        raise DataFileError(f"{path}: the docstore holds no document dictionary")
    ids = [chunk_id(v, f"{path} row {k}", "docstore id") for k, v in rows]
    texts: list[str | None] = []
    for doc_id in ids:
        doc = docs.get(doc_id)
        text = state_dict(doc).get("page_content") if doc is not None else None
        texts.append(text if isinstance(text, str) else None)
    return ids, texts


#: schemes whose location is a local file or folder (a URL location is remote: no files)
_LOCAL_SCHEMES = {
    "faiss": "folder",
    "langchain-faiss": "folder",
    "parquet": "file",
    "jsonl": "file",
    "chroma": "folder",
    "qdrant": "folder",
    "lancedb": "folder",
    "milvus": "folder",  # Milvus Lite: a NAME.db folder
    "llamaindex": "folder",
}


def store_paths(spec: str) -> list[tuple[Path, str]]:
    """The files and folders a store spec reads, as ``(path, "file" | "folder")``: the
    faiss folder, the Parquet/JSONL file, the Chroma, Qdrant, LanceDB, Milvus Lite and
    LlamaIndex folders. Remote stores (a ``scheme://`` location, Upstash, pgvector) have
    none; a plugin store names its own through a ``local_paths(spec)`` class method
    returning the same pairs. Never opens the store; an unparsable spec has none (opening
    it reports the error)."""
    from ..base import StoreSpec

    try:
        parsed = StoreSpec.parse(spec)
    except InputError:
        return []
    location = parsed.location.strip()
    if not location or "://" in location:
        return []
    kind = _LOCAL_SCHEMES.get(parsed.scheme)
    if kind is None:
        return _plugin_paths(parsed)
    return [(Path(location).expanduser(), kind)]


def _plugin_paths(parsed: Any) -> list[tuple[Path, str]]:
    from .. import store_class

    try:
        target = store_class(parsed.scheme)
    except InputError:
        return []
    named = getattr(target, "local_paths", None)
    if not callable(named):
        return []
    return [(Path(p), str(k)) for p, k in named(parsed)]
