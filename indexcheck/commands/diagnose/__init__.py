"""diagnose: trace each question's expected chunk through every retrieval stage and name
the first stage that lost it.

In-scope labels, in stage order: ``MISALIGNED`` (its stored vector fails the re-embedding
check), ``NOT_RETRIEVED`` (not in the exact top ``fetch``), ``ANN_MISS`` (in the exact top
``fetch``, absent from the approximate results), ``RANKED_OUT`` (retrieved, ranked below k),
``BELOW_THRESHOLD`` (in the top k, its score fails the threshold); with ``answers`` also
``CONTEXT_ASSEMBLY_LOSS``, ``GENERATION_REFUSED``, ``UNGROUNDED`` (:mod:`.generation_stage`);
then ``OK``. Out of scope: ``REFUSED_OK`` (nothing passed the threshold),
``REFUSED_BY_CONTENT`` (a refusal chunk won), ``ANSWERED_OUT_OF_SCOPE`` (another chunk
passed). Labels name a stage, never a cause. Metrics are computed on the exact and on the
approximate ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import InputError
from ...filters import canonical
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...stores.base import VectorStore
from ..check_index import CheckIndexSettings, check_index
from ..kit.exact import exact_topk, family_of
from ..kit.id_pairing import refuse_absent_expected_ids
from ..kit.retrieval import refusal_ids, retrieve
from ..kit.verdicts import (
    FAILING_LABELS,
    FILTER_LABELS,
    IN_SCOPE_LABELS,
    OUT_OF_SCOPE_LABELS,
    Label,
)
from ..probe_scale.setup import ScoreSetup, score_setup
from ..sweep_threshold.filters import question_filters
from .filters import filtered_out, filtered_run, missing_rule, short_results
from .generation import label_generation
from .metrics import first_copies, retrieval_metrics
from .result import DiagnoseResult as DiagnoseResult
from .result import QuestionDiagnosis as QuestionDiagnosis
from .settings import DiagnoseSettings as DiagnoseSettings

#: diagnose's whole setup, the same for the api (so the CLI) and ci: the store's scale,
#: the threshold on the backend's scale (converted from a cosine) and the refusal chunks
prepare = score_setup

EXAMPLES = 5


def misaligned_detail(c: Any, finding: Any = None) -> str:
    """Why a MISALIGNED question's chunk fails, in check-index's words: whose vector it
    holds (and the shift finding it belongs to), else its status."""
    if c.holds_vector_of:
        out = f"stored vector of '{c.id}' holds the vector of '{c.holds_vector_of}'"
        if c.offset is not None:
            out += f" (offset {c.offset:+d})"
        if finding is not None and "start_id" in finding.details:
            out += (
                f": the positional shift check-index reports from "
                f"'{finding.details['start_id']}' on"
            )
        return out
    if getattr(c, "vector_held_by", None):
        return (
            f"stored vector of '{c.id}' is another chunk's; its own vector is stored under "
            f"'{c.vector_held_by}'"
        )
    return f"stored vector of '{c.id}' is {c.status}"


def exact_ranking(
    store: VectorStore, queries: np.ndarray, depth: int
) -> tuple[np.ndarray, np.ndarray, str]:
    """Exact top-``depth`` (D, I, source): the backend's exact mode, or streamed locally.

    Local exact scores are in the score family (cos, dot, or squared L2), which ranks like
    the backend's score; only ranks are compared with the backend's own results.
    """
    if store.has_exact:
        D, I = store.exact_query(queries, depth)
        return np.asarray(D, dtype=np.float32), I, "backend_exact"
    family = family_of(store.info().score)
    blocks = ((b.ids, b.vectors) for b in store.iter_vectors(4096))
    D, I = exact_topk(blocks, queries, depth, family)
    return D, I, "local_exact"


def diagnose(
    settings: DiagnoseSettings,
    store: VectorStore,
    embedder: Embedder,
    questions: Sequence[Question],
    corpus: Corpus | None,
    setup: ScoreSetup | None = None,
    progress: Callable[[str], None] | None = None,
) -> DiagnoseResult:
    """Label every question. ``setup`` (:func:`prepare`) gives the threshold on the
    backend's scale, the direction and the refusal chunks; None: ``settings.threshold`` is
    on the backend's scale and ``settings.higher_is_better`` (None: higher) its direction.
    ``settings.answers`` are loaded rows and ``settings.filter`` (AND-ed with each
    question's own, see diagnose_filters) a parsed filter here."""
    if setup is None:
        hib = True if settings.higher_is_better is None else settings.higher_is_better
        marked = list(settings.refusal_marked or ())
        setup = ScoreSetup(hib, settings.to_cosine, None, settings.threshold, marked)
    k, fetch, min_cosine, seed = settings.k, settings.fetch, settings.min_cosine, settings.seed
    threshold, to_cosine = setup.threshold, setup.to_cosine
    answers, judged, filter = settings.answers, settings.judged, settings.filter
    answer_refusal_pattern = settings.answer_refusal_pattern
    say = progress or (lambda _m: None)
    if k < 1 or fetch < k:
        raise InputError(f"need 1 <= -k ({k}) <= --fetch ({fetch})")
    if not questions:
        raise InputError("the question set is empty")
    refuse_absent_expected_ids(store, questions, corpus)  # before any embedding
    sign = 1.0 if setup.higher_is_better else -1.0

    def both(x: float) -> dict[str, float | None]:
        cos = None
        if to_cosine is not None and np.isfinite(x):
            cos = float(to_cosine(np.asarray([x], dtype=np.float64))[0])
        return {"backend": float(x), "cosine": cos}

    def passes(x: float) -> bool:
        return threshold is None or sign * x >= sign * threshold

    say(f"retrieving {len(questions)} questions (fetch {fetch})")
    filters = question_filters(questions, filter)
    run = None if filters is None else filtered_run(store, embedder, questions, fetch, filters)
    missing = None
    if run is None:
        ann = retrieve(store, embedder, questions, fetch)
        say("computing the exact ranking")
        _, exact_I, source = exact_ranking(store, ann.vectors, fetch)
    else:
        ann, exact_I, source = run.ann, run.exact_I, "local_exact_filtered"
        missing = missing_rule(store)
    # a store holding one chunk id twice returns it twice; it counts once, at its first
    # rank, in the labels and the metrics alike (as compare-ann counts it)
    ann.I, ann_d = first_copies(ann.I, ann.D)
    ann.D = ann.D if ann_d is None else ann_d
    exact_I, _ = first_copies(exact_I, None)

    expected_ids = sorted({e for q in questions if q.in_scope for e in q.expected})
    alignment: dict[str, Any] = {}
    story: dict[str, Any] = {}
    if expected_ids:
        say(f"re-embedding {len(expected_ids)} expected chunks")
        these = CheckIndexSettings(only=expected_ids, min_cosine=min_cosine)
        check = check_index(these, store, embedder, corpus)
        alignment = {c.id: c for c in check.chunks}
        story = {cid: f for f in check.findings if f.kind == "shift" for cid in f.chunk_ids}
    refusals = refusal_ids(
        [c for c in ann.I.ravel() if c is not None], settings.refusal_pattern, setup.refusal_marked
    )

    out: list[QuestionDiagnosis] = []
    for row, q in enumerate(questions):
        ann_ids = [c for c in ann.I[row] if c is not None]
        kept = [
            (c, float(ann.D[row, j]))
            for j, c in enumerate(ann.I[row])
            if c is not None and passes(float(ann.D[row, j]))
        ][:k]
        top = kept[0][0] if kept else None
        d = QuestionDiagnosis(q.id, q.in_scope, q.topic, Label.OK, top_id=top)
        if run is not None and run.nodes[row] is not None:
            d.filter = canonical(run.nodes[row])
        if not q.in_scope:
            if not kept:
                d.label = Label.REFUSED_OK
            elif top in refusals:
                d.label = Label.REFUSED_BY_CONTENT
            else:
                d.label = Label.ANSWERED_OUT_OF_SCOPE
                d.score = both(kept[0][1])
                d.detail = (
                    f"'{top}' passed the threshold"
                    if threshold is not None
                    else f"'{top}' came first and no --threshold was set to refuse it"
                )
            out.append(d)
            continue
        exact_ids = [c for c in exact_I[row] if c is not None]
        # 0-based positions here; the result holds 1-based ranks, as people count
        er = next((r for r, c in enumerate(exact_ids) if c in q.expected), None)
        ar = next((r for r, c in enumerate(ann_ids) if c in q.expected), None)
        d.exact_rank = None if er is None else er + 1
        d.ann_rank = None if ar is None else ar + 1
        d.expected_id = (
            exact_ids[er] if er is not None else (ann_ids[ar] if ar is not None else q.expected[0])
        )
        bad = [alignment[e] for e in q.expected if e in alignment and alignment[e].status != "ok"]
        out_why = None if run is None or bad else filtered_out(run, row, q, missing)
        short_why = None if run is None else short_results(run, row, len(ann_ids), k)
        if out_why is not None:
            d.label, d.detail = Label.FILTERED_OUT, out_why
        elif bad:
            d.label = Label.MISALIGNED
            d.expected_id = bad[0].id
            d.holds_vector_of = bad[0].holds_vector_of
            d.cosine_to_own_text = bad[0].cosine
            d.detail = misaligned_detail(bad[0], story.get(bad[0].id))
        elif er is None:
            d.label = Label.NOT_RETRIEVED
            d.detail = f"expected chunk not in the exact top {fetch}"
        elif short_why is not None and (ar is None or ar >= k):
            d.label, d.detail = Label.SHORT_RESULTS, short_why
        elif ar is None:
            d.label = Label.ANN_MISS
            d.detail = f"exact rank {d.exact_rank}, absent from the backend's top {fetch}"
        elif ar >= k:
            d.label = Label.RANKED_OUT
            d.score = both(float(ann.D[row, ar]))
            d.detail = f"ranked {d.ann_rank} by the backend, cut by k={k}"
        else:
            d.score = both(float(ann.D[row, ar]))
            if not passes(float(ann.D[row, ar])):
                d.label = Label.BELOW_THRESHOLD
                d.detail = f"rank {d.ann_rank}, score under the threshold"
        out.append(d)

    if answers is not None:  # past retrieval: what the model received and did with it
        import re

        texts = dict(zip(corpus.ids, corpus.texts, strict=True)) if corpus is not None else {}
        label_generation(
            out,
            {a.id: a for a in answers},
            re.compile(answer_refusal_pattern),
            None if judged is None else {j.id: j for j in judged},
            texts,
        )
    shown = [x for x in (*IN_SCOPE_LABELS, *OUT_OF_SCOPE_LABELS) if run or x not in FILTER_LABELS]
    counts: dict[str, int] = {label: 0 for label in shown}
    examples: dict[str, list[str]] = {label: [] for label in counts}
    for d in out:
        counts[d.label] += 1
        if len(examples[d.label]) < EXAMPLES:
            examples[d.label].append(d.id)
    exact_rank_lists = {
        q.id: [c for c in exact_I[row] if c is not None] for row, q in enumerate(questions)
    }
    ann_rank_lists = {
        q.id: [c for c in ann.I[row] if c is not None] for row, q in enumerate(questions)
    }
    metrics = {
        "exact": retrieval_metrics(questions, exact_rank_lists, k, seed),
        "ann": retrieval_metrics(questions, ann_rank_lists, k, seed),
    }
    failing = sum(counts.get(x, 0) for x in FAILING_LABELS)
    checks = None
    if answers:  # no model: the answers' URLs, references and numbers, context then chunks
        from ..judge.answer_checks import check_answers

        checks = check_answers(answers, corpus).block()
    return DiagnoseResult(
        ok=failing == 0,
        k=k,
        fetch=fetch,
        threshold=None if threshold is None else both(threshold),
        counts=counts,
        examples=examples,
        questions=out,
        metrics=metrics,
        ground_truth=source,
        answer_checks=checks,
    )
