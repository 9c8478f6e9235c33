"""Report sections of every command's result, built from its JSON form (``to_dict()``).

One builder per command, shared by the result types' ``sections()`` methods and by
``indexcheck report`` style callers that only hold a ``--json`` file. Figures are
:class:`~indexcheck.sections.Plot` blocks that carry their data; the report layer draws them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import InputError
from ..sections import (
    WORST_ROWS,
    Code,
    Fragment,
    Plot,
    Section,
    Table,
    Text,
    V,
    fmt,
    interval,
    manifest_section,
    ok_verdict,
    rank,
)

KINDS = (
    "ci",
    "check-index",
    "probe-scale",
    "sweep-threshold",
    "compare-ann",
    "diagnose",
    "judge",
    "diff-index",
)
_GOOD = ("OK", "REFUSED_OK", "REFUSED_BY_CONTENT")
DIFF_ROWS = 500  # diff-index rows in a report file; the JSON holds every one

Payload = Mapping[str, Any]


def kind_of(payload: Payload) -> str:
    """Which command produced a result dict (its manifest, else its keys)."""
    cmd = (payload.get("manifest") or {}).get("command")
    if cmd in KINDS:
        return str(cmd)
    keys = set(payload)
    for kind, need in (
        ("ci", {"gates", "checks", "verdict"}),
        ("judge", {"answers", "supported_rate", "prompt_version"}),
        ("compare-ann", {"by_fetch", "recommended_fetch"}),
        ("probe-scale", {"transform", "candidates", "pairs"}),
        ("sweep-threshold", {"table", "recommended_threshold"}),
        ("diagnose", {"metrics", "counts", "questions"}),
        ("diff-index", {"compared", "old_count", "new_count", "chunks"}),
        ("check-index", {"chunks", "findings", "threshold"}),
    ):
        if need <= keys:
            return kind
    raise InputError("not an indexcheck result: pass the JSON written by --json")


def sections_of(
    payload: Payload, verdict: str | None = None, manifest: bool = True
) -> list[Section]:
    """A result dict's report sections; ``manifest=False`` leaves its manifest to the
    caller (ci renders its checks' manifests in its own section)."""
    kind = kind_of(payload)
    out = _BUILDERS[kind](payload, verdict)
    if kind != "ci" and manifest:
        out.append(manifest_section(payload.get("manifest") or {}, f"{kind}: manifest"))
    return out


def _check_index(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("check-index: stored vectors vs fresh embeddings", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(
        Text(
            f"{r['checked']} chunks checked ({r['mode']}); minimum cosine "
            f"{fmt(r['min_cosine'])}, median {fmt(r['median_cosine'])}, "
            f"{r['below_threshold']} under {r['threshold']:g}."
        )
    )
    cos = [c["cosine"] for c in r["chunks"] if c["cosine"] is not None]
    if cos:
        title = (
            f"check-index: {r['counts'].get('ok', 0)}/{r['checked']} chunks at "
            f">= {r['threshold']:g}"
        )
        data = {"cosines": cos, "threshold": float(r["threshold"]), "title": title}
        sec.blocks.append(
            Plot("cosine-histogram", data, "check-index-cosines", "histogram of cosines")
        )
    if r["findings"]:
        sec.blocks.append(
            Table(
                ["finding", "severity", "message"],
                [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
            )
        )
    for f in r["findings"]:
        stretches = f["details"].get("stretches") if f["kind"] == "shift" else None
        if stretches:
            sec.blocks.append(_stretches(f["details"]))
    worst = sorted(
        r["chunks"],
        key=lambda c: (c["status"] == "ok", -1 if c["cosine"] is None else c["cosine"]),
    )[:WORST_ROWS]
    cols = ["position", "id", "cosine", "status", "holds_vector_of", "offset"]
    cols += [k for k in ("ref_doc_id", "text") if any(c.get(k) for c in worst)]
    names = {"holds_vector_of": "holds vector of", "ref_doc_id": "document"}
    rows = [[c[k] for k in cols] for c in worst]
    sec.blocks.append(
        Table([names.get(k, k) for k in cols], rows, "worst chunks (lowest cosine first)")
    )
    return [sec]


def _stretches(d: Payload) -> Code:
    """The root shift finding's stretches, collapsed (``<details>``): one line each."""
    lines = [f"{'start':>8} {'end':>8} {'offset':>7} {'chunks':>7}  trigger (repeat)"]
    for s in d["stretches"]:
        trig = "-" if s["trigger_id"] is None else f"{s['trigger_id']} ({s['trigger_position']})"
        lines.append(f"{s['start']:>8} {s['end']:>8} {s['offset']:>+7d} {s['chunks']:>7}  {trig}")
    shown, total = len(d["stretches"]), d.get("stretches_total", len(d["stretches"]))
    if total > shown:
        lines.append(f"... {total - shown} more stretches (first {shown} listed)")
    return Code(
        f"the shift's {total} stretches (position, offset, the repeat behind each)",
        "\n".join(lines),
    )


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


def _sweep_threshold(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("sweep-threshold: refusal threshold", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(Text(r["verdict"]))
    sec.blocks.append(Plot("threshold", r, "sweep", "sweep-threshold figures"))
    qs = r["questions"]
    ins = [q for q in qs if q["in_scope"] and q.get("expected_score")]
    oos = [q for q in qs if not q["in_scope"] and not q["top_is_refusal"]]
    ins.sort(key=lambda q: q["expected_score"]["backend"] or 0.0)
    oos.sort(key=lambda q: -(q["top_score"]["backend"] or 0.0))
    rows = [
        [q["id"], "in-scope: best expected", q["expected_id"], *_scores(q["expected_score"])]
        for q in ins[:10]
    ] + [
        [q["id"], "out-of-scope: top result", q["top_id"], *_scores(q["top_score"])]
        for q in oos[:10]
    ]
    sec.blocks.append(
        Table(
            ["question", "kind", "chunk", "score", "cosine"],
            rows,
            "hardest cases: weakest in-scope, strongest out-of-scope",
        )
    )
    return [sec]


def _scores(s: Payload) -> list[Any]:
    return [s["backend"], s["cosine"]]


def _compare_ann(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("compare-ann: approximate vs exact search", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(
        Text(
            f"{r['queries']} queries ({r['query_source']}), k={r['k']}, ground truth "
            f"{r['ground_truth']}. {r['recommendation']}"
        )
    )
    if r.get("compression"):
        from .compare_ann.wording import compression_line

        line = compression_line(r["compression"], r.get("truth_vectors"), always=True)
        sec.blocks.append(Text(line or ""))
    sec.blocks.append(
        Plot("compare-ann", r, "compare-ann", "miss rate and recall against fetch depth")
    )
    cols: tuple[str, ...] = (
        "fetch",
        "recall_at_k",
        "best_miss_rate",
        "best_misses",
        "mean_rank_displacement",
        "ann_seconds",
    )
    heads = ["fetch", "recall@k", "best miss rate", "misses", "rank displacement", "seconds"]
    if r.get("truth_vectors"):
        cols += ("search_recall_at_k", "search_best_miss_rate")
        heads += ["search-only recall@k", "search-only miss rate"]
    body = [[x.get(c) for c in cols] for x in r["by_fetch"]]
    loss = r.get("compression_loss")
    if loss:
        body.append(
            ["exact (compressed)", loss["recall_at_k"], loss["best_miss_rate"],
             loss["best_misses"], None, None, None, None]
        )  # fmt: skip
    sec.blocks.append(Table(heads, body))
    wcols = ("query", "exact_best_id", "missed_at_fetch", "best_position_at_max_fetch")
    sec.blocks.append(
        Table(
            ["query", "exact best id", "missed at fetch", "best position at max fetch"],
            [[w[c] for c in wcols] for w in r["worst_queries"][:WORST_ROWS]],
            "worst queries",
        )
    )
    return [sec]


def shown_caption(what: str, total: int, shown: int = WORST_ROWS) -> str:
    """A table caption with its row count, saying how many rows it leaves out."""
    if total <= shown:
        return f"{what} ({total})"
    return f"{what} ({total}; the first {shown} shown, {total - shown} more in the JSON)"


def _diagnose(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("diagnose: where each question's chunk was lost", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(
        Text(
            f"k={r['k']}, fetch={r['fetch']}, threshold {r['threshold'] or 'none'}, "
            f"ground truth {r['ground_truth']}."
        )
    )
    counts = {k: v for k, v in r["counts"].items() if v}
    data = {"counts": counts, "good": list(_GOOD), "k": r["k"]}
    sec.blocks.append(Plot("diagnose-labels", data, "diagnose-labels", "questions per label"))
    examples = r.get("examples") or {}
    sec.blocks.append(
        Table(
            ["label", "questions", "examples"],
            [[label, n, ", ".join(examples.get(label, []))] for label, n in counts.items()],
        )
    )
    metric_rows = []
    for name in ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k"):
        cells = []
        for side in ("exact", "ann"):
            m = r["metrics"][side][name]
            cells.append(
                "–"
                if m["value"] is None
                else f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}] (n={m['observed']})"
            )
        metric_rows.append([name.replace("_at_k", f"@{r['k']}"), *cells])
    sec.blocks.append(Table(["metric", "exact ranking", "backend ranking"], metric_rows))
    failing = [q for q in r["questions"] if q["label"] not in _GOOD]
    sec.blocks.append(
        Table(
            ["question", "label", "exact rank", "backend rank", "detail"],
            [
                [q["id"], q["label"], rank(q["exact_rank"]), rank(q["ann_rank"]), q["detail"]]
                for q in failing[:WORST_ROWS]
            ],
            shown_caption("questions that did not end where they should", len(failing)),
        )
    )
    return [sec]


def _diff_index(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("diff-index: the new index against the old one", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(
        Text(
            f"{r['compared']} texts in both indexes compared at cosine >= {r['threshold']:g} "
            f"(minimum {fmt(r['min_cosine'])}); old {r['old_count']} vectors, new "
            f"{r['new_count']}."
        )
    )
    sec.blocks.append(Table(["status", "chunks"], [[k, v] for k, v in r["counts"].items()]))
    new = r.get("new_texts")
    if new:
        sec.blocks.append(
            Text(
                f"New and changed texts re-embedded: {new.get('checked', 0)} (minimum cosine "
                f"{fmt(new.get('min_cosine'))}, median {fmt(new.get('median_cosine'))})."
            )
        )
    if r["findings"]:
        sec.blocks.append(
            Table(
                ["finding", "severity", "message"],
                [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
            )
        )
    rows = r["chunks"]
    cols = ("id", "old_id", "status", "checked", "cosine", "holds_vector_of")
    sec.blocks.append(
        Table(
            ["id", "old id", "status", "re-embedded", "cosine", "holds vector of"],
            [[c.get(k) for k in cols] for c in rows[:DIFF_ROWS]],
            "chunks that are not unchanged"
            + (
                f" (first {DIFF_ROWS} of {len(rows)}; all in the JSON)"
                if len(rows) > DIFF_ROWS
                else ""
            ),
        )
    )
    return [sec]


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


def judge_rows(payload: Payload) -> list[list[Any]]:
    """Counts per verdict and status, and the supported rate, as table rows."""
    from .judge.claims import Verdict

    r = payload["supported_rate"]
    rows: list[list[Any]] = [[v.value, payload["counts"][v.value]] for v in Verdict]
    rows += [[s, n] for s, n in payload["statuses"].items()]
    if r["value"] is not None:
        rows.append(
            [
                "supported rate [95% Wilson]",
                f"{r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}] ({r['k']}/{r['n']})",
            ]
        )
    return rows


def _judge(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("judge: claims against their context", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(Table(["verdict / status", "count"], judge_rows(r)))
    sec.blocks.append(Text("A supported claim is supported by the context, not proven true."))
    sec.blocks.append(Fragment("claims", r))
    return [sec]


_BUILDERS: dict[str, Callable[[Payload, str | None], list[Section]]] = {
    "check-index": _check_index,
    "probe-scale": _probe_scale,
    "sweep-threshold": _sweep_threshold,
    "compare-ann": _compare_ann,
    "diagnose": _diagnose,
    "ci": _ci,
    "judge": _judge,
    "diff-index": _diff_index,
}

__all__ = ["KINDS", "judge_rows", "kind_of", "sections_of"]
