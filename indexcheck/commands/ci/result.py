"""What ci returns: every check's result, the gates and the verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ...output.notebook import Notebook
from ..kit.verdicts import Verdict
from .config import PASS
from .gates import GateRow


@dataclass
class CiResult(Notebook):
    """The run: per-check verdicts, gate rows, the baseline comparison, each check's full
    result (``results``, as their ``to_dict()``), and per-question outcomes for the next
    baseline (``per_question``)."""

    frames = ("gates",)

    verdict: Verdict
    checks: dict[str, Verdict]
    gates: list[GateRow]
    baseline: dict[str, Any] | None
    per_question: dict[str, Any] | None
    results: dict[str, dict[str, Any]]
    config: dict[str, Any]
    summary: str = ""
    manifest: dict[str, Any] = field(default_factory=dict)
    # What the manifest needs (seed, fingerprint, config, each check's timing and
    # embedding cost); stamped by indexcheck.output.manifest.stamp, never in the JSON itself.
    manifest_facts: dict[str, Any] = field(default_factory=dict, repr=False)
    #: how the baseline's store or embedder differs from this run's (``--baseline-any-store``)
    baseline_differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.verdict == PASS)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("manifest_facts")
        d["ok"] = self.ok
        return d
