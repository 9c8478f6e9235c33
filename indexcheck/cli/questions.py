"""``indexcheck questions generate``: a verified question set from the knowledge base's chunks.

Exit codes: 0 the set was written (or the dry run printed its cost), 1 every question was
dropped by the gates (nothing written), 2 bad input, 3 the run could not finish (also when
``--budget-calls`` stopped it: the questions done and their manifest are written first;
``--json`` then holds the failed result, as for every run that could not finish).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from ..errors import BackendError, InputError
from .command import Command
from .finish import finish
from .option_types import COSINE, SHARE
from .options import (
    TRUST_PICKLE_SHORT_HELP,
    add_wait_options,
    budget_calls_option,
    chunks_option,
    embedder_option,
    fetch_option,
    json_option,
    number_option,
    output_file,
    refusal_pattern_option,
    retries_option,
    seed_option,
    spec_option,
    trust_pickle_option,
)
from .progress import progress
from .session import open_corpus, warn_spec

#: how many questions of a kind to ask for
QUESTIONS = click.IntRange(0, 100000)

GENERATOR_HELP = (
    "mistral:MODEL, openai:BASE_URL?model=NAME or py:module:function (called as "
    "function(task, context, params_json)) [env INDEXCHECK_GENERATOR]."
)


@click.group("questions")
def questions_group() -> None:
    """Question sets for sweep-threshold, compare-ann, diagnose and ci."""


@questions_group.command("generate", cls=Command)
@chunks_option
@spec_option(
    "--store",
    "store_spec",
    "Read the chunks' ids and texts from this store instead of --chunks.",
)
@trust_pickle_option(TRUST_PICKLE_SHORT_HELP)
@spec_option(
    "--generator",
    "generator_spec",
    GENERATOR_HELP,
    envvar="INDEXCHECK_GENERATOR",
    required=True,
)
@spec_option(
    "--judge",
    "judge_spec",
    "Model that checks out-of-scope candidates against their top chunks (default: the generator).",
)
@output_file(
    "--out",
    "out_path",
    "Question set to write (JSONL); its provenance goes to OUT.manifest.json.",
    dir_okay=True,
    required=True,
)
@number_option("--n", QUESTIONS, 30, "In-scope questions to ask for.")
@number_option("--oos", QUESTIONS, 10, "Out-of-scope candidates (5 per call, each batch verified).")
@number_option(
    "--multi-hop", SHARE, 0.25, "Share of in-scope questions drawn from two linked chunks."
)
@number_option(
    "--dedupe",
    click.FloatRange(0, 1, min_open=True),
    0.95,
    "Drop a question with this cosine or more to an earlier one.",
)
@number_option(
    "--max-quote",
    SHARE,
    0.6,
    "Drop a question whose longest run of words copied from its chunk is more "
    "than this share of its words.",
)
@fetch_option(
    "Drop (and report) a question whose expected chunks are not all in the exact top FETCH."
)
@number_option(
    "--link-min", COSINE, 0.5, "Least cosine that links two chunks for a multi-hop question."
)
@refusal_pattern_option("Regex on chunk ids marking refusal ('topic not covered') chunks.")
@retries_option
@budget_calls_option(
    "Make at most this many requests (repairs included); stop, write what "
    "was done and exit 3 before passing it."
)
@click.option(
    "--dry-run", is_flag=True, help="Print the calls and a token upper bound, make no call."
)
@embedder_option
@seed_option
@json_option
@click.pass_context
def generate_cmd(
    ctx: click.Context,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    store_spec: str | None,
    trust_pickle: bool,
    generator_spec: str,
    judge_spec: str | None,
    out_path: Path,
    n: int,
    oos: int,
    multi_hop: float,
    dedupe: float,
    max_quote: float,
    fetch: int,
    link_min: float,
    refusal_pattern: str,
    retries: int,
    budget_calls: int | None,
    dry_run: bool,
    embedder_spec: str,
    cache_path: Path | None,
    seed: int,
    json_path: str | None,
) -> None:
    """Write in-scope questions (single- and multi-hop, with expected chunks) and verified
    out-of-scope ones from the chunks, through the quality gates."""
    if (chunks_path is None) == (store_spec is None):
        raise InputError("questions generate needs --chunks FILE or --store SPEC (one of them)")
    if n + oos == 0:
        raise InputError("--n and --oos are both 0: ask for at least one question")
    corpus = open_corpus(chunks_path, id_column, text_column)
    warn_spec(store_spec)
    with progress() as say:  # the models are opened, and closed, below the face
        result = api.generate_questions(
            corpus, generator_spec, out=out_path,
            store=store_spec, embedder=embedder_spec, judge=judge_spec or None, n=n, oos=oos,
            multi_hop=multi_hop, seed=seed, dedupe=dedupe, max_quote=max_quote,
            fetch=fetch, link_min=link_min, refusal_pattern=refusal_pattern,
            retries=retries, cache=cache_path, budget_calls=budget_calls, dry_run=dry_run,
            progress=say, trust_pickle=trust_pickle,
        )  # fmt: skip
    code = finish(ctx, result, json_path=json_path, render=render)
    if not result.complete:
        written = (
            f"{len(result.questions)} questions written to {out_path}"
            if result.out
            else ("no question was complete, nothing written")
        )
        raise BackendError(  # exit 3, as the run's BudgetReachedError
            f"{result.stopped}; {written}; raise --budget-calls, or rerun with --cache so "
            "the calls already paid for are not paid again"
        )
    ctx.exit(code)


def render(result: Any, console: Any) -> None:
    """The run's terminal summary (:func:`indexcheck.api.questions_summary`)."""
    api.questions_summary(result, console)


__all__ = ["generate_cmd", "questions_group"]


add_wait_options(generate_cmd)  # a group's commands are not given them by the top group
