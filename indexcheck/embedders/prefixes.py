"""Instruction prefixes in embedder specs: ``?prefix=`` and ``&query_prefix=``.

Instruction prefixes belong to the embedder spec, as a query string after the model::

    st:intfloat/e5-small-v2?prefix=passage:%20&query_prefix=query:%20
    mistral:mistral-embed?prefix=...

Values are percent-decoded (``%20`` is a space; ``+`` stays a plus). ``prefix`` goes in
front of every chunk text, ``query_prefix`` in front of every question. Both are part of
the embedder's ``model_id``, so cached embeddings never mix prefixed and bare texts.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from ..errors import SpecError
from ..inputs.corpus import text_hash
from .base import EmbedStats

EMBEDDER_SPEC_KEYS = ("prefix", "query_prefix")


@dataclass(frozen=True)
class EmbedderSpec:
    """An embedder spec split into the provider part and its prefixes."""

    base: str
    prefix: str = ""
    query_prefix: str = ""

    def suffix(self) -> str:
        """The query string that identifies the prefixes, '' when there are none."""
        pairs = [
            (k, v) for k, v in (("prefix", self.prefix), ("query_prefix", self.query_prefix)) if v
        ]
        return "?" + "&".join(f"{k}={quote(v, safe=':')}" for k, v in pairs) if pairs else ""


def parse_embedder_spec(spec: str) -> EmbedderSpec:
    """Split ``BASE?prefix=...&query_prefix=...``; SpecError (exit 2) for unknown, repeated
    or malformed keys, naming the known ones and the closest match."""
    base, sep, query = spec.lstrip().partition("?")
    base = base.strip()
    if not sep:
        return EmbedderSpec(base)
    values: dict[str, str] = {}
    for item in query.split("&"):
        if not item:
            continue
        key, eq, raw = item.partition("=")
        if not eq:
            raise SpecError(
                f"embedder spec '{spec}': '{item}' needs a value, e.g. prefix=passage:%20"
            )
        if key not in EMBEDDER_SPEC_KEYS:
            close = difflib.get_close_matches(key, EMBEDDER_SPEC_KEYS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise SpecError(
                f"embedder spec '{spec}': unknown key '{key}'{hint}; known keys: "
                f"{', '.join(EMBEDDER_SPEC_KEYS)}"
            )
        if key in values:
            raise SpecError(f"embedder spec '{spec}': '{key}' is given twice; keep one")
        values[key] = unquote(raw)
    return EmbedderSpec(base, values.get("prefix", ""), values.get("query_prefix", ""))


class PrefixedEmbedder:
    """An Embedder that puts an instruction prefix in front of every text.

    ``model_id`` is the inner one plus the prefix (so caches keep them apart);
    ``dimension`` and ``stats`` are the inner embedder's. ``embed`` returns float32 (n, d).
    """

    def __init__(self, inner: Any, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix
        self.model_id = f"{inner.model_id}?prefix={quote(prefix, safe=':')}"
        self.dimension = int(inner.dimension)
        self._cut: set[str] = set()

    @property
    def stats(self) -> EmbedStats:
        stats: EmbedStats = self.inner.stats
        return stats

    @property
    def truncated(self) -> set[str]:
        """Hashes of the (unprefixed) texts the model read only in part: the inner
        embedder records the prefixed ones, which no chunk's hash matches."""
        return self._cut

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        sent = [self.prefix + t for t in texts]
        out = np.asarray(self.inner.embed(sent), dtype=np.float32)
        cut = getattr(self.inner, "truncated", None)
        if cut:
            self._cut.update(text_hash(t) for t, s in zip(texts, sent, strict=True)
                             if text_hash(s) in cut)  # fmt: skip
        return out


def spec_with_prefix(spec: str, prefix: str) -> str:
    """``spec`` with its chunk ``prefix`` replaced by ``prefix`` ('' drops it); the provider's
    own options and ``query_prefix`` are kept. The result is what a user types after
    ``--embedder`` (``minilm?prefix=passage:%20``)."""
    base, _, query = spec.strip().partition("?")
    kept = [item for item in query.split("&") if item and item.partition("=")[0] != "prefix"]
    if prefix:
        kept.append(f"prefix={quote(prefix, safe=':')}")
    return base + ("?" + "&".join(kept) if kept else "")


def with_prefixes(inner: Any, spec: EmbedderSpec) -> tuple[Any, Any]:
    """(embedder for chunk texts, embedder for questions) from an opened base embedder."""
    docs = PrefixedEmbedder(inner, spec.prefix) if spec.prefix else inner
    queries = PrefixedEmbedder(inner, spec.query_prefix) if spec.query_prefix else inner
    return docs, queries
