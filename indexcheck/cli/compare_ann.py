"""``indexcheck compare-ann``: how often approximate search misses the best chunk, and how
deep to fetch (ask f, re-rank exactly, keep k) to bring that under a target.

Exit codes: 0 a setting tried reaches the target with its 95% interval (a fetch depth of
the index as configured, or with ``--sweep`` a swept value and a fetch depth: the
recommendation names the smallest) or the index searches exactly (CANNOT_FAIL), 1 none
does or too few queries to tell (INSUFFICIENT_EVIDENCE), 2 bad input, 3 could not finish.
"""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from ..errors import InputError
from .command import Command
from .engine_options import engine_options
from .finish import finish
from .option_types import SHARE
from .options import (
    chunks_option,
    embedder_option,
    input_file,
    k_option,
    number_option,
    output_options,
    seed_option,
    store_option,
)
from .progress import progress
from .session import warn_spec

DEFAULT_QUERIES = 500


def _depths(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(
            f"--fetch '{text}' must be comma-separated integers, e.g. --fetch 4,10,20,50"
        ) from None


@click.command("compare-ann", cls=Command)
@store_option
@number_option(
    "--queries",
    click.IntRange(1),
    None,
    f"Sample this many stored vectors as queries, moved by --noise [default {DEFAULT_QUERIES}].",
    dest="n_queries",
)
@number_option(
    "--noise",
    click.FloatRange(0.0),
    api.DEFAULT_NOISE,
    "Relative size of the random move applied to sampled queries.",
)
@input_file(
    "--questions",
    "questions_path",
    "Real questions (JSONL or CSV with id and question), embedded with --embedder.",
)
@input_file(
    "--query-vectors",
    "query_vectors_path",
    "Your own query vectors (.npy or Parquet with a vector column), used as given.",
)
@embedder_option
@k_option("Results the retriever keeps.", "-k", "--k")
@click.option(
    "--fetch",
    "fetch_text",
    default=None,
    metavar="F1,F2,...",
    help="Fetch depths to try, each >= k [default 4,10,20,50, those below k replaced by k].",
)
@number_option("--target", SHARE, 0.01, "Best-chunk miss rate to reach.")
@click.option(
    "--sweep",
    "sweep_text",
    default=None,
    metavar="PARAM=V1,V2,...",
    help="Also try these values of the index's search parameter, e.g. efSearch=16,32,64 "
    "or nprobe=1,4,16 (faiss), nprobes= (lancedb), ef_search=/probes= (pgvector), "
    "ef_runtime= (redis).",
)
@click.option(
    "--vector-cache",
    "vector_cache",
    envvar="INDEXCHECK_VECTOR_CACHE",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder caching vectors read from a remote store, keyed by its fingerprint "
    "[default ~/.cache/indexcheck/vectors; env INDEXCHECK_VECTOR_CACHE].",
)
@click.option("--no-vector-cache", is_flag=True, help="Read the store again on every run.")
@click.option(
    "--truth-from",
    "truth_from",
    type=click.Choice(["chunks"]),
    default=None,
    help="Measure against the vectors as added, re-embedded from the chunk texts "
    "(--chunks, or the texts the store holds) with --embedder: for an index that "
    "compresses (FAISS PQ/SQ/LSH), whose own vectors are decoded codes.",
)
@click.option(
    "--truth-store",
    "truth_store",
    default=None,
    metavar="SPEC",
    help="Measure against the vectors as added, read from this store (e.g. "
    "parquet:vectors.parquet) under the index's ids.",
)
@click.option(
    "--filter",
    "filter_text",
    default=None,
    metavar="JSON",
    help='A metadata filter applied to every query, e.g. \'{"profile": "ckd"}\' '
    "(AND-ed with a question's own 'filter'); see README 'Filtered search'.",
)
@chunks_option
@seed_option
@engine_options
@output_options
@click.pass_context
def compare_ann_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    n_queries: int | None,
    noise: float,
    questions_path: Path | None,
    query_vectors_path: Path | None,
    embedder_spec: str,
    cache_path: Path | None,
    k: int,
    fetch_text: str | None,
    target: float,
    sweep_text: str | None,
    vector_cache: Path | None,
    no_vector_cache: bool,
    truth_from: str | None,
    truth_store: str | None,
    filter_text: str | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    seed: int,
    engine: str,
    ray_address: str | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Measure how often approximate search misses the exact best chunk, and recommend a
    fetch depth (ask more, re-rank exactly, keep k) that brings it under --target."""
    given = [
        name
        for name, value in (
            ("--queries", n_queries),
            ("--questions", questions_path),
            ("--query-vectors", query_vectors_path),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} cannot be combined; pick one query source")
    if truth_from and truth_store:
        raise click.UsageError(
            "--truth-from and --truth-store cannot be combined; pick one source of true vectors"
        )
    if chunks_path is not None and truth_from != "chunks":
        raise click.UsageError(
            "--chunks is read only by --truth-from chunks (it re-embeds their texts); "
            "add --truth-from chunks or drop --chunks"
        )
    depths = _depths(fetch_text)  # checked against k, with the filter and the sweep, below
    cache_dir = None if no_vector_cache else (vector_cache or True)
    warn_spec(store_spec)
    warn_spec(truth_store)
    with progress() as say:
        result = api.compare_ann(
            store_spec,
            n_queries or DEFAULT_QUERIES,
            k=k,
            fetch=depths,
            target=target,
            seed=seed,
            noise=noise,
            questions=questions_path,
            query_vectors=query_vectors_path,
            truth_from=truth_from,
            truth_store=truth_store,
            chunks=chunks_path,
            id_column=id_column,
            text_column=text_column,
            embedder=embedder_spec,
            cache_dir=cache_dir,
            filter=filter_text,
            sweep=sweep_text or None,
            engine=engine,
            ray_address=ray_address,
            cache=cache_path,
            progress=say,
            trust_pickle=trust_pickle,
        )
    ctx.exit(finish(ctx, result, json_path=json_path, report_dir=report_dir))
