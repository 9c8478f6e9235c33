"""``indexcheck diagnose --system``: the branch that runs the user's own pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..corpus import Corpus
from ..questions import Question
from .finish import finish
from .options import progress
from .session import session


def run_system(
    ctx: click.Context,
    system_spec: str,
    questions: list[Question],
    *,
    store_spec: str,
    trust_pickle: bool,
    embedder_spec: str,
    cache_path: Path | None,
    corpus: Corpus | None,
    runs: int,
    intervene: str | None,
    budget_calls: int | None,
    k: int,
    min_cosine: float,
    answer_refusal_pattern: str,
    json_path: str | None,
    report_dir: Path | None,
    manifest: dict[str, Any],
) -> None:
    from ..core.answers import compile_pattern
    from ..core.system import diagnose_system
    from ..core.system.hook import load_system
    from ..core.system.interventions import parse_interventions

    interventions = parse_interventions(intervene)  # bad input before any work
    compile_pattern(answer_refusal_pattern, "--answer-refusal-pattern")
    system = load_system(
        system_spec, budget_calls=budget_calls, refusal_pattern=answer_refusal_pattern
    )
    opened = session(ctx, "diagnose")
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    with progress() as say:
        result = diagnose_system(
            system,
            questions,
            runs=runs,
            interventions=interventions,
            store=store,
            embedder=embedder,
            corpus=corpus,
            cache_path=cache_path,
            min_cosine=min_cosine,
            depth=k,
            progress=say,
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        manifest={**manifest, "system": system.name, "cost": result.cost},
    )
    ctx.exit(code)
