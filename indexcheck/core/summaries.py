"""Terminal summaries: the short sections (``terminal=True``) each result shows on stdout.

They use the same neutral structure as the report (:mod:`indexcheck.sections`) and go
through the same rich renderer (:mod:`indexcheck.report.terminal`), which escapes data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sections import Section, Table, Text, V, interval, ok_verdict
from .diff_index.report import diff_index_summary
from .filter_summaries import ann_filter_lines, short_cell, short_suffix, threshold_filter_lines
from .summary_kit import SHOWN_ROWS, _f4, summary

if TYPE_CHECKING:
    from .check_index import CheckIndexResult
    from .ci import CiResult
    from .compare_ann import AnnResult
    from .diagnose import DiagnoseResult
    from .sweep_threshold import SweepResult
    from .transforms import ScaleResult

WORST_SHOWN = 5  # compare-ann's worst queries
FAILING_SHOWN = 10  # diagnose's questions that did not end where they should
REGRESSIONS_SHOWN = 10  # ci's questions ranked lower than in the baseline


def check_index_summary(result: CheckIndexResult) -> list[Section]:
    """The root finding first (one positional shift told as one story), what is wrong
    (first 20 chunks), the other findings, and a one-line verdict with its cost."""
    sec = summary(ok_verdict(result.ok))
    roots = [f for f in result.findings if f.kind == "shift" and "model" in f.details]
    for f in roots:
        sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    bad = [c for c in result.chunks if c.status != "ok"]
    docs = any(c.ref_doc_id for c in bad[:SHOWN_ROWS])  # e.g. LlamaIndex's node -> document
    if bad:
        sec.blocks.append(
            Table(
                [
                    "position",
                    "id",
                    *(["document"] if docs else []),
                    "cosine",
                    "status",
                    "holds vector of",
                    "offset",
                ],
                [
                    [
                        str(c.position),
                        c.id,
                        *([c.ref_doc_id or ""] if docs else []),
                        _f4(c.cosine),
                        str(c.status),
                        c.holds_vector_of or "",
                        "" if c.offset is None else f"{c.offset:+d}",
                    ]
                    for c in bad[:SHOWN_ROWS]
                ],
                f"chunks under {result.threshold:g} or without a usable vector",
                right=("position", "offset"),
            )
        )
        if len(bad) > SHOWN_ROWS:
            sec.blocks.append(Text(f"... and {len(bad) - SHOWN_ROWS} more (see --json)"))
    for f in result.findings:
        if f not in roots:
            sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    m: dict[str, Any] = result.manifest.get("embedding", {})
    if result.chunks_truncated:
        sec.blocks.append(
            Text(
                f"chunks in the JSON: only the {len(result.chunks)} rows that are not ok "
                "(over 100,000 checked); every row is in --rows"
            )
        )
    if result.targets_dropped:
        sec.blocks.append(
            Text(
                f"targeted sampling: {result.targets_dropped} chunks after a repeated text "
                "left out (the chunk after the first 3 copies of each text is checked)"
            )
        )
    bound = ""
    if result.fault_rate_upper_95 is not None and result.ok:
        bound = f"; fault rate < {100 * result.fault_rate_upper_95:.1f}% (95%, random rows)"
    extra = ""
    if result.diagnosis_embeddings:
        extra = f" ({result.diagnosis_embeddings} texts to explain low chunks"
        if result.shift_model_embeddings:
            extra += f", {result.shift_model_embeddings} of them for the shift model"
        extra += ")"
    sec.blocks.append(
        Text(
            f"{_verdict_count(result)}; min {_f4(result.min_cosine)}, median "
            f"{_f4(result.median_cosine)}; {m.get('requests', 0)} embedding requests{extra}, "
            f"{m.get('tokens', 0)} tokens, {result.manifest.get('wall_seconds', 0):.1f}s{bound}",
            badge=ok_verdict(result.ok),
        )
    )
    return [sec]


def _verdict_count(result: CheckIndexResult) -> str:
    """What the verdict counts, said as it is: the chunks that pass when all pass, the
    chunks that fail otherwise ("198 of 204 sampled chunks fail", not "6/204")."""
    noun = {"sample": "sampled chunks", "all": "chunks", "ids": "chunks checked by id"}.get(
        result.mode, "chunks"
    )
    ok = result.counts.get("ok", 0)
    t = f"{result.threshold:g}"
    if ok == result.checked:
        return f"{ok}/{result.checked} chunks ({result.mode}) at cosine >= {t}"
    failed = result.checked - ok
    return (
        f"{failed} of {result.checked} {noun} below cosine {t} or without a usable vector "
        f"({ok} pass)"
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _interval(iv: list[float | None]) -> str:
    return f"[{_pct(iv[0])}, {_pct(iv[1])}]"


def compare_ann_summary(result: AnnResult) -> list[Section]:
    """One row per fetch depth, each swept setting, the worst queries, the recommendation.

    With true vectors (``--truth-from``/``--truth-store``) two columns give the search's
    own loss (against the vectors the index gives back) and a last row the compression's."""
    from .compare_ann.wording import compression_line

    true = result.truth_vectors is not None
    filtered = result.filters is not None
    headers = ["fetch", "recall@k", "95% CI", "best-chunk miss", "95% CI", "rank shift"]
    if true:
        headers += ["search recall@k", "search miss"]
    headers += ["short results"] if filtered else []
    rows = []
    for r in result.by_fetch:
        row = [
            f"{r.fetch}" + (" (re-rank)" if r.reranked else ""),
            _pct(r.recall_at_k),
            _interval(r.recall_at_k_interval),
            f"{_pct(r.best_miss_rate)} ({r.best_misses}/{r.queries})",
            _interval(r.best_miss_rate_interval),
            "-" if r.mean_rank_displacement is None else f"{r.mean_rank_displacement:.3f}",
        ]
        if true:
            row += [_pct(r.search_recall_at_k), _pct(r.search_best_miss_rate)]
        row += [short_cell(r)] if filtered else []
        rows.append(row)
    loss = result.compression_loss
    if loss is not None:
        rows.append(
            [
                "exact (compressed)",
                _pct(loss["recall_at_k"]),
                _interval(loss["recall_at_k_interval"]),
                f"{_pct(loss['best_miss_rate'])} ({loss['best_misses']}/{loss['queries']})",
                _interval(loss["best_miss_rate_interval"]),
                "-",
                "-",
                "-",
            ]
        )
    truth = "exact over the vectors as added" if true else f"exact ({result.ground_truth})"
    title = (
        f"{result.store['backend']}: top-{result.k} vs {truth}, "
        f"{result.queries} {result.query_source} queries"
    )
    if result.sweep:
        param = result.sweep["param"]
        title += f", as configured ({param}={result.store['details'].get(param, 'as saved')})"
    sec = summary(ok_verdict(result.ok), Table(headers, rows, title, right=tuple(headers)))
    line = compression_line(result.compression, result.truth_vectors)
    if line:
        sec.blocks.append(Text(line))
    sec.blocks.extend(ann_filter_lines(result))
    for run in (result.sweep or {}).get("runs", []):
        rates = ", ".join(
            f"fetch {row['fetch']}: {_pct(row['best_miss_rate'])}{short_suffix(row)}"
            for row in run["by_fetch"]
        )
        best = run["recommended_fetch"]
        reach = f"fetch {best} reaches the target" if best else "no depth reaches the target"
        param = (result.sweep or {})["param"]
        sec.blocks.append(Text(f"{param}={run['value']}: best-chunk miss {rates}; {reach}"))
    for w in result.worst_queries[:WORST_SHOWN]:
        missed = ", ".join(str(f) for f in w["missed_at_fetch"]) or "none"
        pos = w["best_position_at_max_fetch"]
        sec.blocks.append(
            Text(
                f"  worst: {w['query']} best chunk {w['exact_best_id']} missed at fetch {missed}; "
                f"ANN position at fetch {w['max_fetch']}: {pos if pos is not None else 'absent'}"
                + (f"; filter {w['filter']}" if w.get("filter") else "")
            )
        )
    sec.blocks.append(Text(result.recommendation, badge=ok_verdict(result.ok)))
    return [sec]


