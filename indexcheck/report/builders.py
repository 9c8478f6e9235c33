"""One set of section builders, shared by the HTML and Markdown renderers.

``Builder(folder).sections(payload)`` turns any command's result dict into
:class:`~.sections.Section` objects, writing each plot into ``folder`` once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .plots import cosine_histogram, pyplot, threshold_plots
from .sections import (
    PALETTE,
    WORST_ROWS,
    Code,
    Html,
    Image,
    Section,
    Table,
    Text,
    V,
    fmt,
    interval,
    kind_of,
    manifest_section,
    ok_verdict,
    rank,
)


class Builder:
    """Turns result dicts into sections, writing each plot into ``folder`` once."""

    def __init__(self, folder: Path, numbered: bool = True) -> None:
        self.folder = folder
        self.count = 0
        self.numbered = numbered  # plot names NN-STEM.png (several results), else STEM.png

    def png(self, stem: str) -> Path:
        self.count += 1
        name = f"{self.count:02d}-{stem}.png" if self.numbered else f"{stem}.png"
        return self.folder / name

    def save(self, fig: Any, stem: str) -> Path:
        fig.tight_layout()
        path = self.png(stem)
        fig.savefig(path)
        pyplot().close(fig)
        return path

    def sections(
        self, payload: Mapping[str, Any], verdict: str | None = None, manifest: bool = True
    ) -> list[Section]:
        """A result's sections; ``manifest=False`` leaves its manifest to the caller (ci)."""
        kind = kind_of(payload)
        build = getattr(self, "_" + kind.replace("-", "_"))
        out: list[Section] = build(payload, verdict)
        if kind != "ci" and manifest:
            out.append(manifest_section(payload.get("manifest") or {}, f"{kind}: manifest"))
        return out

    # -- one builder per result kind ---------------------------------------------------

    def _judge(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        from .judge import claims_html, claims_markdown, summary_rows

        sec = Section("judge: claims against their context", verdict or ok_verdict(r["ok"]))
        sec.blocks.append(Table(["verdict / status", "count"], summary_rows(r)))
        sec.blocks.append(Text("A supported claim is supported by the context, not proven true."))
        sec.blocks.append(Html(claims_html(r), claims_markdown(r)))
        return [sec]

    def _check_index(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        sec = Section("check-index: stored vectors vs fresh embeddings", verdict)
        sec.verdict = verdict or ok_verdict(r["ok"])
        sec.blocks.append(
            Text(
                f"{r['checked']} chunks checked ({r['mode']}); minimum cosine "
                f"{fmt(r['min_cosine'])}, median {fmt(r['median_cosine'])}, "
                f"{r['below_threshold']} under {r['threshold']:g}."
            )
        )
        cos = np.asarray([c["cosine"] for c in r["chunks"] if c["cosine"] is not None])
        if cos.size:
            path = cosine_histogram(
                cos,
                float(r["threshold"]),
                self.png("check-index-cosines"),
                f"check-index: {r['counts'].get('ok', 0)}/{r['checked']} chunks at "
                f">= {r['threshold']:g}",
            )
            sec.blocks.append(Image(path, "histogram of cosines"))
        if r["findings"]:
            sec.blocks.append(
                Table(
                    ["finding", "severity", "message"],
                    [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
                )
            )
        worst = sorted(
            r["chunks"],
            key=lambda c: (c["status"] == "ok", -1 if c["cosine"] is None else c["cosine"]),
        )[:WORST_ROWS]
        sec.blocks.append(
            Table(
                ["position", "id", "cosine", "status", "holds vector of", "offset"],
                [
                    [
                        c["position"],
                        c["id"],
                        c["cosine"],
                        c["status"],
                        c["holds_vector_of"],
                        c["offset"],
                    ]
                    for c in worst
                ],
                "worst chunks (lowest cosine first)",
            )
        )
        return [sec]

    def _probe_scale(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        sec = Section("probe-scale: the store's score formula", verdict or ok_verdict(r["ok"]))
        sec.blocks.append(Text(r["message"]))
        sec.blocks.append(
            Table(
                ["measured", "documented", "higher is better", "to cosine", "source"],
                [
                    [
                        r["transform"],
                        r["documented"],
                        r["higher_is_better"],
                        r["to_cosine"],
                        r["source"],
                    ]
                ],
            )
        )
        var = r.get("variable") or "cos"
        pairs = r.get("pairs") or []
        if pairs:
            plt = pyplot()
            fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
            ax.scatter(
                [p[var] for p in pairs],
                [p["score"] for p in pairs],
                s=14,
                color=PALETTE["blue"],
                label="reported (query, id) pairs",
            )
            if r["ok"] and r["transform"]:
                from ..core.probe_scale import CATALOGUE

                xs = np.linspace(min(p[var] for p in pairs), max(p[var] for p in pairs), 200)
                ax.plot(
                    xs,
                    CATALOGUE[r["transform"]].apply(xs),
                    color=PALETTE["red"],
                    label=f"score = {r['transform']}",
                )
            ax.set_xlabel(f"{var} computed from the fetched vectors")
            ax.set_ylabel("score reported by the store")
            ax.set_title("probe-scale: reported score against the exact variable")
            ax.legend(fontsize=8)
            path = self.save(fig, "probe-scale")
            sec.blocks.append(Image(path, "reported score against the exact variable"))
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

    def _sweep_threshold(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        sec = Section("sweep-threshold: refusal threshold", verdict or ok_verdict(r["ok"]))
        sec.blocks.append(Text(r["verdict"]))
        self.count += 1
        sub = self.folder / f"{self.count:02d}-sweep"
        for path in threshold_plots(dict(r), sub):
            sec.blocks.append(Image(path, path.stem))
        qs = r["questions"]
        ins = [q for q in qs if q["in_scope"] and q.get("expected_score")]
        oos = [q for q in qs if not q["in_scope"] and not q["top_is_refusal"]]
        ins.sort(key=lambda q: q["expected_score"]["backend"] or 0.0)
        oos.sort(key=lambda q: -(q["top_score"]["backend"] or 0.0))
        rows = [
            [
                q["id"],
                "in-scope: best expected",
                q["expected_id"],
                q["expected_score"]["backend"],
                q["expected_score"]["cosine"],
            ]
            for q in ins[:10]
        ] + [
            [
                q["id"],
                "out-of-scope: top result",
                q["top_id"],
                q["top_score"]["backend"],
                q["top_score"]["cosine"],
            ]
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

    def _compare_ann(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        sec = Section("compare-ann: approximate vs exact search", verdict)
        sec.verdict = verdict or ok_verdict(r["ok"])
        sec.blocks.append(
            Text(
                f"{r['queries']} queries ({r['query_source']}), k={r['k']}, ground truth "
                f"{r['ground_truth']}. {r['recommendation']}"
            )
        )
        rows = r["by_fetch"]
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
        xs = list(range(len(rows)))  # evenly spaced depths, labelled with their value
        for key, color, label in (
            ("recall_at_k", PALETTE["blue"], f"recall@{r['k']}"),
            ("best_miss_rate", PALETTE["orange"], "best-chunk miss rate"),
        ):
            ys = np.asarray([row[key] for row in rows], dtype=float)
            iv = np.asarray(
                [[np.nan if v is None else v for v in row[key + "_interval"]] for row in rows]
            )
            err = np.nan_to_num(np.abs(iv.T - ys))
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=color, label=label)
        ax.axhline(r["target"], color=PALETTE["red"], linestyle="--", label="target miss rate")
        ax.set_xticks(xs, [str(row["fetch"]) for row in rows])
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("fetch depth (results asked, then re-ranked to k)")
        ax.set_title("compare-ann: recall and best-chunk misses by fetch depth (95% CI)")
        ax.legend(fontsize=8)
        path = self.save(fig, "compare-ann")
        sec.blocks.append(Image(path, "recall and miss rate by fetch depth"))
        sec.blocks.append(
            Table(
                ["fetch", "recall@k", "best miss rate", "misses", "rank displacement", "seconds"],
                [
                    [
                        x["fetch"],
                        x["recall_at_k"],
                        x["best_miss_rate"],
                        x["best_misses"],
                        x["mean_rank_displacement"],
                        x["ann_seconds"],
                    ]
                    for x in rows
                ],
            )
        )
        sec.blocks.append(
            Table(
                ["query", "exact best id", "missed at fetch", "best position at max fetch"],
                [
                    [
                        w["query"],
                        w["exact_best_id"],
                        w["missed_at_fetch"],
                        w["best_position_at_max_fetch"],
                    ]
                    for w in r["worst_queries"][:WORST_ROWS]
                ],
                "worst queries",
            )
        )
        return [sec]

    def _diagnose(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
        sec = Section("diagnose: where each question's chunk was lost", verdict)
        sec.verdict = verdict or ok_verdict(r["ok"])
        counts = {k: v for k, v in r["counts"].items() if v}
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 0.5 + 0.4 * max(1, len(counts))), dpi=110)
        good = {"OK", "REFUSED_OK", "REFUSED_BY_CONTENT"}
        labels = list(counts)
        ax.barh(
            labels,
            [counts[x] for x in labels],
            color=[PALETTE["green"] if x in good else PALETTE["red"] for x in labels],
        )
        ax.invert_yaxis()
        ax.set_xlabel("questions")
        ax.set_title(f"diagnose: first stage that lost the expected chunk (k={r['k']})")
        path = self.save(fig, "diagnose-labels")
        sec.blocks.append(Image(path, "questions per label"))
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
        failing = [q for q in r["questions"] if q["label"] not in good]
        sec.blocks.append(
            Table(
                ["question", "label", "exact rank", "backend rank", "detail"],
                [
                    [q["id"], q["label"], rank(q["exact_rank"]), rank(q["ann_rank"]), q["detail"]]
                    for q in failing[:WORST_ROWS]
                ],
                f"questions that did not end where they should ({len(failing)})",
            )
        )
        return [sec]

    def _ci(self, r: Mapping[str, Any], verdict: str | None) -> list[Section]:
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
            out.append(self._baseline(r["baseline"], r["checks"].get("baseline")))
        for name, sub in r["results"].items():
            out += self.sections(sub, r["checks"].get(name), manifest=False)
        m = dict(r.get("manifest") or {})
        cost = [
            [
                name,
                (sub.get("manifest") or {}).get("wall_seconds"),
                *[
                    ((sub.get("manifest") or {}).get("embedding") or {}).get(k)
                    for k in ("requests", "tokens", "texts", "seconds")
                ],
            ]
            for name, sub in r["results"].items()
        ]
        man = manifest_section(m, "ci: manifest")
        man.blocks.insert(
            0,
            Table(
                ["check", "wall seconds", "embed requests", "tokens", "texts", "embed seconds"],
                cost,
                "time and embedding cost per check",
            ),
        )
        for name, sub in r["results"].items():
            text = json.dumps(sub.get("manifest") or {}, indent=2, ensure_ascii=False)
            man.blocks.append(Code(f"{name}: manifest as JSON", text))
        out.append(man)
        return out

    def _baseline(self, b: Mapping[str, Any], verdict: str | None) -> Section:
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
            plt = pyplot()
            fig, ax = plt.subplots(figsize=(7, 0.9 + 0.7 * len(rows)), dpi=110)
            for i, x in enumerate(rows):
                if x["difference"] is None:
                    continue
                color = {"PASS": PALETTE["green"], "BLOCK": PALETTE["red"]}.get(
                    x["verdict"], PALETTE["orange"]
                )
                lo, hi = x["difference"] - x["low"], x["high"] - x["difference"]
                ax.errorbar(
                    [x["difference"]],
                    [i],
                    xerr=[[lo], [hi]],
                    fmt="o",
                    capsize=5,
                    color=color,
                    markersize=8,
                )
                ax.axvline(-x["margin"], color=PALETTE["red"], linestyle="--", linewidth=1)
            ax.axvline(0, color="#888888", linewidth=1)
            ax.set_yticks(range(len(rows)), [x["label"] for x in rows])
            ax.set_ylim(-0.7, len(rows) - 0.3)
            ax.set_xlabel("current - baseline, 95% paired bootstrap interval (dashed: -margin)")
            ax.set_title("non-inferiority against the baseline")
            path = self.save(fig, "baseline")
            sec.blocks.append(Image(path, "difference with baseline and its interval"))
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
