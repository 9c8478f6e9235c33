"""``indexcheck probe-scale`` and ``indexcheck convert-threshold``: which formula a store's
scores follow, and what a threshold means on another scale."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from .command import Command
from .finish import finish
from .options import json_option, number_option, output_options, seed_option, store_option
from .progress import progress
from .session import warn_spec


@click.command("probe-scale", cls=Command)
@store_option
@number_option(
    "--probes",
    click.IntRange(1, api.MAX_PROBES),
    16,
    "Probe queries to send (built from the store's own vectors).",
)
@number_option("-k", click.IntRange(1, 100), 8, "Neighbours per query.")
@seed_option
@click.option("--no-cache", is_flag=True, help="Do not record the result for later commands.")
@click.option(
    "--filter",
    "filter_text",
    default=None,
    metavar="JSON",
    help="Probe the search run under this metadata filter (not cached: the unfiltered "
    "scale stays the one later commands read).",
)
@output_options
@click.pass_context
def probe_scale_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    probes: int,
    k: int,
    seed: int,
    no_cache: bool,
    filter_text: str | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Measure which formula the store's scores follow (cos, dot or l2 based) and how to
    convert a threshold to and from cosine. Exit 0 when a known formula fits, 1 when none does.

    The result is kept per index fingerprint (in $INDEXCHECK_CACHE_DIR/scale, default
    ~/.cache/indexcheck/scale) for later commands and convert-threshold --store.
    """
    warn_spec(store_spec)
    with progress() as say:
        result = api.probe_scale(
            store_spec, probes, k, seed, filter=filter_text, cache=not no_cache, progress=say,
            trust_pickle=trust_pickle,
        )  # fmt: skip
    ctx.exit(finish(ctx, result, json_path=json_path))


@click.command("convert-threshold", cls=Command, context_settings={"ignore_unknown_options": True})
@click.argument("value", type=float)
@click.option(
    "--from", "from_formula", metavar="FORMULA", help="Scale of VALUE, e.g. '(1+cos)/2', 'l2^2'."
)
@click.option(
    "--to", "to_formula", metavar="FORMULA", default="cos", show_default=True, help="Target scale."
)
@click.option(
    "--store",
    "store_spec",
    metavar="SPEC",
    default=None,
    help="Use this store's probed (or cached) scale as --from.",
)
@click.option("--trust-pickle", is_flag=True, help="Allow reading LangChain's index.pkl.")
@click.option(
    "--raw-vectors",
    is_flag=True,
    help="Vectors are not unit-norm (then only conversions within cos, dot or l2 exist).",
)
@json_option
@click.pass_context
def convert_threshold_cmd(
    ctx: click.Context,
    value: float,
    from_formula: str | None,
    to_formula: str,
    store_spec: str | None,
    trust_pickle: bool,
    raw_vectors: bool,
    json_path: str | None,
) -> None:
    """Express a score threshold VALUE on another scale (negative values need no quoting).

    Formulas: cos, 1-cos, (1+cos)/2, 2-2cos, 1/(2-cos), dot, -dot, 1-dot, (1+dot)/2,
    1+dot|1/(1-dot) (Elasticsearch max_inner_product, OpenSearch innerproduct), l2, l2^2,
    1/(1+l2^2), 1/(1+l2). Values outside the source scale's range are refused (exit 2).
    """
    if store_spec is not None and from_formula is None:  # both given: refused, no warning
        warn_spec(store_spec)
    result = api.convert_threshold(
        value, from_formula, to_formula, store=store_spec, raw_vectors=raw_vectors,
        trust_pickle=trust_pickle,
    )  # fmt: skip
    ctx.exit(finish(ctx, result, json_path=json_path))
