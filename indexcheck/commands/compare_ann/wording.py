"""compare-ann's sentences: the recommendation, a sweep's verdict, a lossy index's truth."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import FetchRow, Truths


def sentences(parts: Sequence[str]) -> str:
    """Parts joined as sentences: each ends with a full stop."""
    return " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in parts if p)


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%".replace(".00%", "%")


def _bound(x: float | None) -> str:
    """An interval's bound, two significant figures (0/55 reaches 6.5%, 0/400 0.95%)."""
    return "-" if x is None else f"{100 * x:.2g}%"


#: z for the two-sided 95% Wilson interval the rows carry
_Z2 = 1.959963984540054**2


def queries_for(target: float) -> int | None:
    """Queries without a miss that bring the 95% Wilson upper bound to ``target`` (None
    for a target of 0, which no sample can show)."""
    if target <= 0:
        return None
    return int(math.ceil(_Z2 * (1 - target) / target - 1e-9))


def cannot_fail(spec: str, how: str) -> str:
    """The sentence for an index that searches exactly: nothing the check measures can miss."""
    return (
        f"the check cannot fail here: {spec} searches exactly ({how}), so every fetch depth "
        "finds the best chunk by construction (recall@k 1); compare-ann measures an "
        "approximate index: run it on the index your application searches"
    )


def insufficient(row: FetchRow, k: int, target: float) -> str:
    """The sentence when a depth's observed miss rate is within ``target`` but its 95%
    interval is not: too few queries to tell."""
    high = row.best_miss_rate_interval[1]
    if row.best_misses == 0:
        seen = f"no miss in {row.queries} queries"
    else:
        seen = (
            f"the best chunk is missed in {_pct(row.best_miss_rate)} of queries "
            f"({row.best_misses}/{row.queries})"
        )
    need = queries_for(target)
    if need is None:
        more = "no sample can show a miss rate of 0: set --target above 0"
    elif row.best_misses == 0:
        more = f"run with at least {need} queries (--queries, or more --questions)"
    else:
        more = "run with more queries (--queries, or more --questions)"
    return (
        f"{_how(row.fetch, k)}: {seen}, but the 95% interval reaches {_bound(high)}, above "
        f"the target {_pct(target)}: too few queries to show the target is met; {more}"
    )


#: an example --sweep per search-effort parameter
EFFORT_EXAMPLES = {
    "efSearch": "32,64,128",
    "nprobe": "4,16,64",
    "nprobes": "20,50,100",
    "ef": "32,64,128",
    "ef_search": "80,200,400",
    "probes": "4,16,64",
    "ef_runtime": "10,50,200",
    "num_candidates": "50,100,200",
}


def effort_param(backend: str, details: dict[str, Any], compression: dict[str, Any]) -> str | None:
    """The search-effort parameter ``--sweep`` can raise on this index, when known."""
    layers = " ".join(compression.get("layers") or [])
    if backend == "faiss":
        return "nprobe" if "IVF" in layers else "efSearch" if "HNSW" in layers else None
    if backend == "lancedb":
        index = details.get("index") or {}
        name = str(index.get("index_type") or "") if isinstance(index, dict) else ""
        return ("ef" if "HNSW" in name.upper() else "nprobes") if name else None
    if backend == "redis":
        return "ef_runtime" if details.get("algorithm") == "HNSW" else None
    if backend == "elasticsearch":
        return "num_candidates"
    if backend == "opensearch":
        return "ef_search"
    if backend == "pgvector":
        kind = details.get("index_type")
        return "ef_search" if kind == "hnsw" else "probes" if kind == "ivfflat" else None
    return None


def _raise(effort: str | None) -> str:
    if effort is None:
        return "raise the index's search effort (efSearch, nprobe)"
    return f"raise {effort}, e.g. --sweep {effort}={EFFORT_EXAMPLES.get(effort, '...')}"


