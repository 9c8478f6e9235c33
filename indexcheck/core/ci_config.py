"""The [ci] table of indexcheck.toml: checks, their limits, and non-inferiority margins.

Parsed strictly: an unknown key, a wrong type or an unparsable limit raises InputError
naming the key (exit 2).
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataFileError, InputError
from .retrieval import DEFAULT_REFUSAL_PATTERN
from .verdicts import Verdict

PASS = Verdict.PASS
INSUFFICIENT = Verdict.INSUFFICIENT_EVIDENCE
BLOCK = Verdict.BLOCK
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
    from .probe_scale import MAX_PROBES, transform_of

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
