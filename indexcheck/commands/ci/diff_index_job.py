"""ci's ``[ci.diff-index]`` job: the configured store (the new index) against the old one.

The caller opens both stores (core opens none); the job runs
:func:`indexcheck.commands.diff_index.diff_index` and gates it on the table's limits, by
default ``error_findings == 0``: an index with no fault passes, any fault blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...embedders.base import Embedder
from ...inputs.corpus import Corpus
from ...stores.base import VectorStore
from .config import BLOCK, CiConfig
from .gates import GateRow, judge
from .jobs import DiffIndexConfig


def run_diff_index_job(
    config: CiConfig,
    c: DiffIndexConfig,
    new: VectorStore,
    old: VectorStore,
    embedder: Embedder | None,
    chunks: tuple[Corpus | None, Corpus | None],
    timed: Callable[..., Any],
    say: Callable[[str], None],
) -> list[GateRow]:
    """Gate rows of diff-index (``old`` the index in production, ``new`` the ci store;
    ``chunks`` the old and the new index's chunks, or None)."""
    from ..diff_index import DiffIndexSettings, diff_index

    chunks_old, chunks_new = chunks
    settings = DiffIndexSettings(
        chunks_old=chunks_old, chunks_new=chunks_new, sample_new=c.sample_new,
        seed=config.seed, min_cosine=c.min_cosine,
    )  # fmt: skip
    res = timed(
        "diff-index",
        lambda: diff_index(settings, old, new, embedder if c.sample_new != 0 else None, say),
        old_store={"spec": old.spec, "fingerprint": old.fingerprint()},
    )
    values = {
        "error_findings": sum(1 for f in res.findings if f.severity == "error"),
        "min_cosine": res.min_cosine,
        "compared": res.compared,
        **{k: res.counts.get(k, 0) for k in ("unchanged", "added", "changed", "removed")},
    }
    rows = [judge("diff-index", lim, values[lim.name]) for lim in c.limits]
    kinds = sorted({str(f.kind) for f in res.findings if f.severity == "error"})
    for row in rows:
        if row.verdict == BLOCK and kinds:
            row.detail += f" (findings: {', '.join(kinds)})"
    return rows


__all__ = ["run_diff_index_job"]
