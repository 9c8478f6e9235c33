"""ci: run each configured check and gate what it measured: one function per check,
taking the check's config table and returning its gate rows (diagnose also the
per-question outcomes a baseline is compared on)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from ...embedders.base import Embedder
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...stores.base import VectorStore
from ..kit.verdicts import FAILING_LABELS
from .config import (
    ANN_RATES,
    BLOCK,
    INSUFFICIENT,
    PASS,
    RANK_METRICS,
    CheckIndexConfig,
    CiConfig,
    CompareAnnConfig,
    DiagnoseConfig,
    ProbeScaleConfig,
)
from .gates import GateRow, judge


def questions_fingerprint(questions: Sequence[Question]) -> str:
    """sha256 (16 hex) over (id, question, expected, in_scope) in file order."""
    rows = [[q.id, q.question, q.expected, q.in_scope] for q in questions]
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()[:16]


_Timed = Callable[..., Any]


def _run_check_index(
    config: CiConfig,
    c: CheckIndexConfig,
    store: VectorStore,
    embedder: Embedder | None,
    corpus: Corpus | None,
    timed: _Timed,
) -> list[GateRow]:
    from ..check_index import CheckIndexSettings, check_index

    assert embedder is not None
    size = len(corpus) if corpus is not None else store.info().count
    # a sample as large as the corpus is the corpus: check every chunk (and list orphans)
    sample = None if c.sample is None or c.sample >= size else c.sample
    res = timed(
        "check-index",
        lambda: check_index(
            CheckIndexSettings(sample=sample, seed=config.seed, min_cosine=c.min_cosine),
            store,
            embedder,
            corpus,
        ),
    )
    values = {
        "min_cosine": res.min_cosine,
        "median_cosine": res.median_cosine,
        "below_threshold": res.below_threshold,
        "error_findings": sum(1 for f in res.findings if f.severity == "error"),
        "checked": res.checked,
    }
    rows = [judge("check-index", lim, values[lim.name]) for lim in c.limits]
    kinds = sorted({f.kind for f in res.findings if f.severity == "error"})
    for row in rows:
        if row.verdict == BLOCK and kinds:
            row.detail += f" (findings: {', '.join(kinds)})"
    return rows


def _run_probe_scale(
    config: CiConfig, c: ProbeScaleConfig, store: VectorStore, timed: _Timed
) -> tuple[list[GateRow], Any]:
    from ..probe_scale import probe_scale

    res = timed("probe-scale", lambda: probe_scale(store, c.probes, c.k, config.seed))
    row = GateRow("probe-scale", "transform", res.transform, c.expect or "a known formula",
                  "==" if c.expect else "fits", PASS, res.message)  # fmt: skip
    if not res.ok:
        row.verdict = BLOCK
    elif res.source == "operator_assumed":  # pgvector, no ANN index: the query decides
        row.verdict = INSUFFICIENT
        row.detail = (
            f"ASSUMED: {res.transform} is the operator indexcheck chose, not a scale the "
            "store has; name your query's operator with &operator= (or &metric=) in the "
            "store spec"
        )
    elif c.expect is not None and c.expect != res.transform:
        if c.expect in res.equivalent:
            row.detail = f"declared {c.expect} fits as well as {res.transform}; {res.message}"
        else:
            row.verdict = BLOCK
            row.detail = f"declared {c.expect} but the store's scores are {res.transform}"
    return [row], res


def _run_compare_ann(
    config: CiConfig,
    c: CompareAnnConfig,
    store: VectorStore,
    timed: _Timed,
    say: Callable[[str], None],
) -> list[GateRow]:
    from ..compare_ann import CompareAnnSettings, compare_ann, sample_queries

    def go() -> Any:
        qs = sample_queries(store, c.queries, config.seed, c.noise, c.cache_dir)
        filters = None if c.filter is None else [c.filter] * len(qs.labels)
        return compare_ann(
            CompareAnnSettings(k=c.k, fetch=c.fetch, target=c.target, seed=config.seed,
                               cache_dir=c.cache_dir, filters=filters),
            store, qs, say,
        )  # fmt: skip

    res = timed("compare-ann", go)
    rows = []
    for lim in c.limits:
        if lim.name == "recommended_fetch":
            rows.append(judge("compare-ann", lim, res.recommended_fetch))
            continue
        fr = res.row(lim.at)
        n = fr.queries if lim.name in ANN_RATES else None
        ends = getattr(fr, f"{lim.name}_interval", None)
        rows.append(
            judge("compare-ann", lim, getattr(fr, lim.name), n, config.min_questions,
                  None if n is None or not ends else (ends[0], ends[1]))
        )  # fmt: skip
    return rows


def _run_diagnose(
    config: CiConfig,
    store: VectorStore,
    embedder: Embedder,
    questions: list[Question],
    corpus: Corpus | None,
    scale: Any,
    timed: _Timed,
    say: Callable[[str], None],
) -> tuple[list[GateRow], dict[str, Any]]:
    from ..diagnose import DiagnoseSettings, diagnose, prepare
    from ..probe_scale.setup import ScoreRequest

    c: DiagnoseConfig | None = config.diagnose
    assert c is not None
    asked = ScoreRequest(threshold=c.threshold, threshold_scale=c.threshold_scale)
    setup = prepare(store, corpus, asked, scale=scale, progress=say)
    settings = DiagnoseSettings(
        k=c.k, fetch=c.fetch, min_cosine=c.min_cosine, refusal_pattern=c.refusal_pattern or None,
        filter=c.filter, seed=config.seed,
    )  # fmt: skip
    res = timed(
        "diagnose", lambda: diagnose(settings, store, embedder, questions, corpus, setup, say)
    )
    rows = []
    for lim in c.limits:
        if lim.name in RANK_METRICS:
            m = getattr(res.metrics["exact" if lim.exact else "ann"], lim.name)
            rows.append(
                judge("diagnose", lim, m.value, m.observed, config.min_questions, (m.low, m.high))
            )
        elif lim.name == "failing":
            rows.append(judge("diagnose", lim, sum(res.counts.get(x, 0) for x in FAILING_LABELS)))
        else:
            rows.append(judge("diagnose", lim, res.counts.get(lim.name.upper(), 0)))
    expected = {q.id: q.expected for q in questions}
    outcomes = []
    for d in res.questions:
        if not d.in_scope:
            continue
        r = d.ann_rank
        outcomes.append(
            {
                "id": d.id,
                "expected": expected[d.id],
                "label": d.label,
                "exact_rank": d.exact_rank,
                "ann_rank": r,
                "hit_at_k": 1 if r is not None and r <= c.k else 0,
                "reciprocal_rank": 0.0 if r is None else 1.0 / r,
            }
        )
    per_question = {
        "k": c.k,
        "fetch": c.fetch,
        "ranking": "ann",
        "questions_file": str(c.questions),
        "question_set": questions_fingerprint(questions),
        "questions": outcomes,
    }
    return rows, per_question
