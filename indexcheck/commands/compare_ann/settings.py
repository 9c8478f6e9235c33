"""compare-ann's options as one frozen value, built once by :func:`indexcheck.api.compare_ann`
(its keywords, same names and defaults) and passed down unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..kit.settings import AT_LEAST_0, AT_LEAST_1, SEED, SHARE, EmbeddingRun


@dataclass(frozen=True)
class CompareAnnSettings(EmbeddingRun):
    """Every compare-ann option as the face receives it (specs or opened objects, paths)."""

    #: a spec string or an opened store (a sweep needs the spec)
    store: Any = None
    #: how many stored vectors to sample, float32 (q, d) vectors, or a QuerySet
    queries: Any = 500
    k: int = field(default=4, metadata=AT_LEAST_1)
    #: fetch depths, each >= k (None: k and the defaults deeper than k)
    fetch: Sequence[int] | None = (4, 10, 20, 50)
    #: the best-chunk miss rate to reach
    target: float = field(default=0.01, metadata=SHARE)
    seed: int = field(default=0, metadata=SEED)
    #: relative size of the move applied to sampled queries (None: the default)
    noise: float | None = field(default=None, metadata=AT_LEAST_0)
    #: a question file (JSONL or CSV) embedded with ``embedder`` to query with
    questions: str | Path | None = None
    #: a query vector file (.npy or Parquet), used as given
    query_vectors: str | Path | None = None
    #: "chunks": measure against the chunk texts re-embedded (an index that compresses)
    truth_from: str | None = None
    #: a spec or store holding the vectors as added, under the index's ids
    truth_store: Any = None
    #: a chunks file (read with id_column/text_column) or a Corpus, for truth_from
    chunks: Any = None
    embedder: Any = None
    #: the vector cache folder: a path, True for <cache root>/vectors, None for none
    cache_dir: Path | bool | None = None
    #: one filter for every query: JSON text or a parsed filter
    filter: Any = None
    #: one parsed filter per query, instead of the questions' own and ``filter``
    filters: Sequence[Any] | None = None
    #: (key, values) or "KEY=V1,V2": also measure at each value of the index's search parameter
    sweep: tuple[str, Sequence[int]] | str | None = None
    #: ground truth from an earlier run on the same queries (GroundTruth or Truths)
    truth: Any = None
    #: the vectors as added (TrueVectors), given rather than read
    true_vectors: Any = None
    # engine (the exact searches run there), cache, trust_pickle and the columns: EmbeddingRun


def swept(sweep: tuple[str, Sequence[int]] | str | None) -> tuple[str, Sequence[int]] | None:
    """``sweep`` as (key, values): ``efSearch=16,32,64`` -> ("efSearch", [16, 32, 64])."""
    if not isinstance(sweep, str):
        return sweep
    key, sep, values = sweep.partition("=")
    try:
        nums = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        nums = []
    if not sep or not key.strip() or not nums or min(nums) < 1:
        raise InputError(
            f"--sweep '{sweep}' must be PARAM=V1,V2,... with positive integers, "
            "e.g. --sweep efSearch=16,32,64 or --sweep nprobe=1,4,16"
        )
    return key.strip(), nums


def vector_cache_dir(cache_dir: Path | bool | None) -> Path | None:
    """The vector cache folder ``cache_dir`` names: True is ``<cache root>/vectors``
    (:func:`indexcheck.output.cachedir.cache_root`), False or None no cache."""
    if cache_dir is True:
        from ...output.cachedir import cache_root

        return cache_root() / "vectors"
    return None if isinstance(cache_dir, bool) else cache_dir


__all__ = ["CompareAnnSettings", "swept", "vector_cache_dir"]
