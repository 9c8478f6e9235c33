"""ci: run the configured checks, gate each on declared limits, and compare question-level
retrieval with a saved baseline under non-inferiority margins.

Verdicts, worst first: ``BLOCK`` > ``INSUFFICIENT_EVIDENCE`` > ``PASS``; a check's is the worst
of its gate rows, the run's the worst of all, and only ``PASS`` passes (exit 1 otherwise). A
gate row compares one value with a limit (``metric op number``); a rate over fewer than
``min_questions`` is ``INSUFFICIENT_EVIDENCE`` unless its 95% interval cannot reach the limit
(``BLOCK``); nothing measured is ``BLOCK``. Against a baseline, per metric (hit@k, MRR, in
[-1, 1] per paired question): Δ = mean(current - baseline), [L, U] its paired-bootstrap 95%
interval, δ the margin, n_min = max(min_questions, ceil(1/δ)); n < n_min is
``INSUFFICIENT_EVIDENCE``, Δ < -δ ``BLOCK``, L > -δ ``PASS``, else ``INSUFFICIENT_EVIDENCE``
(docs/commands/ci.md). Parsing lives in :mod:`.config`, the baseline comparison in
:mod:`.noninferiority`, each check's run and gates in :mod:`.run_checks`; this module runs
them in order and gathers verdicts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.corpus import Corpus, load_chunks
from ...inputs.questions import load_questions
from ...stores.base import VectorStore
from ..kit.verdicts import worst
from .baseline_guard import check_baseline
from .config import BLOCK, CHECKS, INSUFFICIENT, PASS, CiConfig, needs_embedder
from .gates import GateRow
from .noninferiority import (
    BaselineRow,
    baseline_outcomes,
    compare_with_baseline,
    decide,
    load_baseline,
)
from .result import CiResult
from .run_checks import (
    _run_check_index,
    _run_compare_ann,
    _run_diagnose,
    _run_probe_scale,
    questions_fingerprint,
)
from .settings import CiSettings

# -- results -----------------------------------------------------------------------------


# -- running -----------------------------------------------------------------------------


def _quiet(_msg: str) -> None:
    return None


def _embed_snapshot(embedder: Embedder | None) -> dict[str, Any]:
    return embedder.stats.as_dict() if embedder is not None else {}


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Embedding cost spent between two ``EmbedStats.as_dict()`` snapshots."""
    return {key: round(value - before.get(key, 0), 4) for key, value in after.items()}


def run_ci(
    config: CiConfig,
    baseline: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    store: VectorStore,
    embedder: Embedder | None = None,
    old_store: VectorStore | None = None,
    baseline_any_store: bool = False,
) -> CiResult:
    """Run every configured check on ``store`` (opened by the caller from ``config.store``),
    gate it, and compare with ``baseline`` (a parsed ci or diagnose JSON result).
    ``embedder`` is needed when ``[ci.check-index]`` or ``[ci.diagnose]`` is configured
    (and by ``[ci.diff-index]`` with ``sample-new``); ``old_store`` by ``[ci.diff-index]``
    (opened by the caller from ``ci.diff-index.old``; ``store`` is the new index).
    A ``baseline`` measured on another store or embedder is refused before any check
    runs, unless ``baseline_any_store`` (then ``result.baseline_differences`` lists how).
    Raises InputError/DataFileError for bad input, BackendError when a backend fails;
    never returns a PASS for what it did not measure. Closes nothing: the caller opened
    the store and embedder and closes them."""
    say = progress or _quiet
    base_outcomes = None
    differences: list[str] = []
    if baseline is not None:  # two different systems are not compared by accident
        info, model = store.info(), embedder.model_id if embedder is not None else None
        differences = check_baseline(
            baseline, info.backend, info.metric, model, allow_any=baseline_any_store
        )
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
    diff = config.diff_index
    if diff is not None and old_store is None:
        raise InputError(
            "[ci.diff-index] compares with the old index: pass old_store "
            "(open it from ci.diff-index.old)"
        )
    corpus = None
    if config.chunks is not None and (config.check_index or config.diagnose or diff):
        corpus = load_chunks(config.chunks, config.id_column, config.text_column)
    chunks_old = chunks_new = None
    if diff is not None:
        chunks_new = corpus if diff.chunks_new is None else _load(config, diff.chunks_new)
        chunks_old = None if diff.chunks_old is None else _load(config, diff.chunks_old)
    questions = load_questions(config.diagnose.questions) if config.diagnose else None
    if embedder is None and needs_embedder(config):
        raise InputError(
            "[ci.check-index], [ci.diagnose] and [ci.diff-index] with sample-new re-embed "
            "text: pass an embedder (open it from ci.embedder)"
        )
    fingerprint = store.fingerprint()
    gates: list[GateRow] = []
    results: dict[str, dict[str, Any]] = {}
    scale = None
    checks_run: dict[str, dict[str, Any]] = {}

    def timed(name: str, fn: Callable[[], Any], **extra: Any) -> Any:
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        started = time.perf_counter()
        before = _embed_snapshot(embedder)
        say(f"{name}: running")
        res = fn()
        facts: dict[str, Any] = {
            "seed": config.seed,
            "fingerprint": fingerprint,
            **getattr(res, "manifest_facts", {}),
            "started_at": started_at,
            "wall_seconds": round(time.perf_counter() - started, 3),
            # a check that embeds nothing (probe-scale) names no embedder, as before
            "with_embedder": not hasattr(res, "manifest_facts"),
            **extra,
        }
        if embedder is not None:
            facts["embedding"] = _delta(before, _embed_snapshot(embedder))
        checks_run[name] = facts
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
            config, store, embedder, questions, corpus, scale, timed, say
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
    if diff is not None:
        from .diff_index_job import run_diff_index_job

        assert old_store is not None
        gates += run_diff_index_job(
            config, diff, store, old_store, embedder, (chunks_old, chunks_new), timed, say
        )
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
        baseline_differences=differences,
    )
    result.summary = _summary(result)
    result.manifest_facts = {
        "seed": config.seed,
        "fingerprint": fingerprint,
        "config": config.source,
        "baseline": base_section["path"] if base_section else None,
        "checks": checks_run,
    }
    return result


def _load(config: CiConfig, path: Any) -> Corpus:
    return load_chunks(path, config.id_column, config.text_column)


def _summary(result: CiResult) -> str:
    rows = [g.verdict for g in result.gates]
    if result.baseline:
        rows += [r["verdict"] for r in result.baseline["rows"]]
    counts = {v: rows.count(v) for v in (PASS, INSUFFICIENT, BLOCK)}
    return (
        f"{result.verdict}: {counts[PASS]} passed, {counts[BLOCK]} blocked, "
        f"{counts[INSUFFICIENT]} with insufficient evidence, of {len(rows)} gates"
    )


__all__ = [
    "BLOCK",
    "INSUFFICIENT",
    "PASS",
    "BaselineRow",
    "CiConfig",
    "CiResult",
    "CiSettings",
    "GateRow",
    "baseline_outcomes",
    "compare_with_baseline",
    "decide",
    "load_baseline",
    "questions_fingerprint",
    "run_ci",
]
