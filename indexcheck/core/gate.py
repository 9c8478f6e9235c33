"""ci: run the configured checks, gate each on declared limits, and compare question-level
retrieval with a saved baseline under non-inferiority margins.

Verdicts, worst first: ``BLOCK`` > ``INSUFFICIENT_EVIDENCE`` > ``PASS``. A check's verdict
is the worst of its gate rows; the run's verdict is the worst of all. Only ``PASS`` is a
pass: ``INSUFFICIENT_EVIDENCE`` blocks a merge too (exit 1), it just says why differently.

Gate rows compare one measured value with a declared limit (``metric op number``). A rate
measured over fewer than ``min_questions`` questions or queries (diagnose's hit@k, recall@k,
MRR, nDCG@k; compare-ann's recall@k and best-chunk miss rate) is ``INSUFFICIENT_EVIDENCE``
whatever its value; a missing value (nothing measured) is ``BLOCK``.

Baseline comparison (non-inferiority), per metric m in {hit@k, MRR}: the in-scope
questions present in both runs with the same expected ids are paired; d_i = current_i -
baseline_i (hit@k in {-1, 0, 1}, reciprocal rank in [-1, 1], both on the backend's own
ranking, no threshold), Δ = mean(d), [L, U] the 95% percentile interval of Δ from a paired
bootstrap (questions resampled with replacement, 2000 resamples, ``default_rng(seed)``),
δ the margin, n_min = max(min_questions, ceil(1/δ)) (below 1/δ questions, one question
alone moves the metric by more than the margin). Then, in this order:

1. n < n_min: ``INSUFFICIENT_EVIDENCE`` (too few paired questions to decide);
2. Δ < -δ: ``BLOCK`` (the observed loss exceeds the margin; "proven" when U < -δ too);
3. L > -δ: ``PASS`` (non-inferior: even the interval's worst case is within the margin);
4. otherwise ``INSUFFICIENT_EVIDENCE`` (the loss is within the margin but not provably:
   add questions or widen the margin).

An identical rerun has every d_i = 0, so Δ = L = U = 0 and it passes (given n >= n_min).
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..corpus import Corpus, load_chunks
from ..embedders.base import Embedder
from ..errors import DataFileError, InputError
from ..questions import Question, load_questions
from ..report.manifest import Run
from ..stores.base import VectorStore
from .retrieval import DEFAULT_REFUSAL_PATTERN
from .stats import bootstrap_mean

PASS = "PASS"
INSUFFICIENT = "INSUFFICIENT_EVIDENCE"
BLOCK = "BLOCK"
SEVERITY = {PASS: 0, INSUFFICIENT: 1, BLOCK: 2}
CHECKS = ("check-index", "probe-scale", "compare-ann", "diagnose")
DEFAULT_MARGIN = 0.05
DEFAULT_MIN_QUESTIONS = 30
RESAMPLES = 2000
REGRESSIONS_SHOWN = 50

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_LIMIT_RX = re.compile(r"^\s*([A-Za-z_][\w.]*(?:@\d+)?)\s*(>=|<=|==|>|<)\s*(\S+)\s*$")

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
BASELINE_METRICS = ("hit_at_k", "mrr")
_FAILING = (
    "MISALIGNED",
    "NOT_RETRIEVED",
    "ANN_MISS",
    "RANKED_OUT",
    "BELOW_THRESHOLD",
    "ANSWERED_OUT_OF_SCOPE",
)


def worst(verdicts: Sequence[str]) -> str:
    """The most severe verdict (PASS for none)."""
    return max(verdicts, key=SEVERITY.__getitem__, default=PASS)


# -- configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """``metric op value`` as declared; ``name`` is the canonical metric, ``at`` a fetch
    depth (compare-ann ``metric@F``), ``exact`` reads diagnose's exact ranking."""

    text: str
    metric: str
    op: str
    value: float
    name: str
    at: int | None = None
    exact: bool = False


@dataclass
class CheckIndexConfig:
    """check-index on a sample (``sample=None``: every chunk)."""

    sample: int | None = 100
    min_cosine: float = 0.999
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


