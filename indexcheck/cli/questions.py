"""``indexcheck questions generate``: a verified question set from the knowledge base's chunks.

Exit codes: 0 the set was written (or the dry run printed its cost), 1 every question was
dropped by the gates (nothing written), 2 bad input, 3 the run could not finish (also when
``--budget-calls`` stopped it: the questions done and their manifest are written first;
``--json`` then holds the failed result, as for every run that could not finish).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from .. import api
from ..commands.questions import QuestionSetResult
from ..commands.questions.calls import BudgetReachedError
from ..commands.questions.output import sidecar_path
from ..errors import InputError, SpecError
from ..judges.base import Judge
from ..safety.textsafe import escape_rich as escape
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
from .progress import model_calls
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
    from ..inputs.answers import compile_pattern

    if (chunks_path is None) == (store_spec is None):
        raise InputError("questions generate needs --chunks FILE or --store SPEC (one of them)")
    if n + oos == 0:
        raise InputError("--n and --oos are both 0: ask for at least one question")
    compile_pattern(refusal_pattern, "--refusal-pattern")
    corpus = open_corpus(chunks_path, id_column, text_column)
    generator = _open_model(generator_spec, "--generator")
    verifier = _open_model(judge_spec, "--judge") if judge_spec else None
    extra = {
        "generator": {"model_id": generator.model_id, "spec_scheme": generator_spec.split(":")[0]},
        "chunks": str(chunks_path) if chunks_path else store_spec,
    }
    warn_spec(store_spec)
    with model_calls(None, generator, verifier) as say:  # closes both, whatever happens
        result = api.generate_questions(
            corpus, generator, out=out_path,
            store=store_spec, embedder=embedder_spec, judge=verifier, n=n, oos=oos,
            multi_hop=multi_hop, seed=seed, dedupe=dedupe, max_quote=max_quote,
            fetch=fetch, link_min=link_min, refusal_pattern=refusal_pattern,
            retries=retries, cache=cache_path, budget_calls=budget_calls, dry_run=dry_run,
            provenance=extra, progress=say, trust_pickle=trust_pickle,
        )  # fmt: skip
    code = finish(ctx, result, json_path=json_path, render=render, manifest=extra)
    if not result.complete:
        written = (
            f"{len(result.questions)} questions written to {out_path}"
            if result.out
            else ("no question was complete, nothing written")
        )
        raise BudgetReachedError(
            f"{result.stopped}; {written}; raise --budget-calls, or rerun with --cache so "
            "the calls already paid for are not paid again"
        )
    ctx.exit(code)


def _open_model(spec: str, option: str) -> Judge:
    """A generator or judge opened through the judge seam; a bad spec names its option."""
    from ..judges import open_judge

    try:
        return open_judge(spec)
    except SpecError as exc:
        raise SpecError(f"{option}: {exc}") from None


def render(result: QuestionSetResult, console: Console) -> None:
    """The dry run's cost, or what was written, the drops per gate and the findings."""
    p = result.plan
    by = p["calls_by_task"]
    if result.dry_run:
        console.print(
            f"dry run: {p['calls']} calls ({by['single-hop']} single-hop, {by['multi-hop']} "
            f"multi-hop, {by['out-of-scope']} out-of-scope, {by['answerable']} verification), "
            f"plus at most {p['max_repairs']} repair requests; at most "
            f"{p['tokens_upper_bound']:,} tokens for the calls "
            f"({p['tokens_upper_bound_with_repairs']:,} with every repair). No call was made."
        )
        return
    c = result.counts
    refusal = sum(1 for q in result.questions if q.get("refusal_expected"))
    multi = sum(1 for q in result.questions if q.get("kind") == "multi-hop")
    where = escape(result.out) if result.out else "nothing written"
    console.print(
        f"questions: {c['in_scope']} in-scope ({c['in_scope'] - multi} single-hop, {multi} "
        f"multi-hop), {c['out_of_scope']} verified out-of-scope ({refusal} a refusal chunk "
        f"should catch): {where}"
    )
    if result.out:
        console.print(f"provenance: {escape(str(sidecar_path(Path(result.out))))}")
    if result.multi_hop_note:
        console.print(f"[yellow]{escape(result.multi_hop_note)}[/yellow]")
    console.print("dropped per gate: " + ", ".join(f"{g} {k}" for g, k in result.drops.items()))
    for row in result.not_retrieved:
        console.print(
            f"[red]not retrieved[/red] {escape(row['id'])}: {escape(row['reason'])} "
            f"({escape(row['question'])}): a finding about the index or the question"
        )
    calls = result.calls
    console.print(
        f"calls: {calls['calls']} (+{calls['repairs']} repairs, {calls['cache_hits']} from the "
        f"cache); generator {escape(result.generator)}, judge {escape(result.judge)}, seed "
        f"{result.seed}"
    )
    if result.stopped:
        console.print(
            f"[bold red]STOPPED[/bold red] {escape(result.stopped)}; what was done is written"
        )
    elif not result.questions:
        console.print("[bold red]FAIL[/bold red] every question was dropped; nothing written")


__all__ = ["generate_cmd", "questions_group"]


add_wait_options(generate_cmd)  # a group's commands are not given them by the top group
