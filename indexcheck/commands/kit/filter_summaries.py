"""The terminal lines of a filtered run: each filter with the chunks it matches, the
figures per selectivity bucket (compare-ann), and per-filter separability
(sweep-threshold)."""

from __future__ import annotations

from typing import Any

from ...output.model import Text


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def short_cell(row: Any) -> str:
    """The short-results cell of a fetch row: rate and count."""
    return f"{_pct(row.short_result_rate)} ({row.short_results})"


def short_suffix(row: dict[str, Any]) -> str:
    """`` (short results R)`` for a swept run's row when filtered, else ''."""
    rate = row.get("short_result_rate")
    return "" if rate is None else f" (short results {_pct(rate)})"


def ann_filter_lines(result: Any) -> list[Text]:
    """Each filter (queries, matching chunks, bucket), then each depth's bucket figures."""
    out = [
        Text(
            f"filter {f['canonical']}: {f['queries']} queries, matches "
            f"{f['matching_chunks']} chunks ({_pct(f['share'])}, bucket {f['bucket']})"
        )
        for f in result.filters or []
    ]
    for r in result.by_fetch if result.filters is not None else []:
        for b in r.by_selectivity or []:
            out.append(
                Text(
                    f"  fetch {r.fetch}, filters matching {b['bucket']}: {b['queries']} queries, "
                    f"recall@k {_pct(b['recall'])}, best-chunk miss {_pct(b['best_miss_rate'])}, "
                    f"short results {_pct(b['short_result_rate'])}"
                )
            )
    return out


def threshold_filter_lines(result: Any) -> list[Text]:
    """One line per filter of a sweep-threshold run: its questions and separability."""
    judged = {True: "separable", False: "NOT separable", None: "separability not judged"}
    return [
        Text(
            f"filter {f['filter']}: {f['questions']} questions, {judged[f['separable']]}"
            + (f" ({f['why_not_judged']})" if f.get("why_not_judged") else "")
        )
        for f in result.by_filter or []
    ]
