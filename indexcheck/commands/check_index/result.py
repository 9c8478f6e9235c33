"""What check-index returns: one result, its findings and its rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...output.notebook import Notebook
from .findings import ChunkCheck, Finding, as_risk_note


@dataclass
class CheckIndexResult(Notebook):
    """What check-index found; ``ok`` is True only when no error finding exists."""

    frames = ("chunks", "findings")

    ok: bool
    checked: int
    mode: str
    threshold: float
    min_cosine: float | None
    median_cosine: float | None
    below_threshold: int
    chunks: list[ChunkCheck]
    findings: list[Finding]
    counts: dict[str, int]
    diagnosis_embeddings: int
    manifest: dict[str, Any] = field(default_factory=dict)
    #: --all above 100,000 chunks: ``chunks`` holds only the rows that are not ok
    chunks_truncated: bool = False
    #: a passing sample: one-sided 95% upper bound on the fault rate (random rows only)
    fault_rate_upper_95: float | None = None
    #: of ``diagnosis_embeddings``: texts embedded to test the shift model's predicted
    #: holders of low chunks (at most ``SHIFT_MODEL_PER_LOW`` per low chunk)
    shift_model_embeddings: int = 0
    #: sampling: targets after repeated texts left out by the per-text cap
    targets_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cosines(self) -> np.ndarray:
        """float32 (m,) cosines of the chunks that had a comparable vector."""
        vals = [c.cosine for c in self.chunks if c.cosine is not None]
        return np.asarray(vals, dtype=np.float32)


def check_result(
    mode: str,
    checked: int,
    threshold: float,
    cos: np.ndarray,
    chunks: list[ChunkCheck],
    findings: list[Finding],
    counts: dict[str, int],
    diagnosis_embeddings: int = 0,
) -> CheckIndexResult:
    """A check's result: ``ok`` when no finding is an error, the cosine figures from
    ``cos`` float64 (m,), the cosines of the chunks that had a comparable vector; on a pass
    the repeated texts are a risk note, not a warning."""
    as_risk_note(findings)
    return CheckIndexResult(
        ok=not any(f.severity == "error" for f in findings),
        checked=checked,
        mode=mode,
        threshold=threshold,
        min_cosine=float(cos.min()) if cos.size else None,
        median_cosine=float(np.median(cos)) if cos.size else None,
        below_threshold=int((cos < threshold).sum()),
        chunks=chunks,
        findings=findings,
        counts=counts,
        diagnosis_embeddings=diagnosis_embeddings,
    )
