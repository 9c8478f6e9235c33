"""ci's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...output.model import (
    WORST_ROWS,
    Code,
    Plot,
    Section,
    Table,
    Text,
    V,
    fmt,
    interval,
    manifest_section,
    rank,
)
from ...output.registry import Payload, register, sections_of
from ...output.summary_kit import summary

# ci's report quotes every check it ran: their builders must be registered even when
# only ci's result was built (the terminal summary of a run, not a --json file read back)
from ..check_index import report as _check_index  # noqa: F401
from ..compare_ann import report as _compare_ann  # noqa: F401
from ..diagnose import report as _diagnose  # noqa: F401
from ..diff_index import report as _diff_index  # noqa: F401
from ..probe_scale import report as _probe_scale  # noqa: F401
from ..sweep_threshold import report as _sweep_threshold  # noqa: F401
from .result import CiResult


def _ci(r: Payload, verdict: str | None) -> list[Section]:
    top = Section("ci: gates", r["verdict"])
    top.blocks.append(Text(r.get("summary", "")))
    top.blocks.append(
        Table(["check", "verdict"], [[name, V(v)] for name, v in r["checks"].items()])
    )
    top.blocks.append(
        Table(
            ["check", "metric", "measured", "limit", "verdict", "detail"],
            [
                [
                    g["check"],
                    g["metric"],
                    g["value"],
                    f"{g['op']} {fmt(g['limit'])}",
                    V(g["verdict"]),
                    g["detail"],
                ]
                for g in r["gates"]
            ],
        )
    )
    out = [top]
    if r.get("baseline"):
        out.append(_baseline(r["baseline"], r["checks"].get("baseline")))
    for name, sub in r["results"].items():
        out += sections_of(sub, r["checks"].get(name), manifest=False)
    out.append(_ci_manifest(r))
    return out


def _ci_manifest(r: Payload) -> Section:
    import json

    def sub_manifest(sub: Payload) -> Mapping[str, Any]:
        return sub.get("manifest") or {}

    cost = [
        [
            name,
            sub_manifest(sub).get("wall_seconds"),
            *[
                (sub_manifest(sub).get("embedding") or {}).get(k)
                for k in ("requests", "tokens", "texts", "seconds")
            ],
        ]
        for name, sub in r["results"].items()
    ]
    man = manifest_section(dict(r.get("manifest") or {}), "ci: manifest")
    man.blocks.insert(
        0,
        Table(
            ["check", "wall seconds", "embed requests", "tokens", "texts", "embed seconds"],
            cost,
            "time and embedding cost per check",
        ),
    )
    for name, sub in r["results"].items():
        text = json.dumps(sub_manifest(sub), indent=2, ensure_ascii=False)
        man.blocks.append(Code(f"{name}: manifest as JSON", text))
    return man


def _baseline(b: Payload, verdict: str | None) -> Section:
    sec = Section("ci: against the baseline (non-inferiority)", verdict)
    rows = b["rows"]
    sec.blocks.append(
        Text(
            f"{b['paired']} questions paired with {b.get('path') or 'the baseline'}; "
            f"{b['regression_count']} ranked lower, {b['improvements']} higher."
            + (
                " The question set differs from the baseline's."
                if b["question_set_changed"]
                else ""
            )
        )
    )
    if any(x["difference"] is not None for x in rows):
        alt = "difference with baseline and its interval"
        sec.blocks.append(Plot("baseline", {"rows": rows}, "baseline", alt))
    sec.blocks.append(
        Table(
            [
                "metric",
                "n",
                "baseline",
                "current",
                "difference [95%]",
                "margin",
                "verdict",
                "detail",
            ],
            [
                [
                    x["label"],
                    x["n"],
                    x["baseline"],
                    x["current"],
                    interval(x),
                    x["margin"],
                    V(x["verdict"]),
                    x["detail"],
                ]
                for x in rows
            ],
        )
    )
    if rows:
        sec.blocks.append(Text(f"Method: {rows[0]['method']}."))
    sec.blocks.append(
        Table(
            ["question", "baseline rank", "current rank", "label now"],
            [
                [q["id"], rank(q["baseline_rank"]), rank(q["current_rank"]), q["label"]]
                for q in b["regressions"][:WORST_ROWS]
            ],
            "questions that lost ground",
        )
    )
    return sec


REGRESSIONS_SHOWN = 10  # ci's questions ranked lower than in the baseline


def _value(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def ci_summary(result: CiResult) -> list[Section]:
    """The gates, the baseline comparison, the questions that lost ground, the verdict."""
    gates = Table(
        ["check", "metric", "measured", "limit", "verdict", "detail"],
        [
            [
                g.check,
                g.metric,
                _value(g.value),
                f"{g.op} {_value(g.limit)}",
                V(g.verdict),
                g.detail,
            ]
            for g in result.gates
        ],
        "gates",
    )
    sec = summary(str(result.verdict))
    for note in result.baseline_differences:
        sec.blocks.append(Text(f"baseline from another system: {note}", style="note"))
    sec.blocks.append(gates)
    base = result.baseline
    if base is not None:
        sec.blocks.append(
            Table(
                ["metric", "baseline", "current", "difference [95%]", "margin", "verdict"],
                [
                    [
                        r["label"],
                        _value(r["baseline"]),
                        _value(r["current"]),
                        interval(r).replace("–", "-"),
                        f"{r['margin']:g}",
                        V(r["verdict"]),
                    ]
                    for r in base["rows"]
                ],
                f"against the baseline ({base['paired']} paired questions)",
            )
        )
        for r in base["rows"]:
            if r["verdict"] != "PASS":
                sec.blocks.append(Text(f"  {r['label']}: {r['detail']}"))
        if base["question_set_changed"]:
            sec.blocks.append(Text("  the question set differs from the baseline's", style="note"))
        fetch = (result.per_question or {}).get("fetch", "fetch")
        absent = f"absent from the top {fetch}"
        for q in base["regressions"][:REGRESSIONS_SHOWN]:
            before = absent if q["baseline_rank"] is None else q["baseline_rank"]
            after = absent if q["current_rank"] is None else q["current_rank"]
            sec.blocks.append(Text(f"  {q['id']}: rank {before} -> {after} ({q['label']})"))
        more = base["regression_count"] - REGRESSIONS_SHOWN
        if more > 0:
            sec.blocks.append(Text(f"  ... and {more} more questions ranked lower (see --json)"))
    sec.blocks.append(Text(result.summary, style=str(result.verdict)))
    return [sec]


register("ci", _ci, {"gates", "checks", "verdict"}, ci_summary, result=CiResult)
