"""``indexcheck probe-scale`` and ``indexcheck convert-threshold``: which formula a store's
scores follow, and what a threshold means on another scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

from .. import api
from ..commands.probe_scale import MAX_PROBES, convert_threshold, transform_of
from ..errors import InputError
from ..filters import canonical, parse_filter
from ..output.model import Section, Text
from ..output.summary_kit import summary
from .command import Command
from .finish import finish
from .options import json_option, number_option, seed_option, store_option
from .progress import progress
from .session import warn_spec


@click.command("probe-scale", cls=Command)
@store_option
@number_option(
    "--probes",
    click.IntRange(1, MAX_PROBES),
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
@json_option
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
) -> None:
    """Measure which formula the store's scores follow (cos, dot or l2 based) and how to
    convert a threshold to and from cosine. Exit 0 when a known formula fits, 1 when none does.

    The result is kept per index fingerprint (in $INDEXCHECK_CACHE_DIR/scale, default
    ~/.cache/indexcheck/scale) for later commands and convert-threshold --store.
    """
    node = parse_filter(filter_text) if filter_text is not None else None
    extra: dict[str, Any] = {} if node is None else {"filters": [canonical(node)]}
    warn_spec(store_spec)
    with progress() as say:
        result = api.probe_scale(
            store_spec, probes, k, seed, filter=node, cache=not no_cache, progress=say,
            trust_pickle=trust_pickle,
        )  # fmt: skip
    ctx.exit(finish(ctx, result, json_path=json_path, manifest=extra))


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

    Formulas: cos, 1-cos, (1+cos)/2, 2-2cos, 1/(2-cos), dot, -dot, 1-dot, (1+dot)/2, l2,
    l2^2, 1/(1+l2^2), 1/(1+l2). Values outside the source scale's range are refused (exit 2).
    """
    normalized = not raw_vectors
    source = "given"
    if store_spec is not None:
        if from_formula is not None:
            raise InputError("pass --from or --store, not both")
        warn_spec(store_spec)
        scale = api.probe_scale(store_spec, reuse=True, trust_pickle=trust_pickle)
        spec = scale.manifest["store"]["spec"]
        if not scale.ok or scale.transform is None:
            raise InputError(f"the score scale of {spec} is unknown ({scale.message}); pass --from")
        if scale.source == "operator_assumed":
            # the score depends on the operator the application writes: a threshold
            # converted from indexcheck's own choice would be on the wrong scale
            raise InputError(
                f"{spec} scores with whatever operator the application's query uses "
                "(<=> 1-cos, <-> l2, <#> -dot); add &operator= (or &metric=) to the spec to "
                "match it, or pass --from"
            )
        from_formula, normalized, source = scale.transform, bool(scale.normalized), scale.source
    if from_formula is None:
        raise InputError("pass --from FORMULA (the scale of VALUE) or --store SPEC")
    src, dst = transform_of(from_formula), transform_of(to_formula)
    out = convert_threshold(value, src.formula, dst.formula, normalized=normalized)
    result = Converted(
        {
            "value": value,
            "from": src.formula,
            "to": dst.formula,
            "result": out,
            "normalized": normalized,
            "from_higher_is_better": src.higher_is_better,
            "to_higher_is_better": dst.higher_is_better,
            "scale_source": source,
        }
    )
    ctx.exit(finish(ctx, result, json_path=json_path))


@dataclass
class Converted:
    """convert-threshold's answer; its JSON is exactly ``payload`` (no manifest)."""

    payload: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def to_dict(self) -> dict[str, Any]:
        return dict(self.payload)

    def sections(self) -> list[Section]:
        """One terminal line: the value on both scales and which side each keeps."""
        return [summary(None, Text(_converted_line(self.payload), whole=True))]


def _converted_line(p: dict[str, Any]) -> str:
    def keep(t_hib: bool, x: float) -> str:
        return f"keep scores {'>=' if t_hib else '<='} {x:.6g}"

    return (
        f"{p['value']:.6g} on {p['from']} ({keep(p['from_higher_is_better'], p['value'])}) = "
        f"{p['result']:.6g} on {p['to']} ({keep(p['to_higher_is_better'], p['result'])})"
    )
