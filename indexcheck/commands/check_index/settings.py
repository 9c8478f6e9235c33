"""The options of one check-index run, as :func:`indexcheck.api.check_index` receives them;
built once at the face and passed down unchanged (field names are the api's keywords)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...inputs.embed_text import EmbedTemplate
from ..kit.settings import AT_LEAST_0, AT_LEAST_1, COSINE, SEED, EmbeddingRun, bound


@dataclass(frozen=True)
class CheckIndexSettings(EmbeddingRun):
    """Every check-index option; a ``template`` string is parsed here (InputError, exit 2)."""

    #: a spec (``faiss:./index``) or an opened store
    store: Any = None
    #: a chunks file, a Corpus, a ChunkSource, or None (the store's own texts)
    chunks: Any = None
    #: a spec, an opened embedder, or None for the default
    embedder: Any = None
    #: chunks drawn with ``default_rng(seed)``; None checks every chunk
    sample: int | None = field(default=100, metadata=AT_LEAST_1)
    seed: int = field(default=0, metadata=SEED)
    min_cosine: float = field(default=0.999, metadata=COSINE)
    #: neighbours searched first for a shifted chunk
    window: int = field(default=16, metadata=AT_LEAST_0)
    #: more chunks embedded, at most, to explain the low ones of a sample
    diagnose_budget: int = field(default=2000, metadata=AT_LEAST_0)
    #: check just these chunk ids
    only: Sequence[str] | None = None
    #: size the sample to prove the fault rate under this
    max_fault_rate: float | None = field(default=None, metadata=bound(1e-9, 1, high_open=True))
    #: the text the indexer embedded (``--embed-template``); a string is parsed on
    #: construction, so read it as :attr:`embed_template`
    template: EmbedTemplate | str | None = None
    #: every chunk, in blocks of ``block`` (flat memory)
    stream: bool = False
    #: with ``stream``: every row written to this file
    rows: str | Path | None = None
    block: int = field(default=4096, metadata=AT_LEAST_1)
    #: hosted embedders: batches in flight at once
    concurrency: int = field(default=1, metadata=bound(1, 64))

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.template, str):
            object.__setattr__(self, "template", EmbedTemplate.parse(self.template))

    @property
    def embed_template(self) -> EmbedTemplate | None:
        """``template``, parsed."""
        assert not isinstance(self.template, str)
        return self.template

    @property
    def every(self) -> bool:
        """Every chunk is checked (no sample, no ids, no fault-rate sizing)."""
        return self.stream or (
            self.sample is None and self.only is None and self.max_fault_rate is None
        )

    @property
    def chunks_path(self) -> str | None:
        """The chunks file as the manifest names it (None: chunks given in memory or none)."""
        return str(self.chunks) if isinstance(self.chunks, str | os.PathLike) else None


__all__ = ["CheckIndexSettings"]
