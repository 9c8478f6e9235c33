"""probe-scale's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import Any

from ...output.model import Plot, Section, Table, Text, ok_verdict
from ...output.registry import Payload, register
from ...output.summary_kit import summary
from .result import ScaleResult


def _probe_scale(r: Payload, verdict: str | None) -> list[Section]:
    own = r.get("verdict") or ok_verdict(r["ok"])  # ASSUMED: an operator indexcheck chose
    sec = Section("probe-scale: the store's score formula", verdict or own)
    sec.blocks.append(Text(r["message"]))
    keys = ("transform", "documented", "higher_is_better", "to_cosine", "source")
    sec.blocks.append(
        Table(
            ["measured", "documented", "higher is better", "to cosine", "source"],
            [[r[k] for k in keys]],
        )
    )
    if r.get("pairs"):
        data = {
            "pairs": r["pairs"],
            "variable": r.get("variable") or "cos",
            "transform": r["transform"] if r["ok"] else None,
        }
        alt = "reported score against the exact variable"
        sec.blocks.append(Plot("probe-scale", data, "probe-scale", alt))
    sec.blocks.append(
        Table(
            ["formula", "fits", "max residual", "worst residual / tolerance"],
            [
                [c["formula"], c["fits"], c["max_residual"], c["worst_ratio"]]
                for c in r.get("candidates") or []
            ],
            "candidate formulas, best first",
        )
    )
    return [sec]


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def probe_scale_summary(result: ScaleResult) -> list[Section]:
    """The formulas tested (best first), then the verdict and the conversions."""
    from ...scales.transforms import CATALOGUE

    spec = (result.manifest.get("store") or {}).get("spec", "the store")
    headers = ["formula", "fits", "max residual", "worst residual/tolerance", "reported by"]
    rows = []
    for c in result.candidates:
        t = CATALOGUE.get(c["formula"])
        fits = "yes" if c["fits"] else "no"
        reported = t.reported_by if t else ""
        rows.append([c["formula"], fits, _g(c["max_residual"]), _g(c["worst_ratio"]), reported])
    title = f"score formulas tested on {len(result.pairs)} (query, id) pairs"
    table = Table(headers, rows, title, right=("max residual", "worst residual/tolerance"))
    sec = summary(result.verdict, table)

    def say(text: str, **kw: Any) -> None:
        sec.blocks.append(Text(text, whole=True, **kw))

    cost = f"{result.queries_made} queries, {result.vectors_fetched} vectors fetched"
    if not result.ok:
        say(f"{spec}: {result.message} ({cost})", badge="FAIL")
        if result.observed_order:
            say(f"  results come sorted {result.observed_order}")
        return [sec]
    better = "higher" if result.higher_is_better else "lower"
    say(
        f"{spec} reports {result.transform} ({better} is better): max residual "
        f"{_g(result.max_residual)} over {len(result.pairs)} pairs ({cost})",
        badge=result.verdict,
    )
    if result.documented != result.transform:
        say(f"  documented as {result.documented}", style="warning")
    say(f"  stored vectors: {'unit-norm' if result.normalized else 'not unit-norm'}")
    if result.to_cosine_formula:
        say(f"  to cosine:   {result.to_cosine_formula}   (s = the store's score)")
        say(f"  from cosine: {result.from_cosine_formula}")
    else:
        say("  no conversion to cosine: it needs unit-norm vectors")
    if result.equivalent:
        say(f"  equally consistent here: {', '.join(result.equivalent)}")
    if result.search != "query":
        say(f"  measured through {result.search}: {result.message}")
    if result.source == "operator_assumed":  # pgvector with no ANN index
        ops = ", ".join(f"{o['operator']} = {o['score']}" for o in result.operators)
        say(
            f"  not the application's scale: indexcheck chose the operator; yours may be "
            f"{ops}; pass &metric= or &operator= to measure it",
            style="warning",
        )
    for f in result.framework_scores:
        say(f"  {f['framework']} {f['function']}: {f['formula']} ({f['name']})")
    return [sec]


register(
    "probe-scale",
    _probe_scale,
    {"transform", "candidates", "pairs"},
    probe_scale_summary,
    result=ScaleResult,
)
