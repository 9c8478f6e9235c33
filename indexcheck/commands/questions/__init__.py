"""questions generate: a verified in-scope and out-of-scope question set from the chunks.

The plan is fixed by the seed before any call: ``n`` in-scope questions (a ``multi_hop``
share of them from two linked chunks, the rest from one), each at a paraphrase level from
near-verbatim to reworded, and ``ceil(oos / 5)`` out-of-scope batches, each followed by one
verification call. The call count therefore never depends on the replies (a dry run's equals
the real run's; repairs come on top, at most ``retries`` per call). Multi-hop slots that find
no linked pair (a corpus too small or too uniform) become single-hop ones, with a statement.

Gates, in this order: malformed replies (after repairs), questions quoting their passage
beyond ``max_quote``, out-of-scope questions the knowledge base answers (exact top chunks +
a judge call) or whose verification never parsed, near-duplicates (cosine >= ``dedupe``),
and in-scope questions whose expected chunks are not all in the exact top ``fetch``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...embedders import for_queries
from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.corpus import Corpus
from ...judges.base import Judge
from ...judges.cache import JudgementCache
from ...output.notebook import Notebook
from ..judge import Prompt
from ..kit.retrieval import refusal_ids
from . import gates
from .calls import BudgetSpent, Call, Caller, Task, prompts, verdict_parser
from .calls import parse_questions as parse_q
from .output import in_scope_row, oos_row
from .plan import make_plan, oos_context, passage_block, token_bound
from .settings import GenerateQuestionsSettings as GenerateQuestionsSettings

OOS_BATCH = 5
VERIFY_K = 3
#: chunks at this cosine or more are near-duplicates: no second hop, so never linked
LINK_MAX = 0.95


@dataclass
class QuestionSetResult(Notebook):
    """The run: the questions kept, every drop per gate, the calls made and the provenance.

    ``questions`` are rows in the question-set format (``id``, ``question``, ``expected`` or
    ``in_scope: false``, ``topic``, ``refusal_expected``) plus ``kind``, ``paraphrase``,
    ``source`` [{id, hash}], ``evidence`` and the generator's identity.
    """

    frames = ("questions", "dropped")

    ok: bool
    complete: bool
    dry_run: bool
    generator: str
    judge: str
    prompt_versions: dict[str, str]
    seed: int
    plan: dict[str, Any]
    questions: list[dict[str, Any]] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    not_retrieved: list[dict[str, Any]] = field(default_factory=list)
    multi_hop_note: str | None = None
    calls: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None
    corpus: dict[str, Any] = field(default_factory=dict)
    out: str | None = None
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def counts(self) -> dict[str, int]:
        ins = sum(1 for q in self.questions if q.get("in_scope", True))
        return {"in_scope": ins, "out_of_scope": len(self.questions) - ins}


def _drop(result: QuestionSetResult, gate: gates.Gate, row: dict[str, Any], why: str) -> None:
    result.drops[gate.value] += 1
    result.dropped.append({"gate": gate.value, "reason": why, **row})


def generate_questions(
    settings: GenerateQuestionsSettings,
    corpus: Corpus,
    generator: Judge,
    embedder: Embedder | None,
    *,
    judge: Judge | None = None,
    refusal_marked: Sequence[str] = (),
    cache: JudgementCache | None = None,
    progress: Callable[[str], None] | None = None,
) -> QuestionSetResult:
    """Plan, ask, verify and gate a question set over ``corpus``.

    ``generator`` writes the questions, ``judge`` (default: the generator) decides whether
    the knowledge base answers an out-of-scope candidate. ``embedder`` embeds the chunks
    (documents) and questions (queries) for links, exact retrieval and de-duplication; it
    may be None only for a dry run, which makes no call and embeds nothing.
    ``result.complete`` is False when ``budget_calls`` stopped the run. The numbers and
    switches are the ``settings``' (its specs are opened by the caller).
    """
    n, oos, multi_hop, seed = settings.n, settings.oos, settings.multi_hop, settings.seed
    dedupe, max_quote, fetch = settings.dedupe, settings.max_quote, settings.fetch
    link_min, refusal_pattern, retries = (
        settings.link_min,
        settings.refusal_pattern,
        settings.retries,
    )
    budget_calls, dry_run = settings.budget_calls, settings.dry_run
    if n < 0 or oos < 0 or n + oos == 0:
        raise InputError("ask for at least one question: --n or --oos must be positive")
    say = progress or (lambda _m: None)
    verifier = judge or generator
    refusals = refusal_ids(corpus.ids, refusal_pattern, refusal_marked)
    plan = make_plan(
        corpus, refusals, n=n, oos=oos, multi_hop=multi_hop, seed=seed, batch=OOS_BATCH
    )
    prompt_of = prompts()
    calls = plan.calls
    bound = token_bound(plan, prompt_of, corpus, VERIFY_K)
    result = QuestionSetResult(
        ok=False,
        complete=False,
        dry_run=dry_run,
        generator=generator.model_id,
        judge=verifier.model_id,
        seed=seed,
        prompt_versions={p.source.rsplit("/", 1)[-1]: p.version for p in prompt_of.values()},
        plan={
            **plan.summary(corpus.ids),
            "calls": calls,
            "max_repairs": calls * retries,
            "max_requests": calls * (retries + 1),
            "tokens_upper_bound": bound,
            # repair k resends the request plus k replies and fixes (each within the reply
            # allowance already counted): at most (k + 1) times the call's bound
            "tokens_upper_bound_with_repairs": bound * (retries + 1) * (retries + 2) // 2,
        },
        drops={g.value: 0 for g in gates.Gate},
        corpus={
            "source": corpus.source,
            "chunks": len(corpus),
            "fingerprint": corpus.fingerprint(),
            "refusal_chunks": len(refusals & set(corpus.ids)),
        },
    )
    if dry_run:
        result.ok = result.complete = True
        return result
    if embedder is None:
        raise InputError("generating questions needs an embedder (--embedder)")
    caller = Caller(retries=retries, cache=cache, budget_calls=budget_calls)
    say(f"embedding {len(corpus)} chunks with {embedder.model_id}")
    chunk_vecs = np.asarray(embedder.embed(corpus.texts), dtype=np.float32)
    queries = for_queries(embedder)
    slots, note = plan.fill_multi_hop(corpus, chunk_vecs, link_min=link_min, link_max=LINK_MAX)
    result.multi_hop_note = note
    result.plan["multi_hop_made"] = sum(1 for s in slots if s.task is Task.MULTI_HOP)
    candidates: list[dict[str, Any]] = []
    total = len(slots) + 2 * len(plan.oos_batches)
    try:
        for i, slot in enumerate(slots, 1):
            say(f"call {caller.stats.made + 1}: {slot.task.value} question {i}/{len(slots)}")
            call = Call(
                slot.task, passage_block(corpus, slot.chunks), {"level": slot.level, "n": 1}
            )
            reply = caller.ask(generator, prompt_of[slot.task], call, parse_q)
            if reply is None:
                _drop(
                    result,
                    gates.Gate.MALFORMED,
                    {
                        "id": slot.id,
                        "task": slot.task.value,
                        "expected": [corpus.ids[c] for c in slot.chunks],
                    },
                    "reply never parsed",
                )
                continue
            candidates.append(
                in_scope_row(
                    result.generator,
                    result.prompt_versions,
                    result.seed,
                    corpus,
                    slot,
                    reply["questions"][0],
                )
            )
        for b, topics in enumerate(plan.oos_batches):
            say(f"call {caller.stats.made + 1}: out-of-scope batch {b + 1}/{len(plan.oos_batches)}")
            want = plan.oos_sizes[b]
            call = Call(Task.OUT_OF_SCOPE, oos_context(corpus, topics, refusals), {"n": want})
            reply = caller.ask(generator, prompt_of[Task.OUT_OF_SCOPE], call, parse_q)
            if reply is None:
                _drop(
                    result,
                    gates.Gate.MALFORMED,
                    {"id": f"oos-batch-{b + 1}", "task": Task.OUT_OF_SCOPE.value},
                    "reply never parsed",
                )
                continue
            found = reply["questions"][:want]
            rows = [
                oos_row(result.generator, result.prompt_versions, result.seed, b, j, q)
                for j, q in enumerate(found)
            ]
            candidates.extend(
                _verify(
                    result,
                    caller,
                    verifier,
                    prompt_of[Task.ANSWERABLE],
                    _Chunks(corpus, chunk_vecs, queries),
                    rows,
                    refusals,
                )
            )
        result.complete = True
    except BudgetSpent as exc:
        result.stopped = f"{exc}: {caller.stats.made} requests made of {total} planned calls"
        s = caller.stats
        result.drops[gates.Gate.BUDGET.value] = calls - s.calls - s.cache_hits + s.interrupted
    _gate_and_keep(result, corpus, candidates, chunk_vecs, queries, dedupe, max_quote, fetch)
    s = caller.stats
    result.calls = {
        "calls": s.calls,
        "repairs": s.repairs,
        "requests": s.made,
        "cache_hits": s.cache_hits,
        "by_task": s.by_task,
        "unusable": s.unusable,
        "generator": generator.stats.as_dict(),
        "judge": verifier.stats.as_dict() if verifier is not generator else None,
    }
    result.ok = result.complete and bool(result.questions)
    return result


@dataclass(frozen=True)
class _Chunks:
    """The chunks as the checks search them: their corpus, unit float32 vectors (n, d) and
    the embedder of queries."""

    corpus: Corpus
    vecs: np.ndarray
    queries: Embedder


def _verify(
    result: QuestionSetResult,
    caller: Caller,
    verifier: Judge,
    prompt: Prompt,
    chunks: _Chunks,
    rows: list[dict[str, Any]],
    refusals: set[str],
) -> list[dict[str, Any]]:
    """Keep the candidates that none of their exact top chunks answers (one judge call for
    the batch); each kept row carries its evidence: top chunk ids and cosines, the verdict."""
    corpus, chunk_vecs, queries = chunks.corpus, chunks.vecs, chunks.queries
    if not rows:
        return []
    qv = queries.embed([r["question"] for r in rows])
    D, I = gates.exact_ranks(corpus.ids, chunk_vecs, qv, VERIFY_K)
    tops = [
        [(str(c), float(d)) for c, d in zip(I[i], D[i], strict=True) if c is not None]
        for i in range(len(rows))
    ]
    parts = []
    for i, (row, top) in enumerate(zip(rows, tops, strict=True), 1):
        block = passage_block(corpus, [corpus.position[c] for c, _ in top])
        parts.append(f"QUESTION {i}: {row['question']}\nPASSAGES for question {i}:\n{block}")
    call = Call(Task.ANSWERABLE, "\n\n".join(parts), {"questions": len(rows)})
    reply = caller.ask(verifier, prompt, call, verdict_parser(len(rows)))
    kept: list[dict[str, Any]] = []
    for i, (row, top) in enumerate(zip(rows, tops, strict=True)):
        evidence: dict[str, Any] = {
            "top": [{"id": c, "cosine": round(d, 4)} for c, d in top],
            "judge": verifier.model_id,
            "prompt_version": prompt.version,
        }
        if reply is None:
            _drop(
                result,
                gates.Gate.UNVERIFIED,
                {**row, "evidence": evidence},
                "the verification reply never parsed",
            )
            continue
        verdict = reply["verdicts"][i]
        evidence |= {
            "verdict": "answered" if verdict["answered"] else "not answered",
            "chunk": verdict["chunk"],
            "rationale": verdict["rationale"],
        }
        row = {**row, "evidence": evidence}
        if verdict["answered"]:
            _drop(
                result,
                gates.Gate.ANSWERED_BY_KB,
                row,
                f"the knowledge base answers it ({verdict['chunk'] or top[0][0]})",
            )
            continue
        row["refusal_expected"] = bool(top) and top[0][0] in refusals
        kept.append(row)
    return kept


def _gate_and_keep(
    result: QuestionSetResult,
    corpus: Corpus,
    candidates: list[dict[str, Any]],
    chunk_vecs: np.ndarray,
    queries: Embedder,
    dedupe: float,
    max_quote: float,
    fetch: int,
) -> None:
    """Verbatim, duplicate and not-retrieved gates; the survivors become the question set."""
    survivors = []
    for row in candidates:
        if row.get("in_scope", True):
            texts = [corpus.texts[corpus.position[c]] for c in row["expected"]]
            share = gates.quote_share(row["question"], texts)
            row["quote_share"] = round(share, 3)
            if share > max_quote:
                _drop(
                    result,
                    gates.Gate.VERBATIM,
                    row,
                    f"quotes {share:.0%} of its words from its chunk (> {max_quote:.0%})",
                )
                continue
        survivors.append(row)
    if not survivors:
        return
    qv = np.asarray(queries.embed([r["question"] for r in survivors]), dtype=np.float32)
    dup = gates.near_duplicates(qv, dedupe)
    kept_rows, kept_vecs = [], []
    for row, vec, d in zip(survivors, qv, dup, strict=True):
        if d is not None:
            other = survivors[d[0]]
            _drop(
                result,
                gates.Gate.DUPLICATE,
                row,
                f"cosine {d[1]:.3f} with {other['id']} ({other['question']!r})",
            )
            continue
        kept_rows.append(row)
        kept_vecs.append(vec)
    ins = [i for i, r in enumerate(kept_rows) if r.get("in_scope", True)]
    ranks: dict[int, dict[str, int | None]] = {}
    if ins:
        D, I = gates.exact_ranks(
            corpus.ids, chunk_vecs, np.stack([kept_vecs[i] for i in ins]), fetch
        )
        for row_i, qi in enumerate(ins):
            got = [c for c in I[row_i] if c is not None]
            ranks[qi] = {
                c: (got.index(c) + 1 if c in got else None) for c in kept_rows[qi]["expected"]
            }
    for i, row in enumerate(kept_rows):
        if i in ranks:
            row["exact_rank"] = ranks[i]
            missing = [c for c, r in ranks[i].items() if r is None]
            if missing:
                why = f"expected chunk(s) {', '.join(missing)} not in the exact top {fetch}"
                _drop(result, gates.Gate.NOT_RETRIEVED, row, why)
                result.not_retrieved.append(
                    {
                        "id": row["id"],
                        "question": row["question"],
                        "missing": missing,
                        "reason": why,
                    }
                )
                continue
        result.questions.append(row)


__all__ = ["QuestionSetResult", "generate_questions"]
