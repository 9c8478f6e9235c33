"""sweep-threshold: calibrate a refusal threshold on real questions, or prove none exists.

The application retrieves ``fetch`` results, drops those under the threshold, keeps ``k``,
and refuses when nothing is left. For every distinct observed score t (never a coarse grid)
this module counts, on the backend's own scale:

- in-scope recall: the best expected chunk is in the top k and passes t;
- out-of-scope handled: the top result fails t (refusal), or the top result is a refusal
  chunk ("topic not covered"), which handles the question by content;
- false refusals (in-scope, nothing passes t) and false answers (out-of-scope, a non-refusal
  chunk passes t);

each rate with a Wilson 95% interval. Every score is reported on both the backend's scale and
cosine, through the probed score transform.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import InputError
from ...filters import canonical
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...stores.base import VectorStore
from ..kit.id_pairing import refuse_absent_expected_ids
from ..kit.retrieval import refusal_ids, retrieve
from ..kit.stats import wilson
from ..probe_scale.setup import ScoreRequest, score_setup
from .filters import filtered_retrieve, per_filter, question_filters
from .result import QuestionRecord as QuestionRecord
from .result import Score as Score
from .result import SweepResult as SweepResult
from .settings import SweepThresholdSettings as SweepThresholdSettings

#: sweep-threshold's whole setup, the same for the api (so the CLI) and --observed: the
#: store's scale (or the direction given, with no store) and the refusal chunks
prepare = score_setup


def _both(x: float, to_cos: Callable[[np.ndarray], np.ndarray] | None) -> Score:
    cos = None
    if to_cos is not None and np.isfinite(x):
        cos = float(to_cos(np.asarray([x], dtype=np.float64))[0])
    return {"backend": float(x), "cosine": cos}


@dataclass(frozen=True)
class SweepScale:
    """The scale a sweep reports on: its direction, the backend -> cosine converter (None:
    no cosine column) and the summary the result carries (None: the direction only)."""

    higher_is_better: bool
    to_cosine: Callable[[np.ndarray], np.ndarray] | None
    summary: dict[str, Any] | None


def sweep_threshold(
    settings: SweepThresholdSettings,
    store: VectorStore,
    embedder: Embedder,
    questions: Sequence[Question],
    corpus: Corpus | None = None,
    progress: Callable[[str], None] | None = None,
) -> SweepResult:
    """Sweep every observed score as a threshold, ``questions`` retrieved from the opened
    ``store`` with ``embedder``.

    The scale's direction and converter are the settings' ``higher_is_better`` and
    ``to_cosine``, or probed (read from the cache) when the direction is None
    (:func:`prepare`); ``scale`` then defaults to its summary. ``refusal_marked`` None: the
    refusal chunks ``corpus`` marks (``refusal`` column). ``rule``: ``recall`` (the
    strictest threshold keeping in-scope recall >= ``recall_target``) or ``youden`` (max
    recall + rejection - 1). Each question is searched with its own filter AND the
    settings' ``filter`` (one for every question), when given.
    """
    s = settings
    asked = ScoreRequest(
        higher_is_better=s.higher_is_better, to_cosine=s.to_cosine, refusal_marked=s.refusal_marked
    )
    setup = prepare(store, corpus, asked, progress=progress)
    to_cosine = setup.to_cosine
    if progress is not None:
        progress(f"retrieving {len(questions)} questions")
    k, fetch = s.k, s.fetch
    if k < 1 or fetch < k:
        raise InputError(f"need 1 <= -k ({k}) <= --fetch ({fetch})")
    if s.rule not in ("recall", "youden"):
        raise InputError(f"--rule must be recall or youden, not {s.rule}")
    if not questions:
        raise InputError("the question set is empty")
    refuse_absent_expected_ids(store, questions)  # before any embedding
    filters = question_filters(questions, s.filter)
    if filters is None:
        got = retrieve(store, embedder, questions, fetch)
    else:
        got = filtered_retrieve(store, embedder, questions, fetch, filters)
    keys = [None if f is None else canonical(f) for f in (filters or [None] * len(questions))]
    refusals = refusal_ids(
        [c for c in got.I.ravel() if c is not None], s.refusal_pattern, setup.refusal_marked
    )
    records: list[QuestionRecord] = []
    for row, q in enumerate(questions):
        top_id = got.I[row, 0]
        top = float(got.D[row, 0]) if top_id is not None else float("nan")
        rec = QuestionRecord(
            id=q.id,
            in_scope=q.in_scope,
            topic=q.topic,
            top_id=top_id,
            top_score=_both(top, to_cosine),
            top_is_refusal=top_id in refusals,
            filter=keys[row],
        )
        if q.in_scope:
            rank = got.rank_of(row, q.expected)
            if rank is not None:
                rec.expected_id = got.I[row, rank]
                rec.expected_rank = rank + 1  # 1-based, as people count
                rec.expected_score = _both(float(got.D[row, rank]), to_cosine)
        records.append(rec)
    summary = setup.scale if s.scale is None else s.scale
    scale = SweepScale(setup.higher_is_better, to_cosine, summary)
    return sweep_records(
        records, s, scale, fetch=fetch, filter_keys=None if filters is None else keys
    )


def sweep_records(
    records: Sequence[QuestionRecord],
    settings: SweepThresholdSettings,
    scale: SweepScale,
    *,
    fetch: int,
    filter_keys: list[str | None] | None = None,
) -> SweepResult:
    """The sweep over per-question records already retrieved (by :func:`sweep_threshold`
    from the store, or observed in production traces: :mod:`.observed`), on ``scale``; the
    settings give ``k``, ``rule`` and ``recall_target``."""
    k, rule, recall_target = settings.k, settings.rule, settings.recall_target
    higher_is_better, to_cosine = scale.higher_is_better, scale.to_cosine
    records = list(records)
    sign = 1.0 if higher_is_better else -1.0

    def key(x: float | None) -> float:
        """Direction-free key: larger means more similar on every backend."""
        return sign * float(x) if x is not None else -np.inf

    ins = [r for r in records if r.in_scope]
    oos = [r for r in records if not r.in_scope]
    exp_key = {
        r.id: key(r.expected_score["backend"] if r.expected_score else None)
        for r in ins
        if r.expected_rank is not None and r.expected_rank <= k
    }
    top_key = {r.id: key(r.top_score["backend"]) for r in records if r.top_id is not None}
    candidates = sorted(set(exp_key.values()) | set(top_key.values()))

    def row_for(t: float) -> dict[str, Any]:
        recall = sum(1 for r in ins if r.id in exp_key and exp_key[r.id] >= t)
        refused = {r.id for r in records if top_key.get(r.id, -np.inf) < t}
        handled = sum(1 for r in oos if r.id in refused or r.top_is_refusal)
        false_answers = sum(1 for r in oos if r.id not in refused and not r.top_is_refusal)
        false_refusals = sum(1 for r in ins if r.id in refused)
        rec_rate, rej_rate = wilson(recall, len(ins)), wilson(handled, len(oos))
        backend = t if higher_is_better else -t
        return {
            "threshold": _both(backend, to_cosine),
            "in_scope_recall": rec_rate.as_dict(),
            "out_of_scope_rejection": rej_rate.as_dict(),
            "false_refusals": false_refusals,
            "false_answers": false_answers,
            "youden_j": (rec_rate.value or 0.0) + (rej_rate.value or 0.0) - 1.0,
        }

    table = [row_for(t) for t in candidates]
    best: dict[str, Any] | None = None
    if rule == "recall":
        ok_rows = [r for r in table if (r["in_scope_recall"]["value"] or 0) >= recall_target]
        best = ok_rows[-1] if ok_rows else None
    elif table:
        top_j = max(r["youden_j"] for r in table)
        best = [r for r in table if r["youden_j"] == top_j][-1]

    oos_open = [r for r in oos if r.top_id is not None and not r.top_is_refusal]
    min_in = min(exp_key.values()) if exp_key else None
    max_out = max((top_key[r.id] for r in oos_open), default=None)
    separable: bool | None = None
    overlap: dict[str, list[str]] = {"in_scope": [], "out_of_scope": []}
    if min_in is not None and max_out is not None:
        separable = min_in > max_out
        overlap["in_scope"] = sorted(i for i, v in exp_key.items() if v <= max_out)
        overlap["out_of_scope"] = sorted(r.id for r in oos_open if top_key[r.id] >= min_in)

    def unkey(v: float | None) -> Score | None:
        if v is None:
            return None
        return _both(v if higher_is_better else -v, to_cosine)

    not_retrieved = [r.id for r in ins if r.id not in exp_key]
    by_content = [r.id for r in oos if r.top_is_refusal]
    ok = best is not None and separable is not False
    verdict = _verdict(
        best, separable, overlap, recall_target, rule, not_retrieved, len(ins), len(oos)
    )
    return SweepResult(
        ok=ok,
        k=k,
        fetch=fetch,
        in_scope=len(ins),
        out_of_scope=len(oos),
        scale=scale.summary or {"higher_is_better": higher_is_better},
        rule=rule,
        recall_target=recall_target,
        min_in_scope_best=unkey(min_in),
        max_out_of_scope_top=unkey(max_out),
        separable=separable,
        recommended_threshold=best["threshold"] if best else None,
        recommended_row=best,
        overlap=overlap,
        not_retrieved=not_retrieved,
        handled_by_content=by_content,
        table=table,
        questions=records,
        verdict=verdict,
        by_filter=None
        if filter_keys is None
        else per_filter(records, filter_keys, exp_key, top_key, unkey),
    )


def _verdict(
    best: dict[str, Any] | None,
    separable: bool | None,
    overlap: dict[str, list[str]],
    target: float,
    rule: str,
    not_retrieved: list[str],
    n_in: int,
    n_out: int = 0,
) -> str:
    parts = []
    if best is None:
        parts.append(
            f"no threshold keeps in-scope recall at {target:g}: {len(not_retrieved)} of {n_in} "
            "in-scope questions never get their expected chunk into the top k"
        )
    else:
        t = best["threshold"]
        cos = "" if t["cosine"] is None else f" (cosine {t['cosine']:.4f})"
        rec = best["in_scope_recall"]
        parts.append(
            f"recommended threshold {t['backend']:.4f} on the backend's scale{cos} by the "
            f"{rule} rule: in-scope recall {rec['k']}/{rec['n']}"
        )
    if separable is False:
        parts.append(
            f"the populations overlap: no threshold separates them ({len(overlap['in_scope'])} "
            f"in-scope and {len(overlap['out_of_scope'])} out-of-scope questions in the overlap); "
            "handle out-of-scope questions by content (refusal chunks), not by a number"
        )
    elif separable is True:
        parts.append("the in-scope and out-of-scope populations separate")
    else:
        parts.append(_why_unknown(n_in, n_out, len(not_retrieved)))
    return "; ".join(parts)


def _why_unknown(n_in: int, n_out: int, n_not_retrieved: int) -> str:
    """Why separability could not be decided: one of the two score populations is empty."""
    if n_in == 0 or n_out == 0:
        return "separability unknown: the set needs both in-scope and out-of-scope questions"
    if n_not_retrieved == n_in:
        return (
            f"separability unknown: none of the {n_in} in-scope questions gets its expected "
            "chunk into the top k, so there is no in-scope score to compare with the "
            "out-of-scope ones; find out why they are not retrieved (diagnose) first"
        )
    return (
        f"no separation needed: every one of the {n_out} out-of-scope questions is handled "
        "by a refusal chunk or gets no result, so no out-of-scope score competes with the "
        "in-scope ones"
    )


__all__ = [
    "QuestionRecord",
    "Score",
    "SweepResult",
    "SweepScale",
    "SweepThresholdSettings",
    "prepare",
    "sweep_records",
    "sweep_threshold",
]
