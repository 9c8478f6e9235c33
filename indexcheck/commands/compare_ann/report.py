"""compare-ann's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from ...output.model import WORST_ROWS, Plot, Section, Table, Text
from ...output.registry import Payload, register, section
from ...output.summary_kit import summary
from ..kit.filter_summaries import ann_filter_lines, short_cell, short_suffix
from .result import AnnResult


def _compare_ann(r: Payload, verdict: str | None) -> list[Section]:
    said = (
        f"{r['queries']} queries ({r['query_source']}), k={r['k']}, ground truth "
        f"{r['ground_truth']}. {r['recommendation']}"
    )
    verdict = verdict or r.get("verdict")
    sec = section("compare-ann: approximate vs exact search", r, verdict, Text(said))
    if r.get("compression"):
        from .wording import compression_line

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


WORST_SHOWN = 5  # compare-ann's worst queries


def worst_line(w: Payload) -> str:
    """One worst query: where its best chunk was missed (or the recall it lost where it
    was found at every depth), and the best chunk's 1-based position at the deepest fetch."""
    missed = ", ".join(str(f) for f in w["missed_at_fetch"])
    if missed:
        how = f"missed at fetch {missed}"
    else:
        low = min(w["recall_at_k"].items(), key=lambda kv: kv[1])
        how = f"found at every depth, recall@k {_pct(low[1])} at fetch {low[0]}"
    pos = w["best_position_at_max_fetch"]
    return (
        f"{w['query']} best chunk {w['exact_best_id']} {how}; rank at fetch {w['max_fetch']}: "
        f"{pos if pos is not None else 'absent'}"
        + (f"; filter {w['filter']}" if w.get("filter") else "")
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _interval(iv: list[float | None]) -> str:
    return f"[{_pct(iv[0])}, {_pct(iv[1])}]"


def compare_ann_summary(result: AnnResult) -> list[Section]:
    """One row per fetch depth, each swept setting, the worst queries, the recommendation.

    With true vectors (``--truth-from``/``--truth-store``) two columns give the search's
    own loss (against the vectors the index gives back) and a last row the compression's."""
    from .wording import compression_line

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
    sec = summary(result.verdict, Table(headers, rows, title, right=tuple(headers)))
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
        sec.blocks.append(Text(f"  worst: {worst_line(w)}"))
    sec.blocks.append(Text(result.recommendation, badge=result.verdict))
    return [sec]


register(
    "compare-ann",
    _compare_ann,
    {"by_fetch", "recommended_fetch"},
    compare_ann_summary,
    result=AnnResult,
)
