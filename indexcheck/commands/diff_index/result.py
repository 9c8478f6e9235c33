"""What diff-index returns: each text's status, row and finding, and the run's result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from ...output.notebook import Notebook
from ..kit.finding import Finding


class DiffStatus(StrEnum):
    """A chunk's status in diff-index, in report order."""

    UNCHANGED = "unchanged"
    SHIFT = "shift"
    MODEL_CHANGE = "model_change"
    VECTOR_CHANGED = "vector_changed"
    MISSING_VECTOR = "missing_vector"
    ORPHAN_VECTOR = "orphan_vector"
    DIMENSION_MISMATCH = "dimension_mismatch"
    NON_FINITE = "non_finite"
    ZERO_VECTOR = "zero_vector"
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"
    UNCHECKED = "unchecked"
    DUPLICATE_TEXT = "duplicate_text"


@dataclass
class DiffRow:
    """One non-unchanged chunk: new id (None when removed), old id (None when added)."""

    id: str | None
    old_id: str | None
    status: str
    cosine: float | None = None
    holds_vector_of: str | None = None
    checked: str | None = None


#: diff-index's findings are check-index's type (commands/kit/finding.py)
DiffFinding = Finding


@dataclass
class DiffResult(Notebook):
    """What diff-index found; ``ok`` is True only when no error finding exists."""

    frames = ("chunks", "findings")

    ok: bool
    old_count: int
    new_count: int
    compared: int
    threshold: float
    min_cosine: float | None
    counts: dict[str, int]
    chunks: list[DiffRow]
    findings: list[DiffFinding]
    new_texts: dict[str, Any] | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``asdict(self)``, with the chunk rows and the findings' chunk ids (flat lists,
        possibly millions long) copied directly instead of element by element."""
        chunks, findings, self.chunks, self.findings = self.chunks, self.findings, [], []
        try:
            out = asdict(self)
        finally:
            self.chunks, self.findings = chunks, findings
        out["chunks"] = [dict(vars(r)) for r in chunks]
        out["findings"] = [
            {**asdict(replace(f, chunk_ids=[])), "chunk_ids": list(f.chunk_ids)} for f in findings
        ]
        return out
