"""Redis, documents: keys <-> indexcheck ids, and hash or JSON documents -> rows.

An id is the key without the index's prefix (and the ``:`` RedisVL puts after a prefix
that has none), which is what langchain-redis returns from ``add_texts`` and takes in
``get_by_ids``. A hash holds its vector as raw little-endian bytes of the field's data
type; a JSON document as an array of numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...filters.evaluate import value_at
from ..node_rows import json_object
from .schema import DTYPES, Schema

SEPARATOR = ":"


def id_of(key: str, schema: Schema) -> str:
    """The indexcheck id of a Redis key: the key without the longest matching prefix."""
    best = ""
    for prefix in schema.prefixes:
        if key.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    rest = key[len(best) :]
    if best and not best.endswith(SEPARATOR) and rest.startswith(SEPARATOR):
        rest = rest[len(SEPARATOR) :]
    return rest


def keys_of(vid: str, schema: Schema) -> list[str]:
    """The keys an id may live under (one per prefix, with and without a separator)."""
    out: list[str] = []
    for prefix in schema.prefixes:
        if prefix and not prefix.endswith(SEPARATOR):
            out.append(prefix + SEPARATOR + vid)
        out.append(prefix + vid)
    return list(dict.fromkeys(out))


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _number(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _at(doc: Any, path: str) -> Any:
    """The value at a simple JSON path (``$.a.b`` or ``a.b``) of a decoded document."""
    return value_at(doc, [p for p in path.removeprefix("$").split(".") if p])


class Decoder:
    """Turns documents (a hash's ``HGETALL`` or a JSON document) into vectors, texts and
    metadata, by the schema."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.dtype = np.dtype(DTYPES[schema.data_type])
        self.d = schema.dimension
        self.numeric = {a.path for a in schema.attributes.values() if a.type == "NUMERIC"}
        self.skip = {schema.vector.path, schema.text, "_metadata_json", "_node_content"}

    def vector(self, doc: Any) -> np.ndarray | None:
        """The stored vector as float32 (its own length), or None when there is none."""
        if doc is None:
            return None
        s = self.schema
        if s.key_type == "JSON":
            value = _at(doc, s.vector.path)
            if not isinstance(value, list):
                return None
            try:
                return np.asarray(value, dtype=np.float32).reshape(-1)
            except (TypeError, ValueError):
                return None
        raw = doc.get(s.vector.path.encode())
        if not isinstance(raw, bytes) or len(raw) % self.dtype.itemsize:
            return None
        return np.frombuffer(raw, dtype=self.dtype).astype(np.float32)

    def text(self, doc: Any) -> str | None:
        s = self.schema
        if doc is None or s.text is None:
            return None
        if s.key_type == "JSON":
            value = _at(doc, s.text)
            return value if isinstance(value, str) else None
        return _text(doc.get(s.text.encode()))

    def metadata(self, doc: Any) -> dict[str, Any]:
        """The metadata: langchain's ``_metadata_json`` (with its types), LlamaIndex's node
        metadata, else every other field (numbers where the index says NUMERIC)."""
        if doc is None:
            return {}
        s = self.schema

        def get(name: str) -> Any:
            return doc.get(name) if s.key_type == "JSON" else doc.get(name.encode())

        if s.layout == "langchain" and get("_metadata_json") is not None:
            return json_object(get("_metadata_json"))
        if s.layout == "llamaindex" and get("_node_content") is not None:
            meta = json_object(get("_node_content")).get("metadata")
            if isinstance(meta, dict):
                return meta
        if s.key_type == "JSON":
            skip = {p.removeprefix("$.") for p in self.skip if p}
            return {k: v for k, v in doc.items() if k not in skip} if isinstance(doc, dict) else {}
        out: dict[str, Any] = {}
        for raw_key, raw_value in doc.items():
            key = _text(raw_key) or ""
            if key in self.skip:
                continue
            value = _text(raw_value)
            if value is None or "\ufffd" in value:
                continue  # binary (another vector): not metadata
            out[key] = _number(value) if key in self.numeric else value
        return out

    def rows(self, docs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """float32 (n, d) vectors (zero rows where missing or of another length) and the
        stored lengths (n,) int32 (0 where missing)."""
        out = np.zeros((len(docs), self.d), dtype=np.float32)
        dims = np.zeros(len(docs), dtype=np.int32)
        for i, doc in enumerate(docs):
            vec = self.vector(doc)
            if vec is None:
                continue
            dims[i] = vec.shape[0]
            if vec.shape[0] == self.d:
                out[i] = vec
        return out, dims


def parse_json_docs(replies: Sequence[Any]) -> list[Any]:
    """``JSON.MGET key... $`` replies -> decoded documents (None where a key is absent)."""
    out: list[Any] = []
    for raw in replies:
        text = _text(raw)
        if text is None:
            out.append(None)
            continue
        value = json.loads(text)
        out.append(value[0] if isinstance(value, list) and value else None)
    return out
