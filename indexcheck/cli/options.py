"""The shared click options, each declared once with its help text, as decorators a command
stacks (``@store_option``, ``@embedder_option``, ``@chunks_option``, ``@output_options``...),
the shapes a command declares its own options in (``number_option``, ``choice_option``,
``input_file``...), and the ``--json`` writer. Where commands really differ (required or
not, their own help), the group takes a parameter. The output paths' checks are in
:mod:`.output_checks`, the number types in :mod:`.option_types`, the status line in
:mod:`.progress`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from rich.console import Console

from .. import api
from ..api import DEFAULT_ANSWER_REFUSAL_PATTERN, DEFAULT_CITATION_PATTERN, DEFAULT_REFUSAL_PATTERN
from ..api import TRACE_FORMATS as FORMATS
from .option_types import COSINE, SEED, FiniteFloat
from .output_checks import check_file_output, check_json_path, check_report_dir

F = TypeVar("F", bound=Callable[..., Any])

STORE_HELP = (
    "Vector store, e.g. faiss:DIR, parquet:FILE, upstash:URL, "
    "pgvector:postgresql://...?table=T, chroma:PATH?collection=C [env INDEXCHECK_STORE]."
)
TRUST_PICKLE_HELP = (
    "Allow reading LangChain's index.pkl (a pickle can run code: trusted files only)."
)
#: the shorter wording of the commands that read a store only on the side
TRUST_PICKLE_SHORT_HELP = "Allow reading LangChain's index.pkl."
EMBEDDER_HELP = (
    "minilm (offline default), mistral[:MODEL], st:NAME_OR_PATH, py:module:function "
    "[env INDEXCHECK_EMBEDDER]."
)
EMBEDDINGS = "embeddings by (model, text hash)"
CHUNKS_HELP = "Chunks file (JSONL, CSV or Parquet) with an id and a text column."
ANSWER_REFUSAL_HELP = "Regex on the answer text marking a refusal (a 'refused' column wins)."


def stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """The decorators as one, their options in the order listed (as stacked over a command)."""

    def add(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return add


def number_option(
    name: str,
    kind: click.ParamType[float],
    default: float | None,
    help: str,
    *,
    dest: str | None = None,
) -> Callable[[F], F]:
    """A number option of type ``kind`` (``click.IntRange(1)``, ``SHARE``...), its ``default``
    shown in --help; with a None default it is None when not given (its ``help`` says what
    that means), and no ``default=None`` is passed to click."""
    names = (name, dest) if dest else (name,)
    if default is None:
        return click.option(*names, type=kind, help=help)
    return click.option(*names, type=kind, default=default, show_default=True, help=help)


def choice_option(
    name: str, choices: Sequence[str], default: str, help: str | None = None
) -> Callable[[F], F]:
    """An option taking one of ``choices``, its ``default`` shown in --help."""
    kind = click.Choice(choices)
    return click.option(name, type=kind, default=default, show_default=True, help=help)


def spec_option(name: str, dest: str, help: str, **kwargs: Any) -> Callable[[F], F]:
    """An option naming a store, embedder, judge or generator by its spec (metavar SPEC,
    None when not given: an explicit ``default=None`` would satisfy ``required``); ``kwargs``
    as for click (``required``, ``envvar``, ``default``...)."""
    return click.option(name, dest, metavar="SPEC", help=help, **kwargs)


def input_file(
    name: str, dest: str, help: str, *, dir_okay: bool = True, **kwargs: Any
) -> Callable[[F], F]:
    """An option naming a file the run reads (a :class:`~pathlib.Path`, None when not given);
    ``kwargs`` as for click (``required``)."""
    kind = click.Path(dir_okay=dir_okay, path_type=Path)
    return click.option(name, dest, type=kind, help=help, **kwargs)


def output_file(
    name: str, dest: str, help: str, *, formats: bool = False, dir_okay: bool = False, **kwargs: Any
) -> Callable[[F], F]:
    """An option naming a file the run writes, checked writable before any work
    (``formats``: its name must end in a row format: .parquet, .csv or .jsonl)."""
    kind = click.Path(dir_okay=dir_okay, path_type=Path)
    check = check_file_output(name, formats=formats)
    return click.option(name, dest, type=kind, callback=check, help=help, **kwargs)


def folder_option(name: str, dest: str, help: str, **kwargs: Any) -> Callable[[F], F]:
    """An option naming a folder the run writes in (created when missing); ``kwargs`` as for
    click (``envvar``)."""
    kind = click.Path(file_okay=False, path_type=Path)
    return click.option(name, dest, type=kind, help=help, **kwargs)


def trust_pickle_option(help: str = TRUST_PICKLE_HELP) -> Callable[[F], F]:
    return click.option("--trust-pickle", is_flag=True, help=help)


def store_options(required: bool = True) -> Callable[[F], F]:
    """``--store SPEC`` [env INDEXCHECK_STORE] and ``--trust-pickle``."""
    store = spec_option(
        "--store", "store_spec", STORE_HELP, envvar="INDEXCHECK_STORE", required=required
    )
    return stack(store, trust_pickle_option())


#: ``--store SPEC`` (required) and ``--trust-pickle``
store_option = store_options(required=True)
#: ``--store SPEC`` (when the command can do without one) and ``--trust-pickle``
optional_store_option = store_options(required=False)


def _check_embedder(ctx: click.Context, param: object, value: str | None) -> str | None:
    """Refuse a malformed embedder spec at parse time, before any store is opened."""
    if value is not None:
        api.check_embedder_spec(value)
    return value


def cache_option(caches: str, *, env: bool = True) -> Callable[[F], F]:
    """``--cache FILE``: the SQLite file caching ``caches`` (``env``: [env INDEXCHECK_CACHE])."""
    return click.option(
        "--cache",
        "cache_path",
        envvar="INDEXCHECK_CACHE" if env else None,
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"SQLite file caching {caches}" + (" [env INDEXCHECK_CACHE]." if env else "."),
    )


#: ``--embedder SPEC`` [env INDEXCHECK_EMBEDDER], checked at parse time, and its ``--cache``
embedder_option = stack(
    spec_option(
        "--embedder",
        "embedder_spec",
        EMBEDDER_HELP,
        envvar="INDEXCHECK_EMBEDDER",
        default="minilm",
        show_default=True,
        callback=_check_embedder,
    ),
    cache_option(EMBEDDINGS),
)

#: ``--id-column`` and ``--text-column`` of the chunks files
chunk_column_options = stack(
    click.option("--id-column", default="id", show_default=True),
    click.option("--text-column", default="text", show_default=True),
)


def chunks_options(required: bool = False, help: str = CHUNKS_HELP) -> Callable[[F], F]:
    """``--chunks FILE`` and its ``--id-column`` and ``--text-column``."""
    chunks = input_file("--chunks", "chunks_path", help, required=required)
    return stack(chunks, chunk_column_options)


#: ``--chunks FILE`` (optional) and its columns
chunks_option = chunks_options()


@dataclass(frozen=True)
class IndexInputs:
    """What a command re-embedding an index's chunks reads, as one value: ``--store``
    (``--trust-pickle``), ``--embedder`` (``--cache``) and ``--chunks`` (its columns)."""

    store: str
    trust_pickle: bool
    embedder: str
    cache: Path | None
    chunks: Path | None
    id_column: str
    text_column: str

    def reading(self) -> dict[str, Any]:
        """The face keywords saying how to read them, named as these fields: cache,
        trust_pickle and the columns."""
        return {name: getattr(self, name) for name in READING}


#: the fields of :class:`IndexInputs` every such command passes on as face keywords
READING = ("cache", "trust_pickle", "id_column", "text_column")
#: the click parameters of :class:`IndexInputs`, in its fields' order
_INPUT_PARAMS = (
    "store_spec", "trust_pickle", "embedder_spec", "cache_path", "chunks_path", "id_column",
    "text_column",
)  # fmt: skip


def index_inputs(f: F) -> F:
    """``@store_option @embedder_option @chunks_option``, their values handed to the command
    as one keyword, ``inputs`` (an :class:`IndexInputs`)."""

    @functools.wraps(f)
    def _command(*args: Any, **kwargs: Any) -> Any:
        inputs = IndexInputs(*(kwargs.pop(name) for name in _INPUT_PARAMS))
        return f(*args, inputs=inputs, **kwargs)

    return cast(F, stack(store_option, embedder_option, chunks_option)(_command))


#: ``--questions FILE`` (required): the labelled question set
questions_option = input_file(
    "--questions",
    "questions_path",
    "Question set (JSONL or CSV): id, question, expected or in_scope=false.",
    required=True,
)


#: ``--answers-format``: how to read ``--answers`` (default: sniffed)
answers_format_option = click.option(
    "--answers-format",
    type=click.Choice(FORMATS),
    default=None,
    help="Format of --answers (default: sniffed): own (indexcheck's answers file), "
    "openinference (Phoenix/OTel SDK span JSON, JSONL or Parquet), otlp (OTLP JSON: "
    "OpenInference or OTel GenAI spans), langfuse, langsmith.",
)


def answers_options(help: str, required: bool = True) -> Callable[[F], F]:
    """``--answers FILE`` (``help`` says what it holds) and ``--answers-format``."""
    answers = input_file("--answers", "answers_path", help, required=required)
    return stack(answers, answers_format_option)


def fetch_option(help: str) -> Callable[[F], F]:
    return number_option("--fetch", click.IntRange(1), 20, help)


def refusal_pattern_option(help: str) -> Callable[[F], F]:
    """``--refusal-pattern``: the regex on chunk ids marking refusal chunks."""
    return click.option(
        "--refusal-pattern", default=DEFAULT_REFUSAL_PATTERN, show_default=True, help=help
    )


def answer_refusal_option(
    name: str = "--refusal-pattern", help: str = ANSWER_REFUSAL_HELP
) -> Callable[[F], F]:
    """The regex on an answer's text marking a refusal."""
    return click.option(name, default=DEFAULT_ANSWER_REFUSAL_PATTERN, show_default=True, help=help)