@dataclass
class CiConfig:
    """The validated ``[ci]`` table of an ``indexcheck.toml`` (every key is shown, with
    its default, in examples/indexcheck.toml)."""

    source: str
    store: str
    embedder: str | None = None
    cache: Path | None = None
    chunks: Path | None = None
    id_column: str = "id"
    text_column: str = "text"
    trust_pickle: bool = False
    seed: int = 0
    min_questions: int = DEFAULT_MIN_QUESTIONS
    baseline_path: Path | None = None
    margins: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(BASELINE_METRICS, DEFAULT_MARGIN)
    )
    check_index: CheckIndexConfig | None = None
    probe_scale: ProbeScaleConfig | None = None
    compare_ann: CompareAnnConfig | None = None
    diagnose: DiagnoseConfig | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for cfg in ("check_index", "compare_ann", "diagnose"):
            if d[cfg] is not None:
                d[cfg]["limits"] = [lim["text"] for lim in d[cfg]["limits"]]
        return json.loads(json.dumps(d, default=str))  # type: ignore[no-any-return]

    @classmethod
    def from_toml(cls, path: str | Path, env: Mapping[str, str] | None = None) -> CiConfig:
        """Read and validate ``[ci]``; raises InputError naming the offending key."""
        p = Path(path)
        if not p.is_file():
            raise DataFileError(f"config file {p} does not exist; pass --config PATH")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise DataFileError(f"cannot read {p}: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{p} is not valid TOML ({exc}); fix the file") from None
        return cls.from_dict(data, str(p), os.environ if env is None else env)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str, env: Mapping[str, str]) -> CiConfig:
        """Validate a parsed config file (all tables); ``env`` supplies INDEXCHECK_* fallbacks."""
        ci_raw = data.get("ci")
        if not isinstance(ci_raw, dict):
            raise InputError(f"{source} has no [ci] table; add one (see examples/indexcheck.toml)")
        defaults_raw = data.get("defaults", {})
        defaults = _Table(
            defaults_raw if isinstance(defaults_raw, dict) else {}, "defaults", source
        )
        t = _Table(ci_raw, "ci", source)

        def shared(name: str, envvar: str | None) -> Any:
            value = t.str_(name, None)
            if value is None and name in defaults.raw:
                value = defaults.str_(name, None)
            if value is None and envvar:
                value = env.get(envvar) or None
            return value

        store = shared("store", "INDEXCHECK_STORE")
        if not store:
            raise InputError(
                f"{source}: no store; set ci.store (or defaults.store, or INDEXCHECK_STORE)"
            )
        cache, chunks = shared("cache", "INDEXCHECK_CACHE"), shared("chunks", None)
        trust = t.bool_("trust_pickle", None)
        if trust is None:
            trust = bool(defaults.bool_("trust_pickle", False)) if defaults.raw else False
        cfg = cls(
            source=source,
            store=store,
            embedder=shared("embedder", "INDEXCHECK_EMBEDDER"),
            cache=Path(cache) if cache else None,
            chunks=Path(chunks) if chunks else None,
            id_column=t.str_("id_column", None) or defaults.str_("id_column", None) or "id",
            text_column=t.str_("text_column", None) or defaults.str_("text_column", None) or "text",
            trust_pickle=trust,
            seed=t.int_("seed", 0),
            min_questions=t.int_("min_questions", DEFAULT_MIN_QUESTIONS, lo=1),
        )
        if (sub := t.table("check_index")) is not None:
            cfg.check_index = _check_index_config(sub)
        if (sub := t.table("probe_scale")) is not None:
            cfg.probe_scale = _probe_scale_config(sub)
        if (sub := t.table("compare_ann")) is not None:
            cfg.compare_ann = _compare_ann_config(sub)
        if (sub := t.table("diagnose")) is not None:
            cfg.diagnose = _diagnose_config(sub)
        # not [ci.baseline]: the group's config loader would hand that table to --baseline
        if (sub := t.table("non_inferiority")) is not None:
            cfg.margins, cfg.baseline_path = _baseline_config(
                sub, cfg.diagnose.k if cfg.diagnose else None
            )
        t.finish()
        if not any((cfg.check_index, cfg.probe_scale, cfg.compare_ann, cfg.diagnose)):
            raise InputError(
                f"{source}: [ci] configures no check; add [ci.check-index], "
                "[ci.probe-scale], [ci.compare-ann] or [ci.diagnose]"
            )
        return cfg


