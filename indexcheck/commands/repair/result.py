"""What repair returns: the plan per chunk, what it cost, what was written, and the
check-index --all verdict on what was written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...output.result_json import picked

#: chunk rows listed in the JSON at most (the counts are always whole)
ROWS_LISTED = 100_000


@dataclass
class RepairResult:
    """``ways``: chunks per way (kept, moved, embedded, failed_verification); ``reasons``:
    embedded chunks per reason; ``rows``: one dict per chunk that was not kept (id,
    position, way, reason or from_id), up to :data:`ROWS_LISTED`; ``embedded`` chunks got
    a fresh vector, ``texts_embedded`` texts were sent to the model (each distinct text
    once, the sample included); ``target_check`` the target's check-index --all summary
    (None: not run)."""

    chunks: int
    reading: str
    ways: dict[str, int]
    reasons: dict[str, int]
    embedded: int
    reused: int
    texts_embedded: int
    sample_texts: int
    verified: int
    verify_failed: int
    verify_all: bool
    orphans: list[str]
    rows: list[dict[str, Any]]
    sample_agree: dict[str, int]
    dry_run: bool = False
    #: a dry run: the texts writing would send to the model besides the sample's
    texts_to_embed: int = 0
    written: list[str] = field(default_factory=list)
    target: str | None = None
    #: the kind of store written (parquet, faiss, chroma, lancedb, qdrant)
    target_kind: str | None = None
    #: the spec check-index --all reads the target with (``chroma:DIR?collection=C``)
    target_spec: str | None = None
    #: the source's store kind (its spec's scheme), for the note on what was not written
    source_kind: str | None = None
    target_check: dict[str, Any] | None = None
    #: the --cache file the embeddings went through (None: none)
    cache: str | None = None
    problems: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """A target was written, passes check-index --all, and nothing went wrong (a dry
        run is ok when it found nothing it cannot repair)."""
        if self.problems:
            return False
        if self.dry_run:
            return True
        return self.target_check is not None and bool(self.target_check.get("ok"))

    @property
    def headline(self) -> str:
        """The figure users want, e.g. "embedded 29 of 160 chunks (131 reused, a full
        reindex would embed 160)"."""
        verb = "would embed" if self.dry_run else "embedded"
        return (
            f"{verb} {self.embedded} of {self.chunks} chunks ({self.reused} reused, a full "
            f"reindex would embed {self.chunks})"
        )

    @property
    def manifest_facts(self) -> dict[str, Any]:
        """What the manifest adds to the run's."""
        return {"chunks": self.chunks, "texts_embedded": self.texts_embedded}

    def to_dict(self) -> dict[str, Any]:
        head = picked(self, "ok", "headline", "dry_run", "chunks", "reading", "embedded", "reused")
        return head | {"full_reindex": self.chunks} | picked(
            self, "texts_embedded", "sample_texts", "texts_to_embed", "ways", "reasons",
            "verified", "verify_failed", "verify_all", "sample_agree", "orphans", "target",
            "target_kind", "target_spec", "source_kind", "written", "target_check", "cache",
            "problems", "rows", "manifest",
        )  # fmt: skip


__all__ = ["ROWS_LISTED", "RepairResult"]