def _metric(m: Any) -> str:
    if m.value is None:
        return "-"
    return f"{m.value:.3f} [{m.low:.3f}, {m.high:.3f}]"


def diagnose_summary(result: DiagnoseResult) -> list[Section]:
    """Counts per label with examples, exact vs ANN metrics, the failing questions."""
    from .verdicts import GOOD_LABELS, IN_SCOPE_LABELS, OUT_OF_SCOPE_LABELS

    labels = Table(
        ["label", "questions", "examples"],
        [
            [str(label), str(result.counts[label]), ", ".join(result.examples[label])]
            for label in (*IN_SCOPE_LABELS, *OUT_OF_SCOPE_LABELS)
            if result.counts.get(label)
        ],
        f"first stage that lost the expected chunk (k={result.k}, fetch={result.fetch})",
        right=("questions",),
    )
    metrics = Table(
        ["metric", "exact", "approximate (backend)"],
        [
            [
                name.replace("_at_k", f"@{result.k}"),
                _metric(getattr(result.metrics["exact"], name)),
                _metric(getattr(result.metrics["ann"], name)),
            ]
            for name in ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k")
        ],
        f"retrieval metrics (ground truth: {result.ground_truth})",
        right=("exact", "approximate (backend)"),
    )
    sec = summary(ok_verdict(result.ok), labels, metrics)
    failing = [d for d in result.questions if d.label not in GOOD_LABELS]
    for d in failing[:FAILING_SHOWN]:
        sec.blocks.append(Text(f"  {d.id}: {d.label}  {d.detail}"))
    if len(failing) > FAILING_SHOWN:
        more = len(failing) - FAILING_SHOWN
        sec.blocks.append(Text(f"  ... and {more} more (every question is in --json)"))
    ok = sum(result.counts[label] for label in GOOD_LABELS)
    sec.blocks.append(
        Text(
            f"{ok}/{len(result.questions)} questions end where they should",
            badge=ok_verdict(result.ok),
        )
    )
    return [sec]


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def probe_scale_summary(result: ScaleResult) -> list[Section]:
    """The formulas tested (best first), then the verdict and the conversions."""
    from .transforms import CATALOGUE

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


