"""Embedding providers, one module each, opened from a spec string.

``minilm`` (default, offline), ``mistral[:MODEL]``, ``st:NAME_OR_PATH``,
``py:module:function``. Schemes resolve through the one plugin manager
(:mod:`indexcheck.plugins`, hook ``register_embedders``: a scheme names a function
``open(rest) -> Embedder``, ``rest`` being what follows ``scheme:``); the built-in ones
register there like any plugin. Heavy SDKs are imported only when their provider is opened.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import plugins
from ..errors import SpecError
from ..plugins.defaults import EMBEDDERS as BUILTIN
from ..remote.retry import RetryPolicy
from .base import BaseEmbedder, Embedder, EmbedStats
from .prefixes import EMBEDDER_SPEC_KEYS, parse_embedder_spec, with_prefixes

__all__ = [
    "BUILTIN",
    "DEFAULT_EMBEDDER",
    "BaseEmbedder",
    "EmbedStats",
    "Embedder",
    "RetryPolicy",
    "cached_embedder",
    "for_queries",
    "open_embedder",
    "opened_embedder",
]

DEFAULT_EMBEDDER = "minilm"
#: the embedder spec keys that :mod:`.prefixes` handles
PREFIX_KEYS = EMBEDDER_SPEC_KEYS


def open_minilm(rest: str) -> Embedder:
    from .minilm.model import MiniLMEmbedder

    if rest.strip():
        raise SpecError(
            f"the minilm embedder takes no options ('{rest}'); instruction prefixes go "
            "after '?': minilm?prefix=...&query_prefix=..."
        )

    return MiniLMEmbedder()


def open_mistral(rest: str) -> Embedder:
    from .mistral.embedder import from_spec

    return from_spec(rest)


def open_st(rest: str) -> Embedder:
    from .sentence_transformers.embedder import SentenceTransformerEmbedder

    if not rest:
        raise SpecError("st: needs a model name or path, e.g. st:all-MiniLM-L6-v2")
    return SentenceTransformerEmbedder(rest)


def open_py(rest: str) -> Embedder:
    from .python_hook.embedder import PythonHookEmbedder

    return PythonHookEmbedder(rest)


def _resolve(spec: str | None) -> tuple[str, str, str, Any, plugins.Registry]:
    """(spec, scheme, provider options, prefix spec or None, registry) of an embedder
    spec; SpecError (exit 2) for an unknown scheme or a malformed prefix key."""
    spec = (spec or DEFAULT_EMBEDDER).strip()
    spec, prefixes = _split_prefixes(spec)
    parsed = parse_embedder_spec(spec.partition("?")[0] + "?" + prefixes) if prefixes else None
    scheme, _, rest = spec.partition(":")
    if "?" in scheme:
        scheme, _, opts = scheme.partition("?")
        rest = "?" + opts
    registry = plugins.registry("embedders")
    if scheme.lower() not in registry.targets:
        raise SpecError(
            f"unknown embedder '{spec}'; use minilm, mistral[:MODEL], st:NAME_OR_PATH "
            "or py:module:function"
        )
    return spec, scheme, rest, parsed, registry


def check_embedder_spec(spec: str | None) -> None:
    """Refuse a malformed embedder spec (unknown scheme, misspelt prefix key) without
    opening anything: for the edge, before a store is opened or a request is paid."""
    _resolve(spec)


def _split_prefixes(spec: str) -> tuple[str, str]:
    """(spec without ``prefix``/``query_prefix``, those two as a query string).

    Other ``?key=value`` options stay with the provider (``mistral:...?dim=N``); a key
    that looks like a misspelt prefix key is refused here with a did-you-mean."""
    base, sep, query = spec.partition("?")
    if not sep:
        return spec, ""
    mine: list[str] = []
    theirs: list[str] = []
    for item in query.split("&"):
        key = item.partition("=")[0]
        if key in PREFIX_KEYS:
            mine.append(item)
        elif difflib.get_close_matches(key, PREFIX_KEYS, n=1, cutoff=0.75):
            mine.append(item)  # parse_embedder_spec names the key it meant
        elif item:
            theirs.append(item)
    rest = base + ("?" + "&".join(theirs) if theirs else "")
    return rest, "&".join(mine)


def for_queries(embedder: Embedder) -> Embedder:
    """The embedder for questions: the spec's ``query_prefix`` variant when it has one
    (behind the same cache as ``embedder``), else ``embedder`` itself."""
    from .cache import CachedEmbedder

    if isinstance(embedder, CachedEmbedder):
        queries = getattr(embedder.inner, "queries", None)
        if queries is None or queries is embedder.inner:
            return embedder
        return CachedEmbedder(queries, embedder.cache, embedder.audit)  # one audit per run
    found: Embedder = getattr(embedder, "queries", None) or embedder
    return found


def cached_embedder(spec: str | None, cache_path: Path | None) -> Embedder:
    """The embedder behind a hash-keyed cache (the ``cache_path`` file, or in memory):
    each distinct text is embedded once."""
    from .cache import CachedEmbedder, open_cache

    inner = open_embedder(spec)
    return CachedEmbedder(inner, open_cache(cache_path) if cache_path is not None else None)


@contextmanager
def opened_embedder(
    embedder: str | Embedder | None, cache_path: Path | None = None
) -> Iterator[Embedder]:
    """``embedder`` as given, or opened from its spec (None: the default) behind the
    ``cache_path`` cache, which is closed when the block ends."""
    if isinstance(embedder, Embedder):
        yield embedder
        return
    opened = cached_embedder(embedder, cache_path)
    try:
        yield opened
    finally:
        cache = getattr(opened, "cache", None)
        if cache is not None:
            cache.close()


def open_embedder(spec: str | None = None) -> Embedder:
    """Open an embedder from its spec; ``None`` gives the embedded default.

    ``?prefix=TEXT`` puts an instruction prefix in front of every chunk text and
    ``&query_prefix=TEXT`` in front of every question (:mod:`indexcheck.embedders.prefixes`); the
    question embedder is :func:`for_queries` of the returned one."""
    original = spec
    spec, scheme, rest, parsed, registry = _resolve(spec)
    opener = registry.load(scheme)
    embedder: Embedder = opener(rest)
    out: Embedder = embedder
    if parsed is not None and (parsed.prefix or parsed.query_prefix):
        docs, queries = with_prefixes(embedder, parsed)
        docs.queries = queries
        out = docs
    try:  # what a Ray worker opens it from (indexcheck.engines.ray.worker)
        out.spec = original  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return out