class _Table:
    """One TOML table under validation: typed reads, and unknown keys named on finish()."""

    def __init__(self, data: Mapping[str, Any], where: str, source: str) -> None:
        self.where, self.source = where, source
        self.raw: dict[str, tuple[str, Any]] = {}
        for key, value in data.items():
            norm = key.replace("-", "_")
            if norm in self.raw:
                raise self.error(key, f"is set twice (as '{self.raw[norm][0]}' and '{key}')")
            self.raw[norm] = (key, value)
        self.used: set[str] = set()

    def error(self, key: str, message: str) -> InputError:
        return InputError(f"{self.source}: {self.where}.{key} {message}")

    def _get(self, name: str) -> tuple[str, Any] | None:
        self.used.add(name)
        return self.raw.get(name)

    def _typed(self, name: str, default: Any, ok: Callable[[Any], bool], what: str) -> Any:
        got = self._get(name)
        if got is None:
            return default
        key, value = got
        if not ok(value):
            raise self.error(key, f"must be {what}, not {value!r}")
        return value

    def str_(self, name: str, default: str | None) -> str | None:
        value: str | None = self._typed(name, default, lambda v: isinstance(v, str), "a string")
        return value

    def bool_(self, name: str, default: bool | None) -> bool | None:
        value: bool | None = self._typed(name, default, lambda v: isinstance(v, bool), "true/false")
        return value

    def int_(self, name: str, default: int, lo: int | None = None) -> int:
        def ok(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and (lo is None or v >= lo)

        what = "an integer" + ("" if lo is None else f" >= {lo}")
        value: int = self._typed(name, default, ok, what)
        return value

    def float_(self, name: str, default: Any, lo: float, hi: float) -> Any:
        def ok(v: Any) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool) and lo <= v <= hi

        value = self._typed(name, default, ok, f"a number in [{lo:g}, {hi:g}]")
        return None if value is None else float(value)

    def ints(self, name: str, default: list[int]) -> list[int]:
        def ok(v: Any) -> bool:
            return (
                isinstance(v, list)
                and bool(v)
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)
            )

        value: list[int] = self._typed(name, default, ok, "a non-empty list of integers >= 1")
        return sorted(set(value))

    def table(self, name: str) -> _Table | None:
        got = self._get(name)
        if got is None:
            return None
        key, value = got
        if not isinstance(value, dict):
            raise self.error(key, "must be a table")
        return _Table(value, f"{self.where}.{key}", self.source)

    def key_of(self, name: str) -> str:
        return self.raw[name][0] if name in self.raw else name.replace("_", "-")

    def finish(self) -> None:
        unknown = [key for norm, (key, _) in self.raw.items() if norm not in self.used]
        if unknown:
            known = ", ".join(sorted(n.replace("_", "-") for n in self.used))
            raise self.error(unknown[0], f"is not a known key; known keys here: {known}")


def _limits(t: _Table, resolve: Callable[[str], tuple[str, int | None, bool]]) -> list[Limit]:
    got = t._get("limits")
    if got is None:
        return []
    key, value = got
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise t.error(key, 'must be a list of strings such as ["hit_at_4 >= 0.9"]')
    out = []
    for text in value:
        m = _LIMIT_RX.match(text)
        number = None
        if m:
            try:
                number = float(m.group(3))
            except ValueError:
                number = None
        if m is None or number is None or not math.isfinite(number):
            raise t.error(key, f"has '{text}'; write 'METRIC OP NUMBER', e.g. 'mrr >= 0.7'")
        try:
            name, at, exact = resolve(m.group(1))
        except InputError as exc:
            raise t.error(key, f"has '{text}': {exc}") from None
        out.append(Limit(text.strip(), m.group(1), m.group(2), number, name, at, exact))
    return out


def _with_k(metric: str, k: int, names: Sequence[str]) -> str | None:
    """``hit_at_4`` -> ``hit_at_k`` when k == 4; names as given otherwise (None: unknown)."""
    if metric in names:
        return metric
    m = re.fullmatch(r"(\w+)_at_(\d+)", metric)
    if m and f"{m.group(1)}_at_k" in names:
        if int(m.group(2)) != k:
            raise InputError(f"{metric} asks for k={m.group(2)} but this check runs k={k}")
        return f"{m.group(1)}_at_k"
    return None


def _check_index_config(t: _Table) -> CheckIndexConfig:
    c = CheckIndexConfig()
    raw = t._get("sample")
    if raw is not None:
        key, value = raw
        if value == "all":
            c.sample = None
        elif isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            c.sample = value
        else:
            raise t.error(key, f'must be an integer >= 1 or "all", not {value!r}')
    c.min_cosine = t.float_("min_cosine", c.min_cosine, -1.0, 1.0)

    def resolve(metric: str) -> tuple[str, int | None, bool]:
        if metric not in CHECK_INDEX_METRICS:
            raise InputError(f"unknown metric; use one of {', '.join(CHECK_INDEX_METRICS)}")
        return metric, None, False

    c.limits = _limits(t, resolve) or [
        _default_limit(f"min_cosine >= {c.min_cosine:g}", resolve),
        _default_limit("error_findings == 0", resolve),
    ]
    t.finish()
    return c