def citation_pattern_option(help: str) -> Callable[[F], F]:
    return click.option(
        "--citation-pattern", default=DEFAULT_CITATION_PATTERN, show_default=True, help=help
    )


def k_option(help: str, *names: str) -> Callable[[F], F]:
    """``-k`` (4): the results a retriever keeps; ``names``: its spellings (default ``-k``)."""
    spellings = names or ("-k",)
    kind = click.IntRange(1)
    return click.option(*spellings, "k", type=kind, default=4, show_default=True, help=help)


#: -k, --fetch and --refusal-pattern, as the application retrieves
retrieval_options = stack(
    k_option("Chunks the application keeps."),
    fetch_option("Results asked from the store (over-fetch depth)."),
    refusal_pattern_option(
        "Regex on chunk ids marking refusal ('topic not covered') chunks; chunks with "
        "a truthy 'refusal' column in --chunks count too."
    ),
)


def min_cosine_option(help: str) -> Callable[[F], F]:
    """``--min-cosine`` (0.999): the least cosine of a re-embedding with its stored vector."""
    return number_option("--min-cosine", COSINE, 0.999, help)


def filter_option(help: str) -> Callable[[F], F]:
    """``--filter JSON``: a metadata filter every search runs under."""
    return click.option("--filter", "filter_text", default=None, metavar="JSON", help=help)


