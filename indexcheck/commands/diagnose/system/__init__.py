"""diagnose --system: run the user's own pipeline ``runs`` times per question, replay each
failing question under the chosen interventions beside a control, and keep one stage label
per question.

A run is refused or answered (the app's ``refused``, else the refusal pattern); a question
fails when any run refused it in scope. An arm (the control or an intervention) recovers it
when one of its ``runs`` answers; a flaky question (outcomes differ, or the control recovers:
``FLAKY``) is not replayed. Otherwise, in the stage order of :class:`~.verdicts.Label`, the
recovering intervention names the label (``realigned`` ``MISALIGNED``, ``no-filter``
``NOT_RETRIEVED``, ``exact``/``fetch`` ``ANN_MISS``, ``threshold`` ``BELOW_THRESHOLD``,
``top-k`` ``CONTEXT_ASSEMBLY_LOSS``); still refused with the gold context is
``GENERATION_REFUSED``; an expected chunk check-index flags is ``MISALIGNED``; else what was
observed: the chunk absent from the candidates (``NOT_RETRIEVED``), among them but not sent
(``CONTEXT_ASSEMBLY_LOSS``), or sent (``GENERATION_REFUSED``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ....embedders.base import Embedder
from ....errors import InputError
from ....inputs.corpus import Corpus
from ....inputs.questions import Question
from ....stores.base import VectorStore
from ...kit.stats import wilson
from ...kit.verdicts import FAILING_LABELS, Label
from ..settings import DiagnoseSettings
from .hook import Candidate, Generation, System
from .interventions import NEEDS_STORE, Intervention
from .result import SystemDiagnoseResult, SystemQuestion, implicated_lines
from .setup import prepare_system
from .staged_cache import StagedCache

_LABEL_OF = {
    "realigned": Label.MISALIGNED,
    "no-filter": Label.NOT_RETRIEVED,
    "exact": Label.ANN_MISS,
    "fetch": Label.ANN_MISS,
    "threshold": Label.BELOW_THRESHOLD,
    "top-k": Label.CONTEXT_ASSEMBLY_LOSS,
}


class _Runner:
    def __init__(
        self,
        system: System,
        cache: StagedCache,
        fingerprint: str,
        depth: int,
        runs: int,
        store: VectorStore | None,
        embedder: Embedder | None,
        texts: dict[str, str],
    ) -> None:
        self.system, self.cache, self.fingerprint = system, cache, fingerprint
        self.depth, self.runs, self.store, self.embedder = depth, runs, store, embedder
        self.texts = texts
        self.realigned: tuple[list[str], np.ndarray, set[str]] | None = None

    def retrieve(self, q: Question, depth: int, filter: Any = None) -> list[Candidate]:
        key = StagedCache.retrieval_key(q.question, self.fingerprint, depth, filter)
        hit = self.cache.retrieval(key)
        if hit is None:
            hit = self.system.retrieve(q.question, depth, filter)
            self.cache.put_retrieval(key, hit)
        for c in hit:
            self.texts.setdefault(c.id, c.text)
        return hit

    def generate(self, q: Question, context: list[Candidate], arm: str) -> list[bool]:
        out = []
        for r in range(self.runs):
            key = StagedCache.generation_key(
                q.question, context, self.system.model_id, f"{arm}:{r}"
            )
            g = self.cache.generation(key)
            if g is None:
                if self.system.staged:
                    g = self.system.generate(q.question, context)
                else:
                    g, _ = self.system.answer(q.question)
                self.cache.put_generation(key, g)
            out.append(g.refused)
        return out

    def answer_only(self, q: Question, arm: str) -> tuple[list[bool], list[Candidate]]:
        out: list[bool] = []
        seen: list[Candidate] = []
        for r in range(self.runs):
            model = f"{self.system.model_id}@{self.fingerprint}"  # answer() retrieves too
            key = StagedCache.generation_key(q.question, [], model, f"{arm}:{r}")
            g: Generation | None = self.cache.generation(key)
            if g is None:
                g, _ = self.system.answer(q.question)
                self.cache.put_generation(key, g)
            out.append(g.refused)
            seen = seen or [Candidate(**c) for c in g.contexts]
        return out, seen

    def exact(self, q: Question, swap: dict[str, np.ndarray] | None = None) -> list[Candidate]:
        """Top-``depth`` by exact search over the store, scores on the backend's own scale
        (the app's threshold reads them): the backend's exact mode, or streamed here with
        the vectors of ``swap`` replaced; texts from the chunks or the store."""
        from ....embedders import for_queries
        from ....scales.transforms import transform_of
        from ...kit.exact import exact_topk, family_of

        store, embedder = self.store, self.embedder
        assert store is not None and embedder is not None
        qv = for_queries(embedder).embed([q.question])
        if not swap and store.has_exact:
            D, ids = store.exact_query(qv, self.depth)
            scores = np.asarray(D[0], dtype=np.float64)
        else:
            score = store.info().score
            family = family_of(score)

            def blocks() -> Any:
                for b in store.iter_vectors(4096):
                    vecs = np.array(b.vectors, dtype=np.float32, copy=True)
                    for i, cid in enumerate(b.ids):
                        if swap and cid in swap:
                            vecs[i] = swap[cid]
                        text = b.texts[i] if b.texts is not None else None
                        if text is not None:
                            self.texts.setdefault(cid, text)
                    yield b.ids, vecs

            D, ids = exact_topk(blocks(), qv, self.depth, family)
            x = np.asarray(D[0], dtype=np.float64)  # the family's value; l2 comes squared
            scores = transform_of(score).apply(np.sqrt(np.maximum(x, 0)) if family == "l2" else x)
        return [
            Candidate(str(c), self.texts.get(str(c), ""), float(scores[j]))
            for j, c in enumerate(ids[0])
            if c is not None
        ]


def _prepare_realigned(
    run: _Runner, corpus: Corpus | None, expected: Sequence[str], min_cosine: float
) -> dict[str, np.ndarray]:
    """Fresh embeddings of exactly the expected chunks check-index flags."""
    from ...check_index import CheckIndexSettings, check_index

    assert run.store is not None and run.embedder is not None
    these = CheckIndexSettings(only=list(expected), min_cosine=min_cosine)
    check = check_index(these, run.store, run.embedder, corpus)
    flagged = [c.id for c in check.chunks if c.status != "ok"]
    if not flagged:
        return {}
    vecs = run.embedder.embed([run.texts[c] for c in flagged])
    return dict(zip(flagged, vecs, strict=True))


def _arm_context(
    run: _Runner,
    iv: Intervention,
    q: Question,
    cands: list[Candidate],
    context: list[Candidate],
    swap: dict[str, np.ndarray],
) -> list[Candidate] | None:
    s = run.system
    if iv.name == "gold-context":
        gold = [Candidate(e, run.texts[e]) for e in q.expected[:1] if e in run.texts]
        return gold + [c for c in context if c.id not in q.expected] if gold else None
    if iv.name == "fetch":
        return s.assemble(q.question, run.retrieve(q, int(iv.value or 0)))
    if iv.name == "exact":
        return s.assemble(q.question, run.exact(q))
    if iv.name == "threshold":
        return s.assemble(q.question, cands, threshold=iv.value)
    if iv.name == "top-k":
        return s.assemble(q.question, cands, top_k=int(iv.value or 0))
    if iv.name == "no-filter":
        return s.assemble(q.question, run.retrieve(q, run.depth, {}))
    if iv.name == "realigned":
        if not any(e in swap for e in q.expected):
            return None  # check-index flagged none of this question's chunks
        return s.assemble(q.question, run.exact(q, swap))
    raise AssertionError(iv.name)


def _label(sq: SystemQuestion, control: list[bool] | None, flagged: bool) -> Label:
    if sq.flaky or (control is not None and not all(control)):
        return Label.FLAKY
    recovered = {arm.split("=")[0] for arm in sq.recovered_by}
    for base, label in _LABEL_OF.items():  # in stage order
        if base in recovered:
            return label
    gold = sq.arms.get("gold-context")
    if gold is not None and all(gold):
        return Label.GENERATION_REFUSED
    if flagged:  # check-index flags the expected chunk's stored vector
        return Label.MISALIGNED
    if sq.in_candidates is False:
        return Label.NOT_RETRIEVED
    if sq.in_context is False:
        return Label.CONTEXT_ASSEMBLY_LOSS
    return Label.GENERATION_REFUSED


def diagnose_system(
    settings: DiagnoseSettings,
    system: System,
    interventions: Sequence[Intervention],
    questions: Sequence[Question],
    corpus: Corpus | None = None,
    store: VectorStore | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
) -> SystemDiagnoseResult:
    """Run ``system`` (:func:`prepare_system`) ``settings.runs`` times per question, replay
    and label; ``settings.k`` is the depth used when the app names none (``depth``
    attribute), ``settings.cache`` keeps every call. Raises CallBudgetExhausted (exit 3) at
    ``--budget-calls``: all done so far stays in the cache and a rerun resumes."""
    runs, depth, min_cosine = settings.runs, settings.k, settings.min_cosine
    say = progress or (lambda _m: None)
    if runs < 1:
        raise InputError(f"--runs must be >= 1, got {runs}")
    if not questions:
        raise InputError("the question set is empty")
    needs = [iv.arm for iv in interventions if iv.name in NEEDS_STORE]
    if needs and (store is None or embedder is None):
        raise InputError(f"--intervene {needs[0]} needs --store and --embedder (the app's index)")
    if interventions and not system.staged:
        raise InputError(
            f"--intervene needs a --system with retrieve() and generate(); {system.name} has "
            "only answer(), so only repeated runs and the control are available"
        )
    app_depth = int(system.depth or depth)
    texts = dict(zip(corpus.ids, corpus.texts, strict=True)) if corpus is not None else {}
    fingerprint = str(getattr(system.obj, "index_fingerprint", "") or "")
    if store is not None:
        fingerprint = store.fingerprint()
    cache = StagedCache(None if settings.cache is None else Path(settings.cache))
    run = _Runner(system, cache, fingerprint, app_depth, runs, store, embedder, texts)
    try:
        return _run(run, questions, interventions, corpus, min_cosine, say)
    finally:
        cache.close()


def _run(
    run: _Runner,
    questions: Sequence[Question],
    interventions: Sequence[Intervention],
    corpus: Corpus | None,
    min_cosine: float,
    say: Callable[[str], None],
) -> SystemDiagnoseResult:
    s = run.system
    say(f"running {len(questions)} questions x {run.runs} through {s.name}")
    out: list[SystemQuestion] = []
    kept: dict[str, tuple[list[Candidate], list[Candidate]]] = {}
    for q in questions:
        if s.staged:
            cands = run.retrieve(q, run.depth)
            context = s.assemble(q.question, cands)
            refusals = run.generate(q, context, "run")
        else:
            refusals, context = run.answer_only(q, "run")
            cands = context
        kept[q.id] = (cands, context)
        sq = SystemQuestion(
            q.id,
            q.in_scope,
            Label.OK,
            refusals,
            wilson(sum(refusals), len(refusals)).as_dict(),
            len(set(refusals)) > 1,
            q.expected[0] if q.expected else None,
        )
        if q.in_scope:  # answer() only: its contexts are what it retrieved and sent
            sq.in_candidates = any(c.id in q.expected for c in cands)
            sq.in_context = any(c.id in q.expected for c in context)
        if not q.in_scope:
            sq.label = Label.REFUSED_OK if all(refusals) else Label.ANSWERED_OUT_OF_SCOPE
        out.append(sq)
    failing = [
        (q, sq) for q, sq in zip(questions, out, strict=True) if q.in_scope and any(sq.refusals)
    ]
    swap: dict[str, np.ndarray] = {}
    if failing and run.store is not None and run.embedder is not None:
        say("re-embedding the failing questions' expected chunks (check-index)")
        expected = sorted({e for q, _ in failing for e in q.expected})
        swap = _prepare_realigned(run, corpus, expected, min_cosine)
    recovered = {"control": 0, **{iv.arm: 0 for iv in interventions}}
    say(f"replaying {len(failing)} failing questions beside a control")
    for q, sq in failing:
        cands, context = kept[q.id]
        control = (
            run.generate(q, context, "control") if s.staged else run.answer_only(q, "control")[0]
        )
        sq.arms["control"] = control
        if not all(control):
            recovered["control"] += 1
            sq.flaky = True
        for iv in interventions:
            if sq.flaky:  # flaky, not diagnosed: no intervention is paid for
                sq.arms[iv.arm] = None
                continue
            ctx = _arm_context(run, iv, q, cands, context, swap)
            arm = None if ctx is None else run.generate(q, ctx, iv.arm)
            sq.arms[iv.arm] = arm
            if arm is not None and not all(arm) and all(control):
                sq.recovered_by.append(iv.arm)
                recovered[iv.arm] += 1
        sq.label = _label(sq, control, any(e in swap for e in q.expected))
        sq.detail = _detail(sq)
    counts: dict[str, int] = {}
    for sq in out:
        counts[sq.label] = counts.get(sq.label, 0) + 1
    in_scope = [r for sq in out if sq.in_scope for r in sq.refusals]
    lines = implicated_lines(out, len(failing), recovered["control"])
    return SystemDiagnoseResult(
        ok=not any(sq.label in FAILING_LABELS for sq in out),
        system=s.name,
        model_id=s.model_id,
        runs=run.runs,
        depth=run.depth,
        interventions=[iv.arm for iv in interventions],
        counts=counts,
        false_refusal_rate=wilson(sum(in_scope), len(in_scope)).as_dict(),
        control={"failing": len(failing), "recovered": recovered["control"]},
        recovered={k: v for k, v in recovered.items() if k != "control"},
        implicated=lines,
        questions=out,
        cost=s.cost(),
    )


def _detail(sq: SystemQuestion) -> str:
    if sq.label == Label.FLAKY:
        return "outcomes differ across runs, or the unchanged control recovered"
    if sq.recovered_by:
        return "recovered under " + ", ".join(sq.recovered_by) + ", not by the control"
    if sq.arms.get("gold-context") is not None:
        return "still refused with the expected chunk in the context"
    return ""


__all__ = ["diagnose_system", "prepare_system"]