def _default_limit(text: str, resolve: Callable[[str], tuple[str, int | None, bool]]) -> Limit:
    m = _LIMIT_RX.match(text)
    assert m is not None
    name, at, exact = resolve(m.group(1))
    return Limit(text, m.group(1), m.group(2), float(m.group(3)), name, at, exact)


def _probe_scale_config(t: _Table) -> ProbeScaleConfig:
    from .scale import MAX_PROBES, transform_of

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


def _compare_ann_config(t: _Table) -> CompareAnnConfig:
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

    def resolve(metric: str) -> tuple[str, int | None, bool]:
        base, _, depth = metric.partition("@")
        name = _with_k(base, c.k, ANN_METRICS)
        if name is None:
            raise InputError(f"unknown metric; use one of {', '.join(ANN_METRICS)}")
        at = int(depth) if depth else c.at_fetch
        if name == "recommended_fetch" and depth:
            raise InputError("recommended_fetch takes no @depth")
        if at not in c.fetch:
            raise InputError(f"depth {at} is not among fetch {c.fetch}")
        return name, at, False

    c.limits = _limits(t, resolve) or [_default_limit(f"best_miss_rate <= {c.target:g}", resolve)]
    t.finish()
    return c


def _diagnose_config(t: _Table) -> DiagnoseConfig:
    questions = t.str_("questions", None)
    if not questions:
        raise t.error("questions", "is required: the question set (JSONL or CSV) to gate on")
    c = DiagnoseConfig(Path(questions))
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
        name = _with_k(base, c.k, RANK_METRICS)
        if name is None and not exact and base in LABEL_METRICS:
            name = base
        if name is None:
            known = ", ".join([*RANK_METRICS, *(f"exact.{m}" for m in RANK_METRICS)])
            raise InputError(f"unknown metric; use one of {known}, {', '.join(LABEL_METRICS)}")
        return name, None, exact

    c.limits = _limits(t, resolve) or [_default_limit("failing == 0", resolve)]
    t.finish()
    return c


def _baseline_config(t: _Table, k: int | None) -> tuple[dict[str, float], Path | None]:
    path = t.str_("baseline", None)
    shared = t.float_("margin", DEFAULT_MARGIN, 0.0, 1.0)
    out = dict.fromkeys(BASELINE_METRICS, shared)
    sub = t.table("margins")
    if sub is not None:
        for norm, (key, _value) in sub.raw.items():
            name = _with_k(norm, k, BASELINE_METRICS) if k is not None else None
            name = name or (norm if norm in BASELINE_METRICS else None)
            if name is None:
                raise sub.error(key, f"is not a baseline metric; use {', '.join(BASELINE_METRICS)}")
            out[name] = sub.float_(norm, None, 0.0, 1.0)
        sub.finish()
    for name, value in out.items():
        if not 0 < value < 1:
            raise t.error("margin", f"for {name} must be in (0, 1), not {value:g}")
    t.finish()
    return out, Path(path) if path else None


# -- results -----------------------------------------------------------------------------


@dataclass
class GateRow:
    """One declared limit and what was measured: ``value op limit`` decides PASS/BLOCK."""

    check: str
    metric: str
    value: float | str | None
    limit: float | str | None
    op: str
    verdict: str
    detail: str = ""


@dataclass
class BaselineRow:
    """One non-inferiority comparison (current - baseline) on paired questions."""

    metric: str
    label: str
    n: int
    min_questions: int
    baseline: float | None
    current: float | None
    difference: float | None
    low: float | None
    high: float | None
    margin: float
    verdict: str
    detail: str
    method: str


@dataclass
class CiResult:
    """The run: per-check verdicts, gate rows, the baseline comparison, each check's full
    result (``results``, as their ``to_dict()``), and per-question outcomes for the next
    baseline (``per_question``)."""

    verdict: str
    checks: dict[str, str]
    gates: list[GateRow]
    baseline: dict[str, Any] | None
    per_question: dict[str, Any] | None
    results: dict[str, dict[str, Any]]
    config: dict[str, Any]
    summary: str = ""
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.verdict == PASS

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


# -- running -----------------------------------------------------------------------------


def _quiet(_msg: str) -> None:
    return None


