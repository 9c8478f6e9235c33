"""One report from any indexcheck result dicts: a self-contained HTML page and Markdown.

``write_report(payloads, folder)`` takes the ``to_dict()`` of check-index, probe-scale,
sweep-threshold, compare-ann, diagnose or ci results (a ci result renders the results of
every check it ran) and writes ``report.html``, ``report.md`` and the PNG plots. The HTML
needs nothing else: CSS is inline, plots are base64 ``data:`` URIs, and a
Content-Security-Policy forbids every request, so it reads the same offline. Each result
shows its verdict, its plots, its worst cases and its manifest (versions, fingerprints,
seed, time and embedding cost).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .plots import cosine_histogram, pyplot, threshold_plots

KINDS = ("ci", "check-index", "probe-scale", "sweep-threshold", "compare-ann", "diagnose", "judge")
WORST_ROWS = 20
PALETTE = {"blue": "#4C72B0", "orange": "#DD8452", "red": "#C44E52", "green": "#55A868"}
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CSS = """
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328;
background:#fff;margin:0}
main{max-width:1180px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:26px;margin:0 0 8px}h2{font-size:20px;margin:36px 0 8px;border-bottom:1px solid
#d0d7de;padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}tr:nth-child(even) td{background:#fbfcfd}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.v{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px}
.v-PASS{background:#dafbe1;color:#116329}.v-BLOCK,.v-FAIL{background:#ffebe9;color:#a40e26}
.v-INSUFFICIENT_EVIDENCE{background:#fff8c5;color:#7d4e00}
.banner{padding:14px 18px;border-radius:8px;font-size:18px;font-weight:600;margin:12px 0}
.b-PASS{background:#dafbe1;color:#116329}.b-BLOCK,.b-FAIL{background:#ffebe9;color:#a40e26}
.b-INSUFFICIENT_EVIDENCE{background:#fff8c5;color:#7d4e00}
img{max-width:100%;height:auto;border:1px solid #d0d7de;margin:6px 0}
pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
p.note{color:#57606a}
"""


@dataclass
class _Table:
    headers: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass
class _Image:
    path: Path
    alt: str


@dataclass
class _Text:
    text: str


@dataclass
class _Code:
    summary: str
    text: str


@dataclass
class _Html:
    """A fragment whose data the producer escaped (report/judge.py), with its Markdown."""

    html: str
    markdown: str


@dataclass
class _Section:
    title: str
    verdict: str | None
    blocks: list[Any] = field(default_factory=list)
    anchor: str = ""


def kind_of(payload: Mapping[str, Any]) -> str:
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
        ("check-index", {"chunks", "findings", "threshold"}),
    ):
        if need <= keys:
            return kind
    raise InputError("not an indexcheck result: pass the JSON written by --json")


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, list | dict):
        return json.dumps(x, ensure_ascii=False)
    return str(x)


def _ok_verdict(ok: Any) -> str:
    return "PASS" if ok else "FAIL"


def _flat(d: Mapping[str, Any], prefix: str = "") -> list[list[Any]]:
    rows: list[list[Any]] = []
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            rows += _flat(value, name + ".")
        else:
            rows.append([name, value])
    return rows


def _manifest(m: Mapping[str, Any], title: str) -> _Section:
    """Versions, store and fingerprint, seed, time and embedding cost, then the raw JSON."""
    sec = _Section(title, None)
    if not m:
        sec.blocks.append(_Text("No manifest was recorded."))
        return sec
    sec.blocks.append(_Table(["field", "value"], _flat(m)))
    sec.blocks.append(_Code("manifest as JSON", json.dumps(m, indent=2, ensure_ascii=False)))
    return sec


class _Builder:
    """Turns result dicts into sections, writing each plot into ``folder`` once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def png(self, stem: str) -> Path:
        self.count += 1
        return self.folder / f"{self.count:02d}-{stem}.png"

    def save(self, fig: Any, stem: str) -> Path:
        fig.tight_layout()
        path = self.png(stem)
        fig.savefig(path)
        pyplot().close(fig)
        return path

    def sections(
        self, payload: Mapping[str, Any], verdict: str | None = None, manifest: bool = True
    ) -> list[_Section]:
        """A result's sections; ``manifest=False`` leaves its manifest to the caller (ci)."""
        kind = kind_of(payload)
        build = getattr(self, "_" + kind.replace("-", "_"))
        out: list[_Section] = build(payload, verdict)
        if kind != "ci" and manifest:
            out.append(_manifest(payload.get("manifest") or {}, f"{kind}: manifest"))
        return out

    # -- one builder per result kind ---------------------------------------------------

    def _judge(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        from .judge import claims_html, claims_markdown, summary_rows

        sec = _Section("judge: claims against their context", verdict or _ok_verdict(r["ok"]))
        sec.blocks.append(_Table(["verdict / status", "count"], summary_rows(r)))
        sec.blocks.append(_Text("A supported claim is supported by the context, not proven true."))
        sec.blocks.append(_Html(claims_html(r), claims_markdown(r)))
        return [sec]

    def _check_index(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        sec = _Section("check-index: stored vectors vs fresh embeddings", verdict)
        sec.verdict = verdict or _ok_verdict(r["ok"])
        sec.blocks.append(
            _Text(
                f"{r['checked']} chunks checked ({r['mode']}); minimum cosine "
                f"{_fmt(r['min_cosine'])}, median {_fmt(r['median_cosine'])}, "
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
            sec.blocks.append(_Image(path, "histogram of cosines"))
        if r["findings"]:
            sec.blocks.append(
                _Table(
                    ["finding", "severity", "message"],
                    [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
                )
            )
        worst = sorted(
            r["chunks"],
            key=lambda c: (c["status"] == "ok", -1 if c["cosine"] is None else c["cosine"]),
        )[:WORST_ROWS]
        sec.blocks.append(
            _Table(
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

    def _probe_scale(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        sec = _Section("probe-scale: the store's score formula", verdict or _ok_verdict(r["ok"]))
        sec.blocks.append(_Text(r["message"]))
        sec.blocks.append(
            _Table(
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
                from ..core.scale import CATALOGUE

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
            sec.blocks.append(_Image(path, "reported score against the exact variable"))
        sec.blocks.append(
            _Table(
                ["formula", "fits", "max residual", "worst residual / tolerance"],
                [
                    [c["formula"], c["fits"], c["max_residual"], c["worst_ratio"]]
                    for c in r.get("candidates") or []
                ],
                "candidate formulas, best first",
            )
        )
        return [sec]

    def _sweep_threshold(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        sec = _Section("sweep-threshold: refusal threshold", verdict or _ok_verdict(r["ok"]))
        sec.blocks.append(_Text(r["verdict"]))
        self.count += 1
        sub = self.folder / f"{self.count:02d}-sweep"
        for path in threshold_plots(dict(r), sub):
            sec.blocks.append(_Image(path, path.stem))
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
            _Table(
                ["question", "kind", "chunk", "score", "cosine"],
                rows,
                "hardest cases: weakest in-scope, strongest out-of-scope",
            )
        )
        return [sec]

    def _compare_ann(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        sec = _Section("compare-ann: approximate vs exact search", verdict)
        sec.verdict = verdict or _ok_verdict(r["ok"])
        sec.blocks.append(
            _Text(
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
        sec.blocks.append(_Image(path, "recall and miss rate by fetch depth"))
        sec.blocks.append(
            _Table(
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
            _Table(
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

    def _diagnose(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        sec = _Section("diagnose: where each question's chunk was lost", verdict)
        sec.verdict = verdict or _ok_verdict(r["ok"])
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
        sec.blocks.append(_Image(path, "questions per label"))
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
        sec.blocks.append(_Table(["metric", "exact ranking", "backend ranking"], metric_rows))
        failing = [q for q in r["questions"] if q["label"] not in good]
        sec.blocks.append(
            _Table(
                ["question", "label", "exact rank", "backend rank", "detail"],
                [
                    [q["id"], q["label"], _rank(q["exact_rank"]), _rank(q["ann_rank"]), q["detail"]]
                    for q in failing[:WORST_ROWS]
                ],
                f"questions that did not end where they should ({len(failing)})",
            )
        )
        return [sec]

    def _ci(self, r: Mapping[str, Any], verdict: str | None) -> list[_Section]:
        top = _Section("ci: gates", r["verdict"])
        top.blocks.append(_Text(r.get("summary", "")))
        top.blocks.append(
            _Table(["check", "verdict"], [[name, _V(v)] for name, v in r["checks"].items()])
        )
        top.blocks.append(
            _Table(
                ["check", "metric", "measured", "limit", "verdict", "detail"],
                [
                    [
                        g["check"],
                        g["metric"],
                        g["value"],
                        f"{g['op']} {_fmt(g['limit'])}",
                        _V(g["verdict"]),
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
        man = _manifest(m, "ci: manifest")
        man.blocks.insert(
            0,
            _Table(
                ["check", "wall seconds", "embed requests", "tokens", "texts", "embed seconds"],
                cost,
                "time and embedding cost per check",
            ),
        )
        for name, sub in r["results"].items():
            text = json.dumps(sub.get("manifest") or {}, indent=2, ensure_ascii=False)
            man.blocks.append(_Code(f"{name}: manifest as JSON", text))
        out.append(man)
        return out

    def _baseline(self, b: Mapping[str, Any], verdict: str | None) -> _Section:
        sec = _Section("ci: against the baseline (non-inferiority)", verdict)
        rows = b["rows"]
        sec.blocks.append(
            _Text(
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
            sec.blocks.append(_Image(path, "difference with baseline and its interval"))
        sec.blocks.append(
            _Table(
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
                        _interval(x),
                        x["margin"],
                        _V(x["verdict"]),
                        x["detail"],
                    ]
                    for x in rows
                ],
            )
        )
        if rows:
            sec.blocks.append(_Text(f"Method: {rows[0]['method']}."))
        sec.blocks.append(
            _Table(
                ["question", "baseline rank", "current rank", "label now"],
                [
                    [q["id"], _rank(q["baseline_rank"]), _rank(q["current_rank"]), q["label"]]
                    for q in b["regressions"][:WORST_ROWS]
                ],
                "questions that lost ground",
            )
        )
        return sec


class _V(str):
    """A verdict cell: rendered as a coloured badge in HTML, bold in Markdown."""


def _rank(r: int | None) -> str:
    return "–" if r is None else str(r + 1)


def _interval(x: Mapping[str, Any]) -> str:
    if x["difference"] is None:
        return "–"
    return f"{x['difference']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]"


# -- rendering ---------------------------------------------------------------------------


def _cell_html(v: Any) -> str:
    if isinstance(v, _V):
        return f'<td><span class="v v-{html.escape(v)}">{html.escape(v)}</span></td>'
    num = isinstance(v, int | float) and not isinstance(v, bool)
    return f"<td{' class=num' if num else ''}>{html.escape(_fmt(v))}</td>"


def _html(title: str, verdict: str, sections: list[_Section]) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{CSS}{_judge_css()}</style></head><body><main>",
        f"<h1>{html.escape(title)}</h1>",
        f'<div class="banner b-{verdict}">Verdict: {verdict}</div>',
        "<table><tr><th>section</th><th>verdict</th></tr>",
    ]
    for s in sections:
        if s.verdict:
            out.append(
                f'<tr><td><a href="#{s.anchor}">{html.escape(s.title)}</a></td>'
                f"{_cell_html(_V(s.verdict))}</tr>"
            )
    out.append("</table>")
    for s in sections:
        badge = f' <span class="v v-{s.verdict}">{s.verdict}</span>' if s.verdict else ""
        out.append(f'<h2 id="{s.anchor}">{html.escape(s.title)}{badge}</h2>')
        for b in s.blocks:
            if isinstance(b, _Text):
                out.append(f"<p>{html.escape(b.text)}</p>")
            elif isinstance(b, _Html):
                out.append(b.html)
            elif isinstance(b, _Image):
                data = base64.b64encode(b.path.read_bytes()).decode("ascii")
                out.append(f'<img alt="{html.escape(b.alt)}" src="data:image/png;base64,{data}">')
            elif isinstance(b, _Code):
                out.append(
                    f"<details><summary>{html.escape(b.summary)}</summary>"
                    f"<pre><code>{html.escape(b.text)}</code></pre></details>"
                )
            elif isinstance(b, _Table):
                if b.caption:
                    out.append(f"<h3>{html.escape(b.caption)}</h3>")
                if not b.rows:
                    out.append('<p class="note">None.</p>')
                    continue
                head = "".join(f"<th>{html.escape(h)}</th>" for h in b.headers)
                body = "".join(
                    "<tr>" + "".join(_cell_html(v) for v in row) + "</tr>" for row in b.rows
                )
                out.append(f"<table><tr>{head}</tr>{body}</table>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def _judge_css() -> str:
    from .judge import CSS as JUDGE_CSS

    return JUDGE_CSS


def _md_cell(v: Any) -> str:
    text = f"**{v}**" if isinstance(v, _V) else _fmt(v)
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(title: str, verdict: str, sections: list[_Section], folder: Path) -> str:
    out = [f"# {title}", "", f"**Verdict: {verdict}**", "", "| section | verdict |", "|---|---|"]
    out += [f"| {s.title} | **{s.verdict}** |" for s in sections if s.verdict]
    for s in sections:
        out += ["", f"## {s.title}" + (f" — {s.verdict}" if s.verdict else ""), ""]
        for b in s.blocks:
            if isinstance(b, _Text):
                out += [b.text, ""]
            elif isinstance(b, _Html):
                out += [b.markdown, ""]
            elif isinstance(b, _Image):
                out += [f"![{b.alt}]({b.path.relative_to(folder).as_posix()})", ""]
            elif isinstance(b, _Code):
                out += [
                    f"<details><summary>{b.summary}</summary>",
                    "",
                    "```json",
                    b.text,
                    "```",
                    "",
                    "</details>",
                    "",
                ]
            elif isinstance(b, _Table):
                if b.caption:
                    out += [f"### {b.caption}", ""]
                if not b.rows:
                    out += ["None.", ""]
                    continue
                out.append("| " + " | ".join(b.headers) + " |")
                out.append("|" + "---|" * len(b.headers))
                out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in b.rows]
                out.append("")
    return "\n".join(out) + "\n"


def write_report(
    payloads: Sequence[Mapping[str, Any]], folder: Path, title: str = "indexcheck report"
) -> list[Path]:
    """Write ``report.html`` (self-contained), ``report.md`` and PNG plots into ``folder``.

    ``payloads``: result dicts (``to_dict()`` or the ``--json`` file of any command).
    Returns [report.html, report.md, *plots]. Raises InputError for a dict that is not
    an indexcheck result.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    builder = _Builder(folder)
    sections: list[_Section] = []
    for p in payloads:
        sections += builder.sections(p)
    for i, s in enumerate(sections):
        s.anchor = f"s{i + 1}"
    order = {"PASS": 0, "INSUFFICIENT_EVIDENCE": 1, "FAIL": 2, "BLOCK": 2}
    verdicts = [s.verdict for s in sections if s.verdict]
    overall = max(verdicts, key=order.__getitem__, default="PASS")
    if overall == "FAIL" and any(kind_of(p) == "ci" for p in payloads):
        overall = "BLOCK"
    page = folder / "report.html"
    page.write_text(_html(title, overall, sections), encoding="utf-8")
    md = folder / "report.md"
    md.write_text(_markdown(title, overall, sections, folder), encoding="utf-8")
    plots = sorted(p for p in folder.rglob("*.png"))
    return [page, md, *plots]