def _loss(loss: dict[str, Any]) -> str:
    return (
        f"compression alone (exact search over the vectors the index gives back) misses the "
        f"best chunk in {_pct(loss['best_miss_rate'])} of queries "
        f"({loss['best_misses']}/{loss['queries']}) and keeps recall@k "
        f"{_pct(loss['recall_at_k'])}"
    )


def recommendation(
    rows: list[FetchRow],
    k: int,
    target: float,
    best: int | None,
    effort: str | None = None,
    loss: dict[str, Any] | None = None,
) -> str:
    """The verdict's sentence: the smallest depth reaching the target, or why none does
    and what to raise (``effort``); with a true truth, the compression's share (``loss``)."""
    if best is not None:
        r = next(r for r in rows if r.fetch == best)
        return (
            f"{_how(best, k)}: the best chunk is missed in {_pct(r.best_miss_rate)} of queries "
            f"({r.best_misses}/{r.queries}; 95% interval up to "
            f"{_bound(r.best_miss_rate_interval[1])}, within the target {_pct(target)})"
        )
    low = min(rows, key=lambda r: (r.best_miss_rate, r.fetch))
    tried = ", ".join(str(r.fetch) for r in rows)
    against = " against the vectors as added" if loss is not None else ""
    text = (
        f"none of the fetch depths tried ({tried}) brings the best-chunk miss rate{against} "
        f"to {_pct(target)}; the lowest is {_pct(low.best_miss_rate)} at fetch {low.fetch}"
    )
    if loss is not None and loss["best_miss_rate"] > target:
        text += (
            f". Of that, {_loss(loss)}: no fetch depth or search effort recovers it; re-rank "
            "the fetched ids against the vectors as added (e.g. faiss IndexRefineFlat, or "
            "re-score from your own copy) or use a finer code"
        )
        search = [r.search_best_miss_rate for r in rows if r.search_best_miss_rate is not None]
        if search and min(search) > target:
            text += (
                f". Against the compressed vectors the search itself misses "
                f"{_pct(min(search))} at best: also {_raise(effort)}"
            )
        return text
    if len(rows) > 1 and rows[-1].best_misses >= rows[0].best_misses:
        return (
            f"{text}; fetching deeper does not help this index (its search stops by its own "
            f"effort parameter, not by the number asked): {_raise(effort)}"
        )
    return f"{text}: fetch deeper or {_raise(effort)}"


def _how(fetch: int, k: int) -> str:
    return f"fetch {fetch}, re-rank exactly and keep {k}" if fetch > k else f"fetch {k}"


def sweep_recommendation(
    key: str,
    value: int,
    row: dict[str, Any],
    k: int,
    target: float,
    configured: int | None,
    configured_fetch: int | None,
) -> str:
    """The sentence for a swept value that reaches the target (``row``: its FetchRow dict)."""
    as_set = f"{key}={configured}" if configured is not None else f"{key} as the index was saved"
    if configured_fetch is None:
        now = f"as configured ({as_set}) no fetch depth tried reaches it"
    else:
        now = f"as configured ({as_set}) {_how(configured_fetch, k)} reaches it too, at more effort"
    return (
        f"set {key}={value} and {_how(int(row['fetch']), k)}: the best chunk is missed in "
        f"{_pct(row['best_miss_rate'])} of queries ({row['best_misses']}/{row['queries']}; "
        f"95% interval up to {_bound(row['best_miss_rate_interval'][1])}, within the target "
        f"{_pct(target)}); {now}"
    )