def _judge(
    check: str, lim: Limit, value: float | int | None, n: int | None = None, min_n: int = 0
) -> GateRow:
    """PASS when ``value op limit`` holds; BLOCK when it fails or nothing was measured;
    INSUFFICIENT_EVIDENCE when the rate was measured on fewer than ``min_n`` (n given)."""
    row = GateRow(check, lim.metric, value, lim.value, lim.op, PASS)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        row.verdict, row.detail = BLOCK, "nothing was measured"
    elif n is not None and n < min_n:
        row.verdict = INSUFFICIENT
        row.detail = f"measured on {n}, fewer than min-questions {min_n}"
    elif not OPS[lim.op](float(value), lim.value):
        row.verdict = BLOCK
        row.detail = f"{_fmt(value)} is not {lim.op} {lim.value:g}"
    if n is not None and not row.detail:
        row.detail = f"n={n}"
    return row


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _embed_snapshot(embedder: Embedder | None) -> dict[str, Any]:
    return embedder.stats.as_dict() if embedder is not None else {}


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Embedding cost spent between two ``EmbedStats.as_dict()`` snapshots."""
    return {key: round(value - before.get(key, 0), 4) for key, value in after.items()}


def questions_fingerprint(questions: Sequence[Question]) -> str:
    """sha256 (16 hex) over (id, question, expected, in_scope) in file order."""
    rows = [[q.id, q.question, q.expected, q.in_scope] for q in questions]
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()[:16]


def run_ci(
    config: CiConfig,
    baseline: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    store: VectorStore | None = None,
    embedder: Embedder | None = None,
) -> CiResult:
    """Run every configured check, gate it, and compare with ``baseline`` (a parsed ci or
    diagnose JSON result). ``store``/``embedder`` replace the configured specs (tests,
    library use). Raises InputError/DataFileError for bad input, BackendError when a
    backend fails; never returns a PASS for what it did not measure."""
    say = progress or _quiet
    run = Run("ci")
    base_outcomes = None
    if baseline is not None:
        if config.diagnose is None:
            raise InputError(
                "a baseline compares per-question outcomes of [ci.diagnose]; add a "
                "[ci.diagnose] table with a question set"
            )
        base_outcomes = baseline_outcomes(baseline)
        if base_outcomes["k"] != config.diagnose.k:
            raise InputError(
                f"the baseline was measured at k={base_outcomes['k']} but ci.diagnose.k is "
                f"{config.diagnose.k}; use the same k or write a new baseline"
            )
    corpus = None
    if config.chunks is not None and (config.check_index or config.diagnose):
        corpus = load_chunks(config.chunks, config.id_column, config.text_column)
    questions = load_questions(config.diagnose.questions) if config.diagnose else None
    own_store, own_embedder = store is None, embedder is None
    if store is None:
        from ..stores import StoreOptions, open_store

        store = open_store(config.store, StoreOptions(trust_pickle=config.trust_pickle))
    try:
        if embedder is None and (config.check_index or config.diagnose):
            embedder = _open_embedder(config)
        fingerprint = store.fingerprint()
        gates: list[GateRow] = []
        results: dict[str, dict[str, Any]] = {}
        scale = None

        def timed(name: str, fn: Callable[[], Any]) -> Any:
            sub = Run(name)
            before = _embed_snapshot(embedder)
            say(f"{name}: running")
            res = fn()
            manifest = getattr(res, "manifest", None) or sub.manifest(
                store, embedder, seed=config.seed, fingerprint=fingerprint
            )
            if embedder is not None:
                manifest["embedding"] = _delta(before, _embed_snapshot(embedder))
            res.manifest = manifest
            results[name] = res.to_dict()
            return res

        if config.check_index is not None:
            gates += _run_check_index(config, config.check_index, store, embedder, corpus, timed)
        if config.probe_scale is not None:
            rows, scale = _run_probe_scale(config, config.probe_scale, store, timed)
            gates += rows
        if config.compare_ann is not None:
            gates += _run_compare_ann(config, config.compare_ann, store, timed, say)
        per_question = None
        base_section = None
        if config.diagnose is not None and questions is not None:
            assert embedder is not None
            rows, per_question = _run_diagnose(
                config, config.diagnose, store, embedder, questions, corpus, scale, timed, say
            )
            gates += rows
            if base_outcomes is not None:
                say("comparing with the baseline")
                base_section = compare_with_baseline(
                    per_question,
                    base_outcomes,
                    config.margins,
                    config.min_questions,
                    config.seed,
                )
                base_section["path"] = str(baseline.get("_path", "")) if baseline else ""
        checks = {
            name: worst([g.verdict for g in gates if g.check == name])
            for name in CHECKS
            if name in results
        }
        if base_section is not None:
            checks["baseline"] = worst([r["verdict"] for r in base_section["rows"]])
        verdict = worst(list(checks.values()))
        result = CiResult(
            verdict=verdict,
            checks=checks,
            gates=gates,
            baseline=base_section,
            per_question=per_question,
            results=results,
            config=config.to_dict(),
        )
        result.summary = _summary(result)
        result.manifest = run.manifest(
            store,
            embedder,
            seed=config.seed,
            fingerprint=fingerprint,
            config=config.source,
            baseline=base_section["path"] if base_section else None,
            seconds_by_check={
                n: r.get("manifest", {}).get("wall_seconds") for n, r in results.items()
            },
        )
        return result
    finally:
        if own_store:
            store.close()
        cache = getattr(embedder, "cache", None) if own_embedder else None
        if cache is not None:
            cache.close()


def _open_embedder(config: CiConfig) -> Embedder:
    from ..embedders import open_embedder
    from ..embedders.cache import CachedEmbedder, EmbeddingCache

    inner = open_embedder(config.embedder)
    cache = EmbeddingCache(config.cache) if config.cache is not None else None
    # CachedEmbedder exposes the inner embedder's stats read-only; it embeds the same way
    return cast(Embedder, CachedEmbedder(inner, cache))


_Timed = Callable[[str, Callable[[], Any]], Any]


def _run_check_index(
    config: CiConfig,
    c: CheckIndexConfig,
    store: VectorStore,
    embedder: Embedder | None,
    corpus: Corpus | None,
    timed: _Timed,
) -> list[GateRow]:
    from .integrity import check_index

    assert embedder is not None
    size = len(corpus) if corpus is not None else store.info().count
    # a sample as large as the corpus is the corpus: check every chunk (and list orphans)
    sample = None if c.sample is None or c.sample >= size else c.sample
    res = timed(
        "check-index",
        lambda: check_index(
            store, embedder, corpus, sample=sample, seed=config.seed, min_cosine=c.min_cosine
        ),
    )
    values = {
        "min_cosine": res.min_cosine,
        "median_cosine": res.median_cosine,
        "below_threshold": res.below_threshold,
        "error_findings": sum(1 for f in res.findings if f.severity == "error"),
        "checked": res.checked,
    }
    rows = [_judge("check-index", lim, values[lim.name]) for lim in c.limits]
    kinds = sorted({f.kind for f in res.findings if f.severity == "error"})
    for row in rows:
        if row.verdict == BLOCK and kinds:
            row.detail += f" (findings: {', '.join(kinds)})"
    return rows


def _run_probe_scale(
    config: CiConfig, c: ProbeScaleConfig, store: VectorStore, timed: _Timed
) -> tuple[list[GateRow], Any]:
    from .scale import probe_scale

    res = timed("probe-scale", lambda: probe_scale(store, c.probes, c.k, config.seed))
    row = GateRow("probe-scale", "transform", res.transform, c.expect or "a known formula",
                  "==" if c.expect else "fits", PASS, res.message)  # fmt: skip
    if not res.ok:
        row.verdict = BLOCK
    elif c.expect is not None and c.expect != res.transform:
        if c.expect in res.equivalent:
            row.detail = f"declared {c.expect} fits as well as {res.transform}; {res.message}"
        else:
            row.verdict = BLOCK
            row.detail = f"declared {c.expect} but the store's scores are {res.transform}"
    return [row], res


def _run_compare_ann(
    config: CiConfig,
    c: CompareAnnConfig,
    store: VectorStore,
    timed: _Timed,
    say: Callable[[str], None],
) -> list[GateRow]:
    from .ann import compare_ann, sample_queries

    def go() -> Any:
        qs = sample_queries(store, c.queries, config.seed, c.noise, c.cache_dir)
        return compare_ann(store, qs, c.k, c.fetch, c.target, config.seed, c.cache_dir, say)

    res = timed("compare-ann", go)
    rows = []
    for lim in c.limits:
        if lim.name == "recommended_fetch":
            rows.append(_judge("compare-ann", lim, res.recommended_fetch))
            continue
        fr = res.row(lim.at)
        n = fr.queries if lim.name in ANN_RATES else None
        rows.append(_judge("compare-ann", lim, getattr(fr, lim.name), n, config.min_questions))
    return rows


def _run_diagnose(
    config: CiConfig,
    c: DiagnoseConfig,
    store: VectorStore,
    embedder: Embedder,
    questions: list[Question],
    corpus: Corpus | None,
    scale: Any,
    timed: _Timed,
    say: Callable[[str], None],
) -> tuple[list[GateRow], dict[str, Any]]:
    from .diagnose import diagnose
    from .scale import scale_for

    if scale is None:
        say("resolving the store's score scale")
        scale = scale_for(store)
    hib = scale.higher_is_better
    if hib is None:
        hib = store.info().higher_is_better
    to_cos: Callable[[np.ndarray], np.ndarray] | None = scale.to_cosine
    try:
        scale.to_cosine(np.asarray([0.5]))
    except InputError:
        to_cos = None
    threshold = c.threshold
    if threshold is not None and c.threshold_scale == "cosine":
        threshold = float(scale.from_cosine(np.asarray([threshold]))[0])
    res = timed(
        "diagnose",
        lambda: diagnose(
            store,
            embedder,
            questions,
            corpus,
            k=c.k,
            fetch=c.fetch,
            threshold=threshold,
            higher_is_better=bool(hib),
            to_cosine=to_cos,
            min_cosine=c.min_cosine,
            refusal_pattern=c.refusal_pattern or None,
            seed=config.seed,
            progress=say,
        ),
    )
    rows = []
    for lim in c.limits:
        if lim.name in RANK_METRICS:
            m = getattr(res.metrics["exact" if lim.exact else "ann"], lim.name)
            rows.append(_judge("diagnose", lim, m.value, m.observed, config.min_questions))
        elif lim.name == "failing":
            rows.append(_judge("diagnose", lim, sum(res.counts[x] for x in _FAILING)))
        else:
            rows.append(_judge("diagnose", lim, res.counts[lim.name.upper()]))
    expected = {q.id: q.expected for q in questions}
    outcomes = []
    for d in res.questions:
        if not d.in_scope:
            continue
        r = d.ann_rank
        outcomes.append(
            {
                "id": d.id,
                "expected": expected[d.id],
                "label": d.label,
                "exact_rank": d.exact_rank,
                "ann_rank": r,
                "hit_at_k": 1 if r is not None and r < c.k else 0,
                "reciprocal_rank": 0.0 if r is None else 1.0 / (r + 1),
            }
        )
    per_question = {
        "k": c.k,
        "fetch": c.fetch,
        "ranking": "ann",
        "questions_file": str(c.questions),
        "question_set": questions_fingerprint(questions),
        "questions": outcomes,
    }
    return rows, per_question


# -- baseline ----------------------------------------------------------------------------


def load_baseline(path: str | Path) -> dict[str, Any]:
    """A saved ci (or diagnose) JSON result; raises DataFileError when unusable."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(
            f"baseline {p} does not exist; write one with indexcheck ci --json {p} on the "
            "accepted index"
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"cannot read baseline {p}: {exc}") from None
    if not isinstance(data, dict):
        raise DataFileError(f"baseline {p} is not a JSON object; pass an indexcheck ci JSON")
    baseline_outcomes(data, str(p))
    data["_path"] = str(p)
    return data


