"""What probe-scale returns: the store's score scale, fitted or documented."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...output.notebook import Notebook
from ...scales.formula import Transform, _from_cos, _to_cos
from ...scales.transforms import ATOL, CATALOGUE, RTOL


@dataclass
class ScaleResult(Notebook):
    """What the probe found; ``ok`` is True only when a catalogue formula explains every
    score. ``to_dict()`` writes the conversion formulas as ``to_cosine``/``from_cosine``
    (score ``s``); the methods of the same name convert arrays. ``source`` is ``probed``
    (the backend computed the scores the probe checked), ``operator_assumed`` (measured,
    but on an operator indexcheck chose: the application's own query decides its scale,
    see ``operators``), ``cached`` (an earlier probe of the same content) or
    ``documented`` (not measured). ``framework_scores`` lists the LangChain/LlamaIndex
    relevance functions that apply to this backend score.
    """

    frames = ("candidates", "pairs")

    ok: bool
    transform: str | None
    variable: str | None
    higher_is_better: bool | None
    normalized: bool | None
    to_cosine_formula: str | None
    from_cosine_formula: str | None
    documented: str
    source: str
    message: str
    max_residual: float | None = None
    equivalent: list[str] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    queries_made: int = 0
    vectors_fetched: int = 0
    cos_range: list[float] | None = None
    observed_order: str | None = None
    search: str = "query"
    approximate_residual: float | None = None
    tolerance: dict[str, float] = field(default_factory=lambda: {"rtol": RTOL, "atol": ATOL})
    manifest: dict[str, Any] = field(default_factory=dict)
    operators: list[dict[str, str]] = field(default_factory=list)
    framework_scores: list[dict[str, Any]] = field(default_factory=list)
    # What the manifest needs (seed, fingerprint, probes, k, rtol); stamped by
    # indexcheck.output.manifest.stamp, never in the JSON itself.
    manifest_facts: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """``PASS``, ``ASSUMED`` (fits, on an operator indexcheck chose) or ``FAIL``."""
        from ..kit.verdicts import ScaleVerdict

        if not self.ok:
            return ScaleVerdict.FAIL
        if self.source == "operator_assumed":
            return ScaleVerdict.ASSUMED
        return ScaleVerdict.PASS

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = str(self.verdict)
        d.pop("manifest_facts")
        d["to_cosine"] = d.pop("to_cosine_formula")
        d["from_cosine"] = d.pop("from_cosine_formula")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScaleResult:
        d = dict(d)
        d["to_cosine_formula"] = d.pop("to_cosine", None)
        d["from_cosine_formula"] = d.pop("from_cosine", None)
        names = set(cls.__dataclass_fields__) - {"manifest_facts"}
        return cls(**{k: v for k, v in d.items() if k in names})

    def _convertible(self) -> Transform:
        if not self.ok or self.transform is None:
            raise InputError(
                "the score scale is unknown (no catalogue formula fits); scores cannot be "
                "converted to cosine; run indexcheck probe-scale for the candidates"
            )
        t = CATALOGUE[self.transform]
        if t.variable != "cos" and not self.normalized:
            raise InputError(
                f"converting {t.formula} scores to cosine needs unit-norm vectors, and the "
                "stored vectors are not unit-norm; compare on the backend's own scale"
            )
        return t

    def to_cosine(self, scores: np.ndarray) -> np.ndarray:
        """Backend scores (any shape) -> float32 cosines, clipped to [-1, 1]."""
        t = self._convertible()
        lo, hi = t.score_range(normalized=True)
        x = t.invert(np.clip(np.asarray(scores, dtype=np.float64), lo, hi))
        out: np.ndarray = np.clip(_to_cos(t.variable, x), -1.0, 1.0).astype(np.float32)
        return out

    def from_cosine(self, cos: np.ndarray) -> np.ndarray:
        """Cosines (any shape) -> float32 scores on the backend's scale."""
        t = self._convertible()
        c = np.clip(np.asarray(cos, dtype=np.float64), -1.0, 1.0)
        return t.apply(_from_cos(t.variable, c)).astype(np.float32)
