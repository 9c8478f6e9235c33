"""The options of one repair run, as :func:`indexcheck.api.repair` receives them; built once
at the face and passed down unchanged (field names are the api's keywords)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...stores.targets import TargetSpec

#: the fewest chunks a sample may hold: fewer cannot tell the shift models apart
MIN_VERIFY = 8


@dataclass(frozen=True)
class RepairSettings:
    """Every repair option; ``verify`` is a count or ``"all"`` (InputError, exit 2, else)."""

    #: a spec (``faiss:./index``) or an opened store: read, never written
    store: Any = None
    #: where the copy goes, parsed by the face (:func:`indexcheck.stores.targets.parse_target`):
    #: a NEW folder (``vectors.parquet``, and a FAISS index for a FAISS source), a new store in
    #: a new folder (``chroma:DIR?collection=C``, ...), a new table or namespace
    out: TargetSpec | None = None
    #: a chunks file or a Corpus (the texts as they are now), or None: the store's own
    chunks: Any = None
    #: a spec, an opened embedder, or None for the default
    embedder: Any = None
    #: reused vectors checked against a fresh embedding: a seeded sample of this many
    #: chunks, or "all"
    verify: int | str = 32
    seed: int = 0
    min_cosine: float = 0.999
    #: print the plan, write nothing (the sample is still embedded to choose the plan)
    dry_run: bool = False
    #: run check-index --all on what was written (exit 0 only if it passes)
    check: bool = True
    #: SQLite embedding cache: a killed repair resumes without paying twice
    cache: str | Path | None = None
    trust_pickle: bool = False
    #: where the embeddings are made: "local", "ray" or an opened engine
    engine: Any = "local"
    #: the Ray cluster to join with engine="ray" (None: a new local one)
    ray_address: str | None = None
    #: write a hosted target (an Upstash or Pinecone namespace); without it such a target is exit 2
    yes: bool = False
    id_column: str = "id"
    text_column: str = "text"

    def __post_init__(self) -> None:
        v = self.verify
        if isinstance(v, str) and v != "all":
            if not v.isdigit():
                raise InputError(
                    f"--verify takes a count or 'all', not {v!r}; pass e.g. --verify 32"
                )
            object.__setattr__(self, "verify", int(v))
        if isinstance(self.verify, int) and self.verify < MIN_VERIFY:
            raise InputError(
                f"--verify {self.verify} cannot tell a shifted index from a clean one; pass "
                f"--verify {MIN_VERIFY} or more, or --verify all"
            )

    @property
    def verify_all(self) -> bool:
        """Every reused vector is checked against a fresh embedding."""
        return self.verify == "all"


__all__ = ["MIN_VERIFY", "RepairSettings"]