def baseline_outcomes(data: Mapping[str, Any], where: str = "the baseline") -> dict[str, Any]:
    """``{"k", "question_set", "questions": {id: {hit_at_k, reciprocal_rank, expected,
    ann_rank}}}`` from a ci JSON (``per_question``) or a diagnose JSON (``questions`` with
    ``ann_rank`` and ``k``)."""
    try:
        pq = data.get("per_question")
        if isinstance(pq, dict):
            k = int(pq["k"])
            rows = {
                str(r["id"]): {
                    "hit_at_k": float(r["hit_at_k"]),
                    "reciprocal_rank": float(r["reciprocal_rank"]),
                    "expected": list(r.get("expected") or []),
                    "ann_rank": r.get("ann_rank"),
                }
                for r in pq["questions"]
            }
            return {"k": k, "question_set": pq.get("question_set"), "questions": rows}
        if isinstance(data.get("questions"), list) and "k" in data and "metrics" in data:
            k = int(data["k"])
            rows = {}
            for r in data["questions"]:
                if not r.get("in_scope", True):
                    continue
                rank = r.get("ann_rank")
                rows[str(r["id"])] = {
                    "hit_at_k": 1.0 if rank is not None and rank < k else 0.0,
                    "reciprocal_rank": 0.0 if rank is None else 1.0 / (int(rank) + 1),
                    "expected": [],
                    "ann_rank": rank,
                }
            return {"k": k, "question_set": None, "questions": rows}
    except (KeyError, TypeError, ValueError) as exc:
        raise DataFileError(f"{where} has a malformed per-question result ({exc!r})") from None
    raise DataFileError(
        f"{where} holds no per-question outcomes; pass the JSON of an indexcheck ci run "
        "(--json) or of indexcheck diagnose"
    )