def budget_calls_option(help: str) -> Callable[[F], F]:
    return number_option("--budget-calls", click.IntRange(1), None, help)


#: repair requests for a model reply that does not parse (judge, questions generate)
retries_option = number_option(
    "--retries", click.IntRange(0, 10), 2, "Repair requests for a reply that does not parse."
)

seed_option = number_option("--seed", SEED, 0, "Seed of the random sample.")

#: ``--json PATH`` ('-' for stdout), checked writable before any work
json_option = click.option(
    "--json",
    "json_path",
    type=str,
    default=None,
    metavar="PATH",
    callback=check_json_path,
    help="Write the full result as JSON ('-' for stdout).",
)

#: ``--json PATH`` and ``--report DIR``, both checked writable before any work
output_options = stack(
    json_option,
    click.option(
        "--report",
        "report_dir",
        type=click.Path(path_type=Path),
        default=None,
        callback=check_report_dir,
        help="Folder for the report pages (HTML and Markdown) and PNG plots.",
    ),
)


#: True for ``-`` and a path that is this process's stdout: the summary then goes to stderr
is_stdout = api.json_to_stdout
#: ``--json``: the payload written atomically, scrubbed of secrets ('-' for stdout)
write_json = api.write_json


def human_console(json_path: str | None) -> Console:
    """Human output goes to stdout, unless the JSON result does."""
    console = Console(stderr=is_stdout(json_path), highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = max(console.width, 120)  # logs and pipes: do not cut chunk ids
    return console


def _set_waiting(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    current = dict(ctx.meta.get("indexcheck.remote.waiting", {}))
    current[param.name or ""] = value
    ctx.meta["indexcheck.remote.waiting"] = current
    api.set_waiting(current.get("timeout"), current.get("max_wait"))


def add_wait_options(command: click.Command) -> None:
    """Give ``command`` --timeout and --max-wait (env INDEXCHECK_TIMEOUT, INDEXCHECK_MAX_WAIT),
    read by every hosted service it opens (the Mistral embedder, the Upstash store)."""
    if isinstance(command, click.Group) or any(p.name == "timeout" for p in command.params):
        return
    command.params.append(
        click.Option(
            ["--timeout"],
            type=FiniteFloat(0.001, 86400, min_open=False),
            envvar="INDEXCHECK_TIMEOUT",
            default=None,
            expose_value=False,
            callback=_set_waiting,
            help="Seconds one request to a hosted service may take (default 60) "
            "[env INDEXCHECK_TIMEOUT].",
        )
    )
    command.params.append(
        click.Option(
            ["--max-wait"],
            type=FiniteFloat(0.001, 86400),
            envvar="INDEXCHECK_MAX_WAIT",
            default=None,
            expose_value=False,
            callback=_set_waiting,
            help="Seconds one request may take with all its retries (default 120) "
            "[env INDEXCHECK_MAX_WAIT].",
        )
    )


def _set_record_limit(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    api.set_record_limit(value)


def add_limit_options(command: click.Command) -> None:
    """Give ``command`` --max-record-bytes (env INDEXCHECK_MAX_RECORD_BYTES): the size one
    line, CSV field or (16 times it) whole JSON document of an input file may take; every
    subcommand of a group gets it too."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_limit_options(sub)
        return
    if any(p.name == "max_record_bytes" for p in command.params):
        return
    command.params.append(
        click.Option(
            ["--max-record-bytes"],
            type=click.IntRange(1),
            metavar="BYTES",
            envvar="INDEXCHECK_MAX_RECORD_BYTES",
            default=None,
            expose_value=False,
            callback=_set_record_limit,
            help="Bytes one line or record of an input file may take (default 64 MiB; a "
            "whole JSON document 16 times it) [env INDEXCHECK_MAX_RECORD_BYTES].",
        )
    )
