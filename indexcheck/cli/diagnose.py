"""``indexcheck diagnose``: why did the assistant refuse this? One stage label per question."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ..core.diagnose import diagnose
from ..core.retrieval import marked_refusals, scale_converters
from ..questions import load_questions
from .command import Command
from .finish import finish
from .options import (
    chunks_option,
    embedder_option,
    output_options,
    progress,
    questions_option,
    retrieval_options,
    seed_option,
    store_option,
)
from .session import open_corpus, session


@click.command("diagnose", cls=Command)
@store_option
@embedder_option
@questions_option
@chunks_option
@retrieval_options
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Refusal threshold the application applies (default: none).",
)
@click.option(
    "--threshold-scale",
    type=click.Choice(["backend", "cosine"]),
    default="backend",
    show_default=True,
    help="Scale --threshold is written on.",
)
@click.option(
    "--min-cosine",
    type=click.FloatRange(-1, 1),
    default=0.999,
    show_default=True,
    help="Re-embedding check of the expected chunks.",
)
@seed_option
@output_options
@click.pass_context
def diagnose_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    embedder_spec: str,
    cache_path: Path | None,
    questions_path: Path,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    k: int,
    fetch: int,
    threshold: float | None,
    threshold_scale: str,
    min_cosine: float,
    refusal_pattern: str,
    seed: int,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Trace each question's expected chunk through every stage; label the first that lost it."""
    questions = load_questions(questions_path)
    corpus = open_corpus(chunks_path, id_column, text_column)
    opened = session(ctx, "diagnose")
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    with progress() as say:
        say("resolving the store's score scale")
        hib, to_cos, scale = scale_converters(store)
        backend_threshold = threshold
        if threshold is not None and threshold_scale == "cosine":
            from ..core.probe_scale import scale_for

            backend_threshold = float(scale_for(store).from_cosine(np.asarray([threshold]))[0])
        result = diagnose(
            store,
            embedder,
            questions,
            corpus,
            k=k,
            fetch=fetch,
            threshold=backend_threshold,
            higher_is_better=hib,
            to_cosine=to_cos,
            min_cosine=min_cosine,
            refusal_pattern=refusal_pattern,
            refusal_marked=marked_refusals(corpus),
            seed=seed,
            progress=say,
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        manifest={"seed": seed, "scale": scale, "questions": str(questions_path)},
    )
    ctx.exit(code)