def sweep_none(
    key: str,
    runs: Sequence[dict[str, Any]],
    k: int,
    target: float,
    loss: dict[str, Any] | None = None,
) -> str:
    """The sentence when neither the configured index nor any swept value reaches it;
    with a compression ``loss`` above the target, that is the reason and the fix."""
    tried = ", ".join(str(r["value"]) for r in runs)
    low = min(
        ((row["best_miss_rate"], r["value"], row["fetch"]) for r in runs for row in r["by_fetch"]),
        default=None,
    )
    text = (
        f"none of the {key} values tried ({tried}) brings the best-chunk miss rate to "
        f"{_pct(target)} at any fetch depth tried, nor does the index as configured"
    )
    if low is None:
        return text
    rate, value, fetch = low
    text += f"; the lowest is {_pct(rate)} at {key}={value}, fetch {fetch}"
    if loss is not None and loss["best_miss_rate"] > target:
        return (
            f"{text}. {_loss(loss)[0].upper()}{_loss(loss)[1:]}: no fetch depth or search "
            "effort recovers it; re-rank the fetched ids against the vectors as added (e.g. "
            "faiss IndexRefineFlat, or re-score from your own copy) or use a finer code"
        )
    return f"{text}: try higher {key} values or deeper fetch depths"


def compression_warnings(
    compression: dict[str, Any], truths: Truths, loss: dict[str, Any] | None, target: float
) -> list[str]:
    """What the recommendation must say about a compressing index: that the truth is over
    compressed vectors (and how to measure against the real ones), or how much the
    compression alone loses when the real ones were given."""
    layers = compression.get("layers") or []
    name = layers[-1] if layers else "the index"
    read_back = compression.get("vectors_read_back")
    if truths.true is None:
        if read_back == "compressed":
            return [
                f"The ground truth is exact search over the vectors {name} gives back, "
                f"which are compressed ({compression.get('codec')}): what the compression "
                "loses is invisible in these figures. Measure it against the vectors as "
                "added: --truth-from chunks (re-embeds the texts with --embedder) or "
                "--truth-store SPEC (e.g. a Parquet export with the same ids)."
            ]
        if read_back == "unknown" and compression.get("source") == "index type":
            return [
                f"indexcheck cannot tell whether {name} gives back the vectors as added "
                f"({compression.get('codec')}); if it compresses them, pass --truth-from "
                "chunks or --truth-store SPEC to measure against the real ones."
            ]
        return []
    if loss is None or loss["best_miss_rate"] > target:
        return []  # a loss above the target is part of the recommendation itself
    return [f"For comparison, {_loss(loss)}."]


def compression_line(
    compression: dict[str, Any], truth_vectors: dict[str, Any] | None, always: bool = False
) -> str | None:
    """One line on the index's codec and what the ground truth is over; None when there is
    nothing to say (an index that does not compress, no true vectors) unless ``always``."""
    kind = compression.get("kind", "unknown")
    read_back = compression.get("vectors_read_back", "unknown")
    lossy = compression.get("lossy")
    codec = compression.get("codec", "")
    layers = compression.get("layers") or []
    where = f" ({' > '.join(layers)})" if layers else ""
    if kind == "unknown":
        head = f"compression: unknown, {codec}"
    elif lossy:
        head = f"compression: {codec}{where}"
    else:
        head = f"compression: none{where}"
    if truth_vectors is not None:
        if truth_vectors.get("source") == "chunks":
            src = f"the chunk texts re-embedded with {truth_vectors.get('embedder')}"
        else:
            src = f"the vectors of {truth_vectors.get('spec')}"
        agree = truth_vectors.get("median_cosine")
        tail = (
            f"; ground truth over the vectors as added ({src}; median cosine with the vectors "
            f"the index gives back {agree:.3f})"
            if isinstance(agree, float | int)
            else f"; ground truth over the vectors as added ({src})"
        )
    elif read_back == "compressed":
        tail = "; ground truth over the compressed vectors the index gives back"
    elif read_back == "original":
        tail = "; ground truth over the vectors as added (the index keeps them)"
    else:
        tail = "; ground truth over the vectors the index gives back (compressed or not: unknown)"
    shown = always or lossy or truth_vectors is not None or read_back == "compressed"
    shown = shown or (kind == "unknown" and compression.get("source") == "index type")
    return head + tail if shown else None
