"""diff-index from its settings: read the chunk files, open both indexes (by text, no id
map), the embedder and the engine, compare, stamp the manifest once, close."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...engines import entered_engine
from ...output.manifest import Run, stamp
from ...stores.base import VectorStore
from ...stores.opening import opened, opened_pair
from . import chunks_of, diff_index
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .result import DiffResult
from .settings import DiffIndexSettings


def described(old: VectorStore) -> dict[str, Any]:
    """The old index for the manifest's ``old_store``: its spec, count and fingerprint."""
    return {"spec": old.spec, "count": old.info().count, "fingerprint": old.fingerprint()}


def run_diff_index(
    settings: DiffIndexSettings, progress: Callable[[str], None] | None = None
) -> DiffResult:
    """diff-index as :func:`indexcheck.api.diff_index` documents it. The manifest carries
    the seed, the old index, the chunk files given as paths and the engine that
    re-embedded (None when nothing is re-embedded)."""
    s = settings
    facts = {
        "old_store": None,
        "chunks_old": _path(s.chunks_old),
        "chunks_new": _path(s.chunks_new),
        "engine": None if s.embedder is None else getattr(s.engine, "name", s.engine),
    }
    chunks_old, chunks_new = chunks_of(s)  # a bad file: before anything opens
    s = replace(s, chunks_old=chunks_old, chunks_new=chunks_new)
    started = Run("diff-index")
    with ExitStack() as stack:
        engine = entered_engine(stack, s.engine, s.ray_address)
        found = opened_pair(s.new, s.old, s.trust_pickle, lookups=False)  # paired by text
        n, o = stack.enter_context(found)
        uses = False if s.embedder is None else s.embedder
        _, e = stack.enter_context(opened(None, uses, cache=s.cache))
        result = diff_index(s, o, n, e, progress, engine)
        stamp(result, started, n, e, seed=s.seed, **{**facts, "old_store": described(o)})
        return result


def _path(chunks: Any) -> str | None:
    return str(chunks) if isinstance(chunks, str | Path) and chunks else None


__all__ = ["described", "run_diff_index"]
