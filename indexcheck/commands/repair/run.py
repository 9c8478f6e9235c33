"""repair's run entry: the target refused or accepted before anything opens, the chunks
read, the store and embedder opened, the repair, check-index --all on what was written,
the manifest stamped once."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...engines import entered_engine
from ...inputs.corpus import Corpus, load_chunks
from ...output.manifest import Run, stamp
from ...stores.opening import opened
from ..check_index.run import run_check_index
from ..check_index.settings import CheckIndexSettings
from .mend import mend
from .preflight import refuse
from .result import RepairResult
from .rows import read_rows
from .settings import RepairSettings


def run_repair(
    settings: RepairSettings, progress: Callable[[str], None] | None = None
) -> RepairResult:
    """The result of :func:`indexcheck.api.repair`."""
    say = progress or (lambda _m: None)
    refuse(settings)
    chunks = settings.chunks
    corpus: Corpus | None = None
    if isinstance(chunks, str | os.PathLike):
        corpus = load_chunks(Path(chunks), settings.id_column, settings.text_column)
    elif chunks is not None:
        corpus = chunks
    started = Run("repair")
    with ExitStack() as stack:
        engine = entered_engine(stack, settings.engine, settings.ray_address)
        found = opened(
            settings.store, settings.embedder, trust_pickle=settings.trust_pickle,
            cache=settings.cache,
        )  # fmt: skip
        s, e = stack.enter_context(found)
        say(f"reading every row of {s.spec}")
        rows = read_rows(s, e.dimension, corpus)
        result, proof = mend(settings, s, e, rows, say, engine)
        result.cache = None if settings.cache is None else str(settings.cache)
        if result.target is not None and settings.check:
            result.target_check = check_target(result, proof, e, settings.min_cosine, say, engine)
            if not result.target_check["ok"]:
                result.problems.append(
                    f"the repaired copy fails check-index --all: {result.target_check['summary']}"
                )
        chunks_path = str(chunks) if isinstance(chunks, str | os.PathLike) else None
        stamp(result, started, s, e, seed=settings.seed, chunks=chunks_path)
    return result


def check_target(
    result: RepairResult,
    proof: str | None,
    embedder: Embedder,
    min_cosine: float,
    say: Callable[[str], None],
    engine: Any = None,
) -> dict[str, Any]:
    """check-index --all on the copy just written, read as the store kind written (a
    Chroma collection, a FAISS index, ... else its Parquet file; ``proof``, a spec that
    may hold a password), with the same embedder and engine: ``ok``, the counts, a
    one-line summary."""
    spec = str(proof or result.target_spec)
    say(f"check-index --all on {result.target_spec}")
    before = embedder.stats.texts
    checked = run_check_index(
        CheckIndexSettings(
            store=spec,
            embedder=embedder,
            sample=None,
            stream=True,
            min_cosine=min_cosine,
            trust_pickle=True,  # the pickles repair itself just wrote (FAISS, Qdrant)
            engine=engine or "local",
        )  # fmt: skip
    )
    counts = dict(checked.counts)
    bad = {k: v for k, v in counts.items() if k != "ok"}
    summary = f"{counts.get('ok', 0)} of {checked.checked} chunks at cosine >= {min_cosine}" + (
        "" if not bad else "; " + ", ".join(f"{v} {k}" for k, v in bad.items())
    )
    return {
        "ok": bool(checked.ok),
        "store": result.target_spec,
        "checked": checked.checked,
        "counts": counts,
        "min_cosine": checked.min_cosine,
        "summary": summary,
        "texts_embedded": embedder.stats.texts - before,
    }


__all__ = ["check_target", "run_repair"]
