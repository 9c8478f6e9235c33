"""The job tables of ``[ci]``: one config dataclass and one strict parser per check.

``[ci.check-index]``, ``[ci.probe-scale]``, ``[ci.compare-ann]``, ``[ci.diagnose]`` and
``[ci.diff-index]``; each parser reads its table through :class:`.ci_toml.TomlTable`, so an
unknown key, a wrong type or an unparsable limit raises InputError naming the key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..kit.retrieval import DEFAULT_REFUSAL_PATTERN
from .toml_table import Limit, TomlTable, default_limit, parse_limits, with_k

CHECK_INDEX_METRICS = (
    "min_cosine",
    "median_cosine",
    "below_threshold",
    "error_findings",
    "checked",
)
ANN_METRICS = ("recall_at_k", "best_miss_rate", "mean_rank_displacement", "recommended_fetch")
ANN_RATES = ("recall_at_k", "best_miss_rate")
RANK_METRICS = ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k")
LABEL_METRICS = (
    "misaligned",
    "not_retrieved",
    "ann_miss",
    "ranked_out",
    "below_threshold",
    "ok",
    "refused_ok",
    "refused_by_content",
    "answered_out_of_scope",
    "failing",
)
DIFF_INDEX_METRICS = (
    "error_findings",
    "min_cosine",
    "compared",
    "unchanged",
    "added",
    "changed",
    "removed",
)


@dataclass
class CheckIndexConfig:
    """check-index on a sample (``sample=None``: every chunk)."""

    sample: int | None = 100
    min_cosine: float = 0.999
    limits: list[Limit] = field(default_factory=list)


@dataclass
class DiffIndexConfig:
    """diff-index of the configured store (the new index) against ``old``; ``sample_new``
    added/changed texts are re-embedded with ci.embedder (0: none, None: every one);
    ``chunks_new`` defaults to ci.chunks."""

    old: str
    chunks_old: Path | None = None
    chunks_new: Path | None = None
    min_cosine: float = 0.999
    sample_new: int | None = 0
    limits: list[Limit] = field(default_factory=list)


@dataclass
class ProbeScaleConfig:
    """probe-scale; ``expect`` is the declared formula (catalogue form) or None."""

    expect: str | None = None
    probes: int = 16
    k: int = 8


@dataclass
class CompareAnnConfig:
    """compare-ann on ``queries`` stored vectors moved by ``noise``; limits read ``at_fetch``."""

    queries: int = 100
    noise: float = 0.5
    k: int = 4
    fetch: list[int] = field(default_factory=lambda: [4, 10, 20])
    at_fetch: int = 20
    target: float = 0.01
    cache_dir: Path | None = None
    limits: list[Limit] = field(default_factory=list)
    #: a metadata filter every query is searched with (canonical object), or None
    filter: dict[str, Any] | None = None


@dataclass
class DiagnoseConfig:
    """diagnose on a fixed question set; its per-question outcomes feed the baseline."""

    questions: Path
    k: int = 4
    fetch: int = 20
    threshold: float | None = None
    threshold_scale: str = "backend"
    min_cosine: float = 0.999
    refusal_pattern: str = DEFAULT_REFUSAL_PATTERN
    limits: list[Limit] = field(default_factory=list)
    #: a metadata filter AND-ed with each question's own (canonical object), or None
    filter: dict[str, Any] | None = None


def _plain_metrics(names: tuple[str, ...]) -> Callable[[str], tuple[str, int | None, bool]]:
    """A limit's metric resolver for a check whose metrics take no ``@k`` and no exact
    variant: a name from ``names``, else InputError listing them."""

    def resolve(metric: str) -> tuple[str, int | None, bool]:
        if metric not in names:
            raise InputError(f"unknown metric; use one of {', '.join(names)}")
        return metric, None, False

    return resolve


def check_index_config(t: TomlTable) -> CheckIndexConfig:
    c = CheckIndexConfig()
    c.sample = t.count_or_all("sample", c.sample, 1)
    c.min_cosine = t.float_("min_cosine", c.min_cosine, -1.0, 1.0)
    resolve = _plain_metrics(CHECK_INDEX_METRICS)
    c.limits = parse_limits(t, resolve) or [
        default_limit(f"min_cosine >= {c.min_cosine:g}", resolve),
        default_limit("error_findings == 0", resolve),
    ]
    t.finish()
    return c


def probe_scale_config(t: TomlTable) -> ProbeScaleConfig:
    from ..probe_scale import MAX_PROBES, transform_of

    c = ProbeScaleConfig()
    expect = t.str_("expect", None)
    if expect is not None:
        try:
            c.expect = transform_of(expect).formula
        except InputError as exc:
            raise t.error(t.key_of("expect"), str(exc)) from None
    c.probes = t.int_("probes", c.probes, lo=1)
    if c.probes > MAX_PROBES:
        raise t.error(t.key_of("probes"), f"must be at most {MAX_PROBES}")
    c.k = t.int_("k", c.k, lo=1)
    t.finish()
    return c


def compare_ann_config(t: TomlTable) -> CompareAnnConfig:
    c = CompareAnnConfig()
    c.queries = t.int_("queries", c.queries, lo=1)
    c.noise = t.float_("noise", c.noise, 0.0, 100.0)
    c.k = t.int_("k", c.k, lo=1)
    c.fetch = t.ints("fetch", sorted({c.k, *(f for f in c.fetch if f > c.k)}))
    if c.fetch[0] < c.k:
        raise t.error(t.key_of("fetch"), f"has depth {c.fetch[0]} smaller than k={c.k}")
    c.at_fetch = t.int_("at_fetch", c.fetch[-1], lo=1)
    if c.at_fetch not in c.fetch:
        raise t.error(t.key_of("at_fetch"), f"must be one of fetch {c.fetch}")
    c.target = t.float_("target", c.target, 0.0, 1.0)
    cache_dir = t.str_("cache_dir", None)
    c.cache_dir = Path(cache_dir) if cache_dir else None
    c.filter = t.filter_("filter")

    def resolve(metric: str) -> tuple[str, int | None, bool]:
        base, _, depth = metric.partition("@")
        name = with_k(base, c.k, ANN_METRICS)
        if name is None:
            raise InputError(f"unknown metric; use one of {', '.join(ANN_METRICS)}")
        at = int(depth) if depth else c.at_fetch
        if name == "recommended_fetch" and depth:
            raise InputError("recommended_fetch takes no @depth")
        if at not in c.fetch:
            raise InputError(f"depth {at} is not among fetch {c.fetch}")
        return name, at, False

    c.limits = parse_limits(t, resolve) or [
        default_limit(f"best_miss_rate <= {c.target:g}", resolve)
    ]
    t.finish()
    return c


def diagnose_config(t: TomlTable) -> DiagnoseConfig:
    c = DiagnoseConfig(Path(t.required("questions", "the question set (JSONL or CSV) to gate on")))
    c.filter = t.filter_("filter")
    c.k = t.int_("k", c.k, lo=1)
    c.fetch = t.int_("fetch", c.fetch, lo=c.k)
    c.threshold = t.float_("threshold", None, -math.inf, math.inf)
    scale = t.str_("threshold_scale", c.threshold_scale)
    if scale not in ("backend", "cosine"):
        raise t.error(t.key_of("threshold_scale"), f'must be "backend" or "cosine", not {scale!r}')
    c.threshold_scale = scale
    c.min_cosine = t.float_("min_cosine", c.min_cosine, -1.0, 1.0)
    c.refusal_pattern = t.str_("refusal_pattern", c.refusal_pattern) or ""
    try:
        re.compile(c.refusal_pattern)
    except re.error as exc:
        raise t.error(t.key_of("refusal_pattern"), f"is not a valid regex ({exc})") from None

    def resolve(metric: str) -> tuple[str, int | None, bool]:
        exact = metric.startswith("exact.")
        base = metric.removeprefix("exact.")
        name = with_k(base, c.k, RANK_METRICS)
        if name is None and not exact and base in LABEL_METRICS:
            name = base
        if name is None:
            known = ", ".join([*RANK_METRICS, *(f"exact.{m}" for m in RANK_METRICS)])
            raise InputError(f"unknown metric; use one of {known}, {', '.join(LABEL_METRICS)}")
        return name, None, exact

    c.limits = parse_limits(t, resolve) or [default_limit("failing == 0", resolve)]
    t.finish()
    return c


def diff_index_config(t: TomlTable) -> DiffIndexConfig:
    c = DiffIndexConfig(t.required("old", "the spec of the index in production to diff against"))
    for name in ("chunks_old", "chunks_new"):
        path = t.str_(name, None)
        setattr(c, name, Path(path) if path else None)
    c.min_cosine = t.float_("min_cosine", c.min_cosine, -1.0, 1.0)
    c.sample_new = t.count_or_all("sample_new", c.sample_new, 0)
    resolve = _plain_metrics(DIFF_INDEX_METRICS)
    c.limits = parse_limits(t, resolve) or [default_limit("error_findings == 0", resolve)]
    t.finish()
    return c


__all__ = [
    "ANN_METRICS",
    "ANN_RATES",
    "CHECK_INDEX_METRICS",
    "DIFF_INDEX_METRICS",
    "LABEL_METRICS",
    "RANK_METRICS",
    "CheckIndexConfig",
    "CompareAnnConfig",
    "DiagnoseConfig",
    "DiffIndexConfig",
    "ProbeScaleConfig",
    "check_index_config",
    "compare_ann_config",
    "diagnose_config",
    "diff_index_config",
    "probe_scale_config",
]
