"""Non-inferiority against a saved baseline: paired per-question outcomes, bootstrap interval.

The rule is documented in :mod:`indexcheck.commands.ci`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError
from ...inputs.files import loads_json, require_file
from ..kit.stats import bootstrap_mean
from ..kit.verdicts import Verdict
from .config import BLOCK, INSUFFICIENT, PASS, REGRESSIONS_SHOWN, RESAMPLES


@dataclass
class BaselineRow:
    """One non-inferiority comparison (current - baseline) on paired questions."""

    metric: str
    label: str
    n: int
    min_questions: int
    baseline: float | None
    current: float | None
    difference: float | None
    low: float | None
    high: float | None
    margin: float
    verdict: Verdict
    detail: str
    method: str


# -- baseline ----------------------------------------------------------------------------


def load_baseline(path: str | Path) -> dict[str, Any]:
    """A saved ci (or diagnose) JSON result; raises DataFileError when unusable."""
    p = Path(path)
    require_file(  # a FIFO or device is refused unread, saying what it is
        p, "baseline", f"write one with indexcheck ci --json {p} on the accepted index"
    )
    try:
        data = loads_json(p.read_text(encoding="utf-8"), f"baseline {p}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"cannot read baseline {p}: {exc}") from None
    if not isinstance(data, dict):
        raise DataFileError(f"baseline {p} is not a JSON object; pass an indexcheck ci JSON")
    baseline_outcomes(data, str(p))
    data["_path"] = str(p)
    return data


def baseline_outcomes(data: Mapping[str, Any], where: str = "the baseline") -> dict[str, Any]:
    """``{"k", "question_set", "questions": {id: {hit_at_k, reciprocal_rank, expected,
    ann_rank}}}`` from a ci JSON (``per_question``) or a diagnose JSON (``questions`` with
    ``ann_rank`` and ``k``)."""
    # schema 1 wrote ranks 0-based; read every baseline 1-based, as people count
    shift = 1 if data.get("schema_version", 1) < 2 else 0

    def _rank(r: Any) -> int | None:
        return None if r is None else int(r) + shift

    try:
        pq = data.get("per_question")
        if isinstance(pq, dict):
            k = int(pq["k"])
            rows = {
                str(r["id"]): {
                    "hit_at_k": float(r["hit_at_k"]),
                    "reciprocal_rank": float(r["reciprocal_rank"]),
                    "expected": list(r.get("expected") or []),
                    "ann_rank": _rank(r.get("ann_rank")),
                }
                for r in pq["questions"]
            }
            return {"k": k, "question_set": pq.get("question_set"), "questions": rows}
        if isinstance(data.get("questions"), list) and "k" in data and "metrics" in data:
            k = int(data["k"])
            rows = {}
            for r in data["questions"]:
                if not r.get("in_scope", True):
                    continue
                rank = _rank(r.get("ann_rank"))
                rows[str(r["id"])] = {
                    "hit_at_k": 1.0 if rank is not None and rank <= k else 0.0,
                    "reciprocal_rank": 0.0 if rank is None else 1.0 / rank,
                    "expected": [],
                    "ann_rank": rank,
                }
            return {"k": k, "question_set": None, "questions": rows}
    except (KeyError, TypeError, ValueError) as exc:
        raise DataFileError(f"{where} has a malformed per-question result ({exc!r})") from None
    raise DataFileError(
        f"{where} holds no per-question outcomes; pass the JSON of an indexcheck ci run "
        "(--json) or of indexcheck diagnose"
    )


def decide(diff: float | None, low: float | None, n: int, margin: float, n_min: int) -> Verdict:
    """The non-inferiority verdict of the module docstring (rules 1-4, in order)."""
    if n < n_min or diff is None or low is None:
        return INSUFFICIENT
    if diff < -margin:
        return BLOCK
    if low > -margin:
        return PASS
    return INSUFFICIENT


def compare_with_baseline(
    current: Mapping[str, Any],
    base: Mapping[str, Any],
    margins: Mapping[str, float],
    min_questions: int,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Pair questions by id and judge each metric of ``margins`` for non-inferiority.

    Returns ``{"rows", "paired", "unpaired", "changed", "question_set_changed",
    "regressions", "improvements"}``; rows are :class:`BaselineRow` dicts.
    """
    k = int(current["k"])
    cur = {r["id"]: r for r in current["questions"]}
    old = base["questions"]
    changed = [
        i
        for i in cur
        if i in old and old[i]["expected"] and old[i]["expected"] != cur[i]["expected"]
    ]
    paired = [i for i in cur if i in old and i not in changed]
    unpaired = len(set(cur) ^ set(old))
    rows = []
    for metric, margin in margins.items():
        field_ = "hit_at_k" if metric == "hit_at_k" else "reciprocal_rank"
        a = np.asarray([old[i][field_] for i in paired], dtype=np.float64)
        b = np.asarray([cur[i][field_] for i in paired], dtype=np.float64)
        diff, low, high = bootstrap_mean(b - a, seed=seed, resamples=resamples)
        n_min = max(min_questions, math.ceil(1 / margin - 1e-9))
        verdict = decide(diff, low, len(paired), margin, n_min)
        label = f"hit@{k}" if metric == "hit_at_k" else "MRR"
        rows.append(
            asdict(
                BaselineRow(
                    metric=metric,
                    label=label,
                    n=len(paired),
                    min_questions=n_min,
                    baseline=float(a.mean()) if a.size else None,
                    current=float(b.mean()) if b.size else None,
                    difference=diff,
                    low=low,
                    high=high,
                    margin=margin,
                    verdict=verdict,
                    detail=_baseline_detail(verdict, diff, low, high, margin, len(paired), n_min),
                    method=f"paired bootstrap, 95% percentile interval, {resamples} "
                    f"resamples, seed {seed}",
                )
            )
        )
    regressions, improvements = [], 0
    for i in paired:
        before, after = old[i]["reciprocal_rank"], cur[i]["reciprocal_rank"]
        if after < before or cur[i]["hit_at_k"] < old[i]["hit_at_k"]:
            regressions.append(
                {
                    "id": i,
                    "baseline_rank": old[i]["ann_rank"],
                    "current_rank": cur[i]["ann_rank"],
                    "baseline_hit": old[i]["hit_at_k"],
                    "current_hit": cur[i]["hit_at_k"],
                    "label": cur[i]["label"],
                    "loss": before - after,
                }
            )
        elif after > before:
            improvements += 1
    regressions.sort(key=lambda r: (-r["loss"], r["id"]))
    qs_old = base.get("question_set")
    return {
        "rows": rows,
        "paired": len(paired),
        "unpaired": unpaired,
        "changed": changed,
        "question_set_changed": bool(qs_old) and qs_old != current.get("question_set"),
        "regressions": regressions[:REGRESSIONS_SHOWN],
        "regression_count": len(regressions),
        "improvements": improvements,
    }


def _baseline_detail(
    verdict: str,
    diff: float | None,
    low: float | None,
    high: float | None,
    margin: float,
    n: int,
    n_min: int,
) -> str:
    if diff is None or low is None or high is None:
        return f"no paired questions (need {n_min})"
    what = f"difference {diff:+.3f} [{low:+.3f}, {high:+.3f}] on {n} paired questions"
    if n < n_min:
        return f"{what}; need at least {n_min} to decide at margin {margin:g}"
    if verdict == BLOCK:
        proven = "; worse beyond noise" if high < -margin else ""
        return f"{what}: loses more than the margin {margin:g}{proven}"
    if verdict == PASS:
        return f"{what}: non-inferior at margin {margin:g}"
    return f"{what}: the interval reaches below -{margin:g}; add questions or widen the margin"