def _s(score: dict[str, float | None] | None) -> str:
    if score is None:
        return "-"
    cos, backend = score.get("cosine"), score.get("backend")
    b = "-" if backend is None else f"{backend:.4f}"
    return b if cos is None else f"{b} (cos {cos:.4f})"


def sweep_threshold_summary(result: SweepResult) -> list[Section]:
    """Key figures, the rows around the recommendation, and the verdict."""
    transform = result.scale.get("transform") or "unknown"
    sec = summary(ok_verdict(result.ok))
    say = sec.blocks.append
    say(
        Text(
            f"{result.in_scope} in-scope, {result.out_of_scope} out-of-scope questions; "
            f"k={result.k}, fetch={result.fetch}; backend score {transform}"
        )
    )
    say(Text(f"lowest in-scope best expected score: {_s(result.min_in_scope_best)}"))
    say(Text(f"highest out-of-scope top score:      {_s(result.max_out_of_scope_top)}"))
    sec.blocks.extend(threshold_filter_lines(result))
    if result.handled_by_content:
        say(Text(f"handled by refusal chunks: {', '.join(result.handled_by_content)}"))
    if result.not_retrieved:
        say(Text(f"expected chunk not in top {result.k}: {', '.join(result.not_retrieved)}"))
    if result.overlap["in_scope"] or result.overlap["out_of_scope"]:
        say(
            Text(
                f"overlap: in-scope {', '.join(result.overlap['in_scope']) or '-'}; "
                f"out-of-scope {', '.join(result.overlap['out_of_scope']) or '-'}"
            )
        )
    rows = result.table
    at = next((i for i, r in enumerate(rows) if r is result.recommended_row), len(rows) - 1)
    shown = []
    for r in rows[max(0, at - 6) : at + 6]:
        rec, rej = r["in_scope_recall"], r["out_of_scope_rejection"]
        mark = " *" if r is result.recommended_row else ""
        shown.append(
            [
                _s(r["threshold"]) + mark,
                f"{rec['k']}/{rec['n']}",
                f"{rej['k']}/{rej['n']}",
                str(r["false_refusals"]),
                str(r["false_answers"]),
            ]
        )
    headers = ["threshold", "recall", "oos handled", "false refusals", "false answers"]
    title = "thresholds around the recommendation (* ), loosest first"
    say(Table(headers, shown, title, right=tuple(headers)))
    say(Text(result.verdict, badge=ok_verdict(result.ok)))
    return [sec]


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
            before = absent if q["baseline_rank"] is None else q["baseline_rank"] + 1
            after = absent if q["current_rank"] is None else q["current_rank"] + 1
            sec.blocks.append(Text(f"  {q['id']}: rank {before} -> {after} ({q['label']})"))
        more = base["regression_count"] - REGRESSIONS_SHOWN
        if more > 0:
            sec.blocks.append(Text(f"  ... and {more} more questions ranked lower (see --json)"))
    sec.blocks.append(Text(result.summary, style=str(result.verdict)))
    return [sec]


__all__ = [
    "SHOWN_ROWS",
    "check_index_summary",
    "ci_summary",
    "compare_ann_summary",
    "diagnose_summary",
    "diff_index_summary",
    "probe_scale_summary",
    "summary",
    "sweep_threshold_summary",
]
