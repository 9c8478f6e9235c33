"""Shared click options and the plumbing every command uses (open store/embedder, output);
the output paths' checks are in :mod:`.output_checks`."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from ..outputs import output_error, replacing
from ..redact import dump_scrubbed, scrubbed_json
from .output_checks import check_file_output as check_file_output
from .output_checks import check_folder_output as check_folder_output
from .output_checks import check_json_path, check_report_dir
from .output_checks import run_probes as run_probes  # the commands take them from here too

F = TypeVar("F", bound=Callable[..., Any])

err_console = Console(stderr=True, highlight=False)


def store_option(f: F) -> F:
    """``--store SPEC`` (required) and ``--trust-pickle``."""
    return _store_options(f, required=True)


def optional_store_option(f: F) -> F:
    """``--store SPEC`` (when the command can do without one) and ``--trust-pickle``."""
    return _store_options(f, required=False)


def _store_options(f: F, required: bool) -> F:
    f = click.option(
        "--trust-pickle",
        is_flag=True,
        help="Allow reading LangChain's index.pkl (a pickle can run code: trusted files only).",
    )(f)
    return click.option(
        "--store",
        "store_spec",
        envvar="INDEXCHECK_STORE",
        required=required,
        metavar="SPEC",
        help="Vector store, e.g. faiss:DIR, parquet:FILE, upstash:URL, "
        "pgvector:postgresql://...?table=T, chroma:PATH?collection=C [env INDEXCHECK_STORE].",
    )(f)


def _check_embedder(ctx: click.Context, param: object, value: str | None) -> str | None:
    """Refuse a malformed embedder spec at parse time, before any store is opened."""
    if value is not None:
        from ..embedders import check_embedder_spec

        check_embedder_spec(value)
    return value


def cache_option(caches: str) -> Callable[[F], F]:
    """``--cache FILE`` [env INDEXCHECK_CACHE]: the SQLite file caching ``caches``."""
    return click.option(
        "--cache",
        "cache_path",
        envvar="INDEXCHECK_CACHE",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"SQLite file caching {caches} [env INDEXCHECK_CACHE].",
    )


def embedder_option(f: F) -> F:
    f = cache_option("embeddings by (model, text hash)")(f)
    return click.option(
        "--embedder",
        "embedder_spec",
        envvar="INDEXCHECK_EMBEDDER",
        default="minilm",
        show_default=True,
        metavar="SPEC",
        callback=_check_embedder,
        help="minilm (offline default), mistral[:MODEL], st:NAME_OR_PATH, py:module:function "
        "[env INDEXCHECK_EMBEDDER].",
    )(f)


def chunks_option(f: F) -> F:
    f = click.option("--text-column", default="text", show_default=True)(f)
    f = click.option("--id-column", default="id", show_default=True)(f)
    return click.option(
        "--chunks",
        "chunks_path",
        type=click.Path(path_type=Path),
        default=None,
        help="Chunks file (JSONL, CSV or Parquet) with an id and a text column.",
    )(f)


def questions_option(f: F) -> F:
    return click.option(
        "--questions",
        "questions_path",
        type=click.Path(path_type=Path),
        required=True,
        help="Question set (JSONL or CSV): id, question, expected or in_scope=false.",
    )(f)


def retrieval_options(f: F) -> F:
    """-k, --fetch and --refusal-pattern, as the application retrieves."""
    from ..core.retrieval import DEFAULT_REFUSAL_PATTERN

    f = click.option(
        "--refusal-pattern",
        default=DEFAULT_REFUSAL_PATTERN,
        show_default=True,
        help="Regex on chunk ids marking refusal ('topic not covered') chunks; chunks with "
        "a truthy 'refusal' column in --chunks count too.",
    )(f)
    f = click.option(
        "--fetch",
        type=click.IntRange(1),
        default=20,
        show_default=True,
        help="Results asked from the store (over-fetch depth).",
    )(f)
    return click.option(
        "-k",
        "k",
        type=click.IntRange(1),
        default=4,
        show_default=True,
        help="Chunks the application keeps.",
    )(f)


def json_option(f: F) -> F:
    return click.option(
        "--json",
        "json_path",
        type=str,
        default=None,
        metavar="PATH",
        callback=check_json_path,
        help="Write the full result as JSON ('-' for stdout).",
    )(f)


def output_options(f: F) -> F:
    """``--json PATH`` and ``--report DIR``, both checked writable before any work."""
    f = click.option(
        "--report",
        "report_dir",
        type=click.Path(path_type=Path),
        default=None,
        callback=check_report_dir,
        help="Folder for a Markdown report and PNG plots.",
    )(f)
    return json_option(f)


class FiniteFloat(click.ParamType):
    """A float that is finite (no NaN, no infinities) and inside ``[min, max]``.

    ``click.FloatRange`` lets NaN through (every comparison with NaN is false), and a NaN
    threshold makes every verdict meaningless; this type refuses it at the edge.
    """

    name = "float"

    def __init__(
        self,
        min: float | None = None,  # noqa: A002 (click's own names)
        max: float | None = None,  # noqa: A002
        min_open: bool = False,
        max_open: bool = False,
    ) -> None:
        self.min, self.max = min, max
        self.min_open, self.max_open = min_open, max_open

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        low = self.min is not None and (number <= self.min if self.min_open else number < self.min)
        high = self.max is not None and (number >= self.max if self.max_open else number > self.max)
        if low or high:
            self.fail(f"{value!r} is not in the range {self._range()}", param, ctx)
        return number

    def _range(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f"{'>' if self.min_open else '>='} {self.min:g}")
        if self.max is not None:
            parts.append(f"{'<' if self.max_open else '<='} {self.max:g}")
        return " and ".join(parts)

    def __repr__(self) -> str:
        return f"FiniteFloat({self.min!r}, {self.max!r})"


#: a seed numpy's default_rng and Python's random both take (an unsigned 32-bit value)
SEED = click.IntRange(0, 2**32 - 1)


def finite_floats(command: click.Command) -> None:
    """Give every float option of ``command`` the :class:`FiniteFloat` type, keeping its
    range: one place that keeps NaN and infinities out of every command."""
    for param in command.params:
        kind = param.type
        if isinstance(kind, click.FloatRange):
            low = None if kind.min is None else float(kind.min)
            high = None if kind.max is None else float(kind.max)
            param.type = FiniteFloat(low, high, kind.min_open, kind.max_open)
        elif kind is click.FLOAT:
            param.type = FiniteFloat()
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            finite_floats(sub)


def seed_option(f: F) -> F:
    return click.option(
        "--seed", type=SEED, default=0, show_default=True, help="Seed of the random sample."
    )(f)


def is_stdout(json_path: str | None) -> bool:
    """True for ``-`` and for a path that is this process's stdout (``/dev/stdout``, a link
    to ``/proc/self/fd/1``...): the JSON then goes out alone, the summary to stderr."""
    if json_path is None:
        return False
    if json_path == "-":
        return True
    try:
        here, out = os.stat(json_path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (here.st_dev, here.st_ino) == (out.st_dev, out.st_ino)


def human_console(json_path: str | None) -> Console:
    """Human output goes to stdout, unless the JSON result does."""
    console = Console(stderr=is_stdout(json_path), highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = max(console.width, 120)  # logs and pipes: do not cut chunk ids
    return console


def write_json(json_path: str | None, payload: dict[str, Any]) -> None:
    if json_path is None:
        return
    # no secret in use reaches a --json file (redact: json, scrubbed)
    options: dict[str, Any] = {"indent": 2, "ensure_ascii": False, "default": _jsonable}
    if is_stdout(json_path):  # one file position: written through stdout itself
        sys.stdout.write(scrubbed_json(payload, **options) + "\n")
        sys.stdout.flush()
    else:
        path = Path(json_path)
        try:  # atomically: a failed write leaves no half file, a symlink is replaced
            with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
                dump_scrubbed(payload, fh, **options)  # streamed: never the whole text
                fh.write("\n")
        except OSError as exc:  # checked before the work; the disk can still fill up
            raise output_error(
                f"--json {path}", exc, "; the check ran, but its result was not saved"
            ) from None


def _jsonable(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


@contextmanager
def progress() -> Iterator[Callable[[str], None]]:
    """A status line on stderr; yields ``say(message)``."""
    quiet = not err_console.is_terminal or os.environ.get("INDEXCHECK_QUIET")
    if quiet:
        yield lambda msg: None
        return
    with err_console.status("starting") as status:
        yield lambda msg: status.update(msg)


@contextmanager
def model_calls(cache: Any, *models: Any) -> Iterator[Callable[[str], None]]:
    """:func:`progress` while models are called (judge, questions generate); afterwards,
    whatever happened, the judgement cache (None: none) and every model closed."""
    try:
        with progress() as say:
            yield say
    finally:
        if cache is not None:
            cache.close()
        for model in models:
            getattr(model, "close", lambda: None)()


def _set_waiting(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    from .. import waiting

    current = dict(ctx.meta.get("indexcheck.waiting", {}))
    current[param.name or ""] = value
    ctx.meta["indexcheck.waiting"] = current
    waiting.set_override(current.get("timeout"), current.get("max_wait"))


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
