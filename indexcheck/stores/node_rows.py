"""Rows that LlamaIndex wrote into a store that keeps texts itself (Chroma, PostgreSQL).

LlamaIndex stores the node, without its text, in the metadata key ``_node_content``;
what it embedded is the node's metadata header, a blank line and the text. Stores give
that embedded text as the row's text, so check-index compares like with like.
"""

from __future__ import annotations

from collections.abc import Sequence
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