def decide(diff: float | None, low: float | None, n: int, margin: float, n_min: int) -> str:
    """The non-inferiority verdict of the module docstring (rules 1-4, in order)."""
    if n < n_min or diff is None or low is None:
        return INSUFFICIENT
    if diff < -margin:
        return BLOCK
    if low > -margin:
        return PASS
    return INSUFFICIENT


def compare_with_baseline(
    current: Mapping[str, Any],
    base: Mapping[str, Any],
    margins: Mapping[str, float],
    min_questions: int,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Pair questions by id and judge each metric of ``margins`` for non-inferiority.

    Returns ``{"rows", "paired", "unpaired", "changed", "question_set_changed",
    "regressions", "improvements"}``; rows are :class:`BaselineRow` dicts.
    """
    k = int(current["k"])
    cur = {r["id"]: r for r in current["questions"]}
    old = base["questions"]
    changed = [
        i
        for i in cur
        if i in old and old[i]["expected"] and old[i]["expected"] != cur[i]["expected"]
    ]
    paired = [i for i in cur if i in old and i not in changed]
    unpaired = len(set(cur) ^ set(old))
    rows = []
    for metric, margin in margins.items():
        field_ = "hit_at_k" if metric == "hit_at_k" else "reciprocal_rank"
        a = np.asarray([old[i][field_] for i in paired], dtype=np.float64)
        b = np.asarray([cur[i][field_] for i in paired], dtype=np.float64)
        diff, low, high = bootstrap_mean(b - a, seed=seed, resamples=resamples)
        n_min = max(min_questions, math.ceil(1 / margin - 1e-9))
        verdict = decide(diff, low, len(paired), margin, n_min)
        label = f"hit@{k}" if metric == "hit_at_k" else "MRR"
        rows.append(
            asdict(
                BaselineRow(
                    metric=metric,
                    label=label,
                    n=len(paired),
                    min_questions=n_min,
                    baseline=float(a.mean()) if a.size else None,
                    current=float(b.mean()) if b.size else None,
                    difference=diff,
                    low=low,
                    high=high,
                    margin=margin,
                    verdict=verdict,
                    detail=_baseline_detail(verdict, diff, low, high, margin, len(paired), n_min),
                    method=f"paired bootstrap, 95% percentile interval, {resamples} "
                    f"resamples, seed {seed}",
                )
            )
        )
    regressions, improvements = [], 0
    for i in paired:
        before, after = old[i]["reciprocal_rank"], cur[i]["reciprocal_rank"]
        if after < before or cur[i]["hit_at_k"] < old[i]["hit_at_k"]:
            regressions.append(
                {
                    "id": i,
                    "baseline_rank": old[i]["ann_rank"],
                    "current_rank": cur[i]["ann_rank"],
                    "baseline_hit": old[i]["hit_at_k"],
                    "current_hit": cur[i]["hit_at_k"],
                    "label": cur[i]["label"],
                    "loss": before - after,
                }
            )
        elif after > before:
            improvements += 1
    regressions.sort(key=lambda r: (-r["loss"], r["id"]))
    qs_old = base.get("question_set")
    return {
        "rows": rows,
        "paired": len(paired),
        "unpaired": unpaired,
        "changed": changed,
        "question_set_changed": bool(qs_old) and qs_old != current.get("question_set"),
        "regressions": regressions[:REGRESSIONS_SHOWN],
        "regression_count": len(regressions),
        "improvements": improvements,
    }


def _baseline_detail(
    verdict: str,
    diff: float | None,
    low: float | None,
    high: float | None,
    margin: float,
    n: int,
    n_min: int,
) -> str:
    if diff is None or low is None or high is None:
        return f"no paired questions (need {n_min})"
    what = f"difference {diff:+.3f} [{low:+.3f}, {high:+.3f}] on {n} paired questions"
    if n < n_min:
        return f"{what}; need at least {n_min} to decide at margin {margin:g}"
    if verdict == BLOCK:
        proven = "; worse beyond noise" if high < -margin else ""
        return f"{what}: loses more than the margin {margin:g}{proven}"
    if verdict == PASS:
        return f"{what}: non-inferior at margin {margin:g}"
    return f"{what}: the interval reaches below -{margin:g}; add questions or widen the margin"


def _summary(result: CiResult) -> str:
    rows = [g.verdict for g in result.gates]
    if result.baseline:
        rows += [r["verdict"] for r in result.baseline["rows"]]
    counts = {v: rows.count(v) for v in (PASS, INSUFFICIENT, BLOCK)}
    return (
        f"{result.verdict}: {counts[PASS]} passed, {counts[BLOCK]} blocked, "
        f"{counts[INSUFFICIENT]} with insufficient evidence, of {len(rows)} gates"
    )
