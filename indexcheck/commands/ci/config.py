"""The [ci] table of indexcheck.toml: checks, their limits, and non-inferiority margins.

Parsed strictly: an unknown key, a wrong type or an unparsable limit raises InputError
naming the key (exit 2). Each check's table is parsed in :mod:`indexcheck.commands.ci.jobs`,
through the typed reader of :mod:`indexcheck.commands.ci.toml_table`.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DataFileError, InputError
from ...inputs.config_file import read_config
from ..kit.verdicts import Verdict
from .jobs import (
    ANN_METRICS,
    ANN_RATES,
    CHECK_INDEX_METRICS,
    DIFF_INDEX_METRICS,
    LABEL_METRICS,
    RANK_METRICS,
    CheckIndexConfig,
    CompareAnnConfig,
    DiagnoseConfig,
    DiffIndexConfig,
    ProbeScaleConfig,
    check_index_config,
    compare_ann_config,
    diagnose_config,
    diff_index_config,
    probe_scale_config,
)
from .toml_table import OPS, Limit, TomlTable, with_k

PASS = Verdict.PASS
INSUFFICIENT = Verdict.INSUFFICIENT_EVIDENCE
BLOCK = Verdict.BLOCK
CHECKS = ("check-index", "probe-scale", "compare-ann", "diagnose", "diff-index")
DEFAULT_MARGIN = 0.05
DEFAULT_MIN_QUESTIONS = 30
RESAMPLES = 2000
REGRESSIONS_SHOWN = 50
BASELINE_METRICS = ("hit_at_k", "mrr")
# -- configuration -----------------------------------------------------------------------


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
    diff_index: DiffIndexConfig | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for cfg in ("check_index", "compare_ann", "diagnose", "diff_index"):
            if d[cfg] is not None:
                d[cfg]["limits"] = [lim["text"] for lim in d[cfg]["limits"]]
        for cfg in ("compare_ann", "diagnose"):
            if d[cfg] is not None and d[cfg].get("filter") is None:
                d[cfg].pop("filter", None)  # unfiltered: as before filters existed
        return json.loads(json.dumps(d, default=str))  # type: ignore[no-any-return]

    @classmethod
    def from_toml(cls, path: str | Path, env: Mapping[str, str] | None = None) -> CiConfig:
        """Read and validate ``[ci]``; raises InputError naming the offending key."""
        p = Path(path)
        try:  # never a FIFO or /dev/zero; nested too deep is exit 2 naming the file
            data = read_config(p)  # pyproject.toml: its [tool.indexcheck] table
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
        defaults = TomlTable(
            defaults_raw if isinstance(defaults_raw, dict) else {}, "defaults", source
        )
        t = TomlTable(ci_raw, "ci", source)

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
            cfg.check_index = check_index_config(sub)
        if (sub := t.table("probe_scale")) is not None:
            cfg.probe_scale = probe_scale_config(sub)
        if (sub := t.table("compare_ann")) is not None:
            cfg.compare_ann = compare_ann_config(sub)
        if (sub := t.table("diagnose")) is not None:
            cfg.diagnose = diagnose_config(sub)
        if (sub := t.table("diff_index")) is not None:
            cfg.diff_index = diff_index_config(sub)
        # not [ci.baseline]: the group's config loader would hand that table to --baseline
        if (sub := t.table("non_inferiority")) is not None:
            cfg.margins, cfg.baseline_path = _baseline_config(
                sub, cfg.diagnose.k if cfg.diagnose else None
            )
        t.finish()
        checks = (cfg.check_index, cfg.probe_scale, cfg.compare_ann, cfg.diagnose, cfg.diff_index)
        if not any(checks):
            raise InputError(
                f"{source}: [ci] configures no check; add [ci.check-index], "
                "[ci.probe-scale], [ci.compare-ann], [ci.diagnose] or [ci.diff-index]"
            )
        return cfg


def _baseline_config(t: TomlTable, k: int | None) -> tuple[dict[str, float], Path | None]:
    path = t.str_("baseline", None)
    shared = t.float_("margin", DEFAULT_MARGIN, 0.0, 1.0)
    out = dict.fromkeys(BASELINE_METRICS, shared)
    sub = t.table("margins")
    if sub is not None:
        for norm, (key, _value) in sub.raw.items():
            name = with_k(norm, k, BASELINE_METRICS) if k is not None else None
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


def needs_embedder(config: CiConfig) -> bool:
    """Whether a configured check re-embeds text (and so needs ``ci.embedder``)."""
    diff = config.diff_index is not None and config.diff_index.sample_new != 0
    return bool(config.check_index or config.diagnose or diff)


__all__ = [
    "ANN_METRICS",
    "ANN_RATES",
    "BASELINE_METRICS",
    "BLOCK",
    "CHECKS",
    "CHECK_INDEX_METRICS",
    "DIFF_INDEX_METRICS",
    "INSUFFICIENT",
    "LABEL_METRICS",
    "OPS",
    "PASS",
    "RANK_METRICS",
    "CheckIndexConfig",
    "CiConfig",
    "CompareAnnConfig",
    "DiagnoseConfig",
    "DiffIndexConfig",
    "Limit",
    "ProbeScaleConfig",
    "needs_embedder",
]
