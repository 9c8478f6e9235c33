"""Calibration: the judge's agreement with human verdicts on a fixed labelled set.

Labels are JSONL rows: per claim ``{"id": ANSWER_ID, "claim": INDEX (0-based), "verdict": V}``,
or per answer ``{"id": ANSWER_ID, "groundedness": 0..1}``. Reported: Cohen's kappa on claim
verdicts with a percentile bootstrap interval, the confusion matrix (rows human, columns
judge, in :class:`ClaimVerdict` order), and the Pearson correlation of per-answer groundedness.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError
from ...inputs.rowfiles import utf8_error
from .claims import ClaimVerdict
from .result import AnswerResult, AnswerStatus

ORDER = [v.value for v in ClaimVerdict]


def load_labels(path: str | Path) -> tuple[dict[tuple[str, int], str], dict[str, float]]:
    """(claim labels {(answer id, claim index): verdict}, answer labels {answer id:
    groundedness})."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"labels file {p} does not exist; check --labels")
    claims: dict[tuple[str, int], str] = {}
    answers: dict[str, float] = {}
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise utf8_error(p) from None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{p.name} line {lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{where} is not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict) or row.get("id") in (None, ""):
            raise DataFileError(f"{where}: each label needs an 'id' (the answer id)")
        aid = str(row["id"])
        if "claim" in row:
            verdict = str(row.get("verdict", "")).strip().upper()
            index = row["claim"]
            if (
                verdict not in ORDER
                or isinstance(index, bool)
                or not isinstance(index, int)
                or index < 0
            ):
                raise DataFileError(
                    f"{where}: a claim label needs 'claim' (0-based index) and 'verdict' "
                    f"(one of {', '.join(ORDER)})"
                )
            claims[(aid, row["claim"])] = verdict
        else:
            g = row.get("groundedness")
            if isinstance(g, bool) or not isinstance(g, int | float) or not 0 <= g <= 1:
                raise DataFileError(f"{where}: an answer label needs 'groundedness' in [0, 1]")
            answers[aid] = float(g)
    if not claims and not answers:
        raise DataFileError(f"{p} holds no labels")
    return claims, answers


def cohen_kappa(a: np.ndarray, b: np.ndarray, k: int) -> float | None:
    """Cohen's kappa of two int label arrays (n,) over k classes; None when undefined."""
    if a.size == 0:
        return None
    cm = np.zeros((k, k))
    np.add.at(cm, (a, b), 1)
    n = cm.sum()
    po = np.trace(cm) / n
    pe = float((cm.sum(0) * cm.sum(1)).sum() / (n * n))
    if pe >= 1.0:
        return 1.0 if po == 1.0 else None
    return float((po - pe) / (1 - pe))


def calibrate(
    answers: list[AnswerResult],
    claim_labels: dict[tuple[str, int], str],
    answer_labels: dict[str, float],
    seed: int = 0,
    resamples: int = 2000,
) -> dict[str, Any]:
    """Agreement of the final verdicts with the human labels."""
    human: list[int] = []
    judge: list[int] = []
    computed: dict[str, list[int]] = {}
    for a in answers:
        for i, c in enumerate(a.claims):
            label = claim_labels.get((a.id, i))
            if label is not None:
                human.append(ORDER.index(label))
                judge.append(ORDER.index(c.verdict.value))
                computed.setdefault(a.id, []).append(int(label == ClaimVerdict.SUPPORTED))
    h, j = np.asarray(human, dtype=np.int64), np.asarray(judge, dtype=np.int64)
    cm = np.zeros((len(ORDER), len(ORDER)), dtype=np.int64)
    np.add.at(cm, (h, j), 1)
    kappa = cohen_kappa(h, j, len(ORDER))
    low = high = None
    if h.size > 1 and kappa is not None:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, h.size, size=(resamples, h.size))
        boots = [cohen_kappa(h[r], j[r], len(ORDER)) for r in idx]
        vals = np.asarray([b for b in boots if b is not None])
        if vals.size:
            low, high = float(np.quantile(vals, 0.025)), float(np.quantile(vals, 0.975))
    truth = dict(answer_labels)
    for aid, marks in computed.items():
        truth.setdefault(aid, sum(marks) / len(marks))
    pairs = [
        (truth[a.id], a.groundedness)
        for a in answers
        if a.id in truth and a.status is AnswerStatus.JUDGED and a.groundedness is not None
    ]
    corr = None
    if len(pairs) > 2:
        x = np.asarray(pairs, dtype=np.float64)
        if x[:, 0].std() > 0 and x[:, 1].std() > 0:
            corr = float(np.corrcoef(x[:, 0], x[:, 1])[0, 1])
    return {
        "claims_labelled": int(h.size),
        "kappa": {"value": kappa, "low": low, "high": high},
        "agreement": None if h.size == 0 else float((h == j).mean()),
        "confusion": {"labels": ORDER, "rows_human_cols_judge": cm.tolist()},
        "groundedness_correlation": {"pearson": corr, "answers": len(pairs)},
        "missing": sorted(
            f"{a}/{i}" for a, i in claim_labels if not any(x.id == a for x in answers)
        ),
    }
