"""Rows that LlamaIndex wrote into a store (Chroma, PostgreSQL, Qdrant, Pinecone, ...).

LlamaIndex stores the node in the metadata key ``_node_content`` (without its text where
the store keeps the text itself; with it in stores that have only a payload); what it
embedded is the node's metadata header, a blank line and the text. Stores give that
embedded text as the row's text, so check-index compares like with like.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..inputs.formats.llamaindex import embedded_text_from_row


def embedded_texts(docs: Sequence[Any], metas: Sequence[Any], where: str) -> list[Any]:
    """``docs`` with each LlamaIndex row's text replaced by what LlamaIndex embedded
    (rows without ``_node_content`` in their metadata are kept as they are)."""
    out = list(docs)
    for i, (doc, meta) in enumerate(zip(docs, metas, strict=True)):
        if isinstance(doc, str) and isinstance(meta, dict) and "_node_content" in meta:
            out[i] = embedded_text_from_row(doc, meta, where)
    return out


def json_object(raw: Any) -> dict[str, Any]:
    """The JSON object in a stored text (str, or UTF-8 bytes); ``{}`` for anything else
    (empty, not JSON, not an object): a row's metadata column."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str) or not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


#: the payload keys LlamaIndex adds beside the node's own metadata
NODE_KEYS = ("_node_content", "_node_type", "doc_id", "document_id", "ref_doc_id")


def payload_text(payload: Mapping[str, Any], key: str | None, where: str) -> str | None:
    """The text LlamaIndex embedded for a payload it wrote (``payload[key]`` if present,
    else the text inside the node JSON), or ``payload[key]`` for any other payload."""
    value = payload.get(key) if key else None
    node = payload.get("_node_content")
    if not isinstance(node, str):
        return value if isinstance(value, str) else None
    if not isinstance(value, str):
        try:
            parsed = json.loads(node)
        except ValueError:
            parsed = {}
        value = parsed.get("text") if isinstance(parsed, dict) else None
        if not isinstance(value, str) and isinstance(parsed, dict):
            value = (parsed.get("text_resource") or {}).get("text")
    if not isinstance(value, str):
        return None
    return embedded_text_from_row(value, payload, where)
