"""questions generate's run on opened judges and embedder, the same for the api (and so the
CLI): the generation and its gates on the chunks, and the question set written with its
provenance."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...judges.base import Judge
from ...judges.cache import JudgementCache
from ..retrieval import DEFAULT_REFUSAL_PATTERN, marked_refusals
from . import QuestionSetResult, generate_questions
from .output import finish_run


def generate_set(
    corpus: Corpus,
    generator: Judge,
    embedder: Embedder | None,
    *,
    judge: Judge | None = None,
    n: int = 30,
    oos: int = 10,
    multi_hop: float = 0.25,
    seed: int = 0,
    dedupe: float = 0.95,
    max_quote: float = 0.6,
    fetch: int = 20,
    link_min: float = 0.5,
    refusal_pattern: str | None = DEFAULT_REFUSAL_PATTERN,
    retries: int = 2,
    cache: JudgementCache | None = None,
    budget_calls: int | None = None,
    dry_run: bool = False,
    out: str | Path | None = None,
    provenance: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[QuestionSetResult, dict[str, Any]]:
    """:func:`generate_questions` on ``corpus`` (its refusal chunks marked by the corpus),
    the kept set written to ``out`` with its sidecar (:func:`.output.finish_run`). Returns
    the result and its provenance, for the manifest."""
    options = dict(
        n=n,
        oos=oos,
        multi_hop=multi_hop,
        dedupe=dedupe,
        max_quote=max_quote,
        fetch=fetch,
        link_min=link_min,
        retries=retries,
        budget_calls=budget_calls,
    )
    result = generate_questions(
        corpus,
        generator,
        embedder,
        judge=judge,
        seed=seed,
        refusal_pattern=refusal_pattern,
        refusal_marked=marked_refusals(corpus),
        cache=cache,
        dry_run=dry_run,
        progress=progress,
        n=n,
        oos=oos,
        multi_hop=multi_hop,
        dedupe=dedupe,
        max_quote=max_quote,
        fetch=fetch,
        link_min=link_min,
        retries=retries,
        budget_calls=budget_calls,
    )
    facts = finish_run(
        result,
        generator=generator.model_id,
        seed=seed,
        options=options,
        provenance=provenance,
        out=out,
        embedder=embedder,
        dry_run=dry_run,
    )
    return result, facts


__all__ = ["generate_set"]
