"""diagnose --system's result: per-question refusal rates with Wilson intervals, the
interventions beside their control, one stage label per question, and the cost per stage."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ....output.model import Section, Table, Text
from ....output.notebook import Notebook
from ....output.registry import register_sections
from .interventions import EXPERIMENTS, IMPLICATES


@dataclass
class SystemQuestion:
    """One question: its runs' outcomes (True = refused), its refusal rate, and each arm's
    outcomes ("control", "gold-context", "fetch=20", ...; None = not applicable)."""

    id: str
    in_scope: bool
    label: str
    refusals: list[bool]
    refusal_rate: dict[str, Any]
    flaky: bool
    expected_id: str | None = None
    in_candidates: bool | None = None
    in_context: bool | None = None
    arms: dict[str, list[bool] | None] = field(default_factory=dict)
    recovered_by: list[str] = field(default_factory=list)
    detail: str = ""


@dataclass
class SystemDiagnoseResult(Notebook):
    frames = ("questions",)
    ok: bool
    system: str
    model_id: str
    runs: int
    depth: int
    interventions: list[str]
    counts: dict[str, int]
    false_refusal_rate: dict[str, Any]
    control: dict[str, int]
    recovered: dict[str, int]
    implicated: list[str]
    questions: list[SystemQuestion]
    cost: dict[str, dict[str, Any]]
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pct(rate: dict[str, Any]) -> str:
    if rate.get("value") is None:
        return "–"
    return f"{rate['value']:.0%} [{rate['low']:.0%}, {rate['high']:.0%}] ({rate['k']}/{rate['n']})"


def implicated_lines(questions: list[SystemQuestion], failing: int, control: int) -> list[str]:
    """The control's line, then "Implicated: X, in a of b failing questions" per factor
    (each question counted once per factor; arms beside it), with a candidate experiment."""
    lines = [
        f"Control: {control} of {failing} failing questions recovered re-run unchanged "
        "(called flaky, not diagnosed)"
    ]
    by_factor: dict[str, dict[str, set[str]]] = {}
    for q in questions:
        for arm in q.recovered_by:
            base = arm.split("=")[0]
            by_factor.setdefault(IMPLICATES[base], {}).setdefault(arm, set()).add(q.id)
        gold = q.arms.get("gold-context")
        if gold is not None and all(gold) and q.label != "FLAKY":
            by_factor.setdefault("generation", {}).setdefault("gold-context", set()).add(q.id)
    for factor, arms in by_factor.items():
        ids = set().union(*arms.values())
        how = "; ".join(
            (f"still refused under {arm}" if factor == "generation" else f"recovered under {arm}")
            + f": {len(a)}"
            for arm, a in arms.items()
        )
        base = next(iter(arms)).split("=")[0]
        experiment = (
            "change the prompt or the model (the answer fails with the right passage in hand)"
            if factor == "generation"
            else EXPERIMENTS.get(base, "re-run with this change")
        )
        lines.append(
            f"Implicated: {factor}, in {len(ids)} of {failing} failing questions ({how}; "
            f"none by the control); candidate experiment: {experiment}"
        )
    return lines


def system_sections(r: SystemDiagnoseResult) -> list[Section]:
    rows = [
        [
            q.id,
            q.label,
            _pct(q.refusal_rate),
            "yes" if q.flaky else "no",
            ", ".join(q.recovered_by) or "–",
        ]
        for q in r.questions
    ]
    cost = [[s, c["calls"], c["seconds"], c["tokens"]] for s, c in r.cost.items()]
    head = (
        f"{r.system} (generator {r.model_id}), {r.runs} runs per question, depth {r.depth}: "
        f"false-refusal rate {_pct(r.false_refusal_rate)}"
    )
    blocks: list[Any] = [Text(head), *[Text(line) for line in r.implicated]]
    return [
        Section("Your pipeline", "PASS" if r.ok else "FAIL", blocks, "system", terminal=True),
        Section(
            "Questions",
            None,
            [Table(["question", "label", "refusal rate [95% CI]", "flaky", "recovered by"], rows)],
            "system-questions",
            terminal=True,
        ),
        Section(
            "Cost",
            None,
            [Table(["stage", "calls", "seconds", "tokens"], cost)],
            "system-cost",
            terminal=True,
        ),
    ]


register_sections(SystemDiagnoseResult, system_sections)


__all__ = ["SystemDiagnoseResult", "SystemQuestion", "implicated_lines"]
