"""judge's and check-answers' runs, and diagnose's judging of answers, the same for the api
(and so the CLI): every input read and checked first, then the store and the judge opened,
judgements cached in a SQLite file, the result stamped once."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...inputs.answers import DEFAULT_CITATION_PATTERN, AnswerRow, compile_pattern, read_answers
from ...inputs.given import corpus_of
from ...judges import judgement_cache, opened_judge
from ...judges.base import Judge
from ...output.manifest import Run, stamp
from ...safety.secrets import spec_password_warning
from ...safety.textsafe import visible
from ...stores.opening import opened
from . import AnswerResult, JudgeResult, Prompt, judge_answers, load_prompt
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .answer_checks import AnswerChecksResult, check_answers
from .settings import CheckAnswersSettings, JudgeSettings

JudgeOpener = Callable[[], AbstractContextManager[Judge | None]]
Say = Callable[[str], None]


def judged_answers(
    answers: Sequence[AnswerRow], open_judge: JudgeOpener, cache: str | Path | None = None
) -> tuple[list[AnswerResult], dict[str, Any]]:
    """The answers judged (with the shipped prompt) by the judge ``open_judge()`` opens,
    judgements cached in the SQLite file ``cache``; and the judge's call stats."""
    with open_judge() as opened_, judgement_cache(cache) as replies:
        assert opened_ is not None
        result = judge_answers(answers, opened_, load_prompt(), cache=replies)
        return result.answers, opened_.stats.as_dict()


@dataclass(frozen=True)
class _Inputs:
    """What a judge run reads before anything opens: a bad input costs no request."""

    rows: list[AnswerRow]
    source: dict[str, Any] | None
    checks: dict[str, Any] | None
    prompt: Prompt
    labels: tuple[dict[tuple[str, int], str], dict[str, float]] | None
    key: bytes | None


def _rows(
    answers: str | Path | Sequence[AnswerRow], pattern: str | None, fmt: str | None, corpus: Any
) -> tuple[list[AnswerRow], dict[str, Any] | None]:
    """The answer rows (read from their file as given) and, for a trace export, its source."""
    if not isinstance(answers, str | Path):
        return list(answers), None
    read = read_answers(answers, pattern or DEFAULT_CITATION_PATTERN, fmt=fmt, chunks=corpus)
    return read.rows, read.source


def _read_inputs(settings: JudgeSettings, warn: Say) -> _Inputs:
    """Answers, refusal pattern, answer checks, prompt, labels and sheet folder and key, in
    that order; each warning (a trace export's, a stripped key, a password in the store
    spec) through ``warn``, escaped."""
    from .calibration import load_labels
    from .sheet.chain import sheet_key
    from .sheet.sheet import check_sheet_dir

    corpus = corpus_of(settings.chunks)  # pairs a trace's documents without ids
    rows, source = _rows(settings.answers, settings.citation_pattern, settings.answers_format,
                         corpus)  # fmt: skip
    for warning in (source or {}).get("warnings", []):
        warn(visible(warning))
    if settings.refusal_pattern is not None:
        compile_pattern(settings.refusal_pattern, "--refusal-pattern")
    # no model: the answers' URLs, references and numbers against the context and chunks
    checks = check_answers(rows, corpus).block() if settings.answer_checks else None
    prompt = load_prompt(settings.prompt)
    labels = load_labels(settings.labels) if settings.labels is not None else None
    key = None
    if settings.sheet is not None:
        check_sheet_dir(Path(settings.sheet))
        key, warning = sheet_key()
        if warning:
            warn(warning)
    if isinstance(settings.store, str) and (warning := spec_password_warning(settings.store)):
        warn(warning)
    return _Inputs(rows, source, checks, prompt, labels, key)


def run_judge(
    settings: JudgeSettings, progress: Say | None = None, warn: Say | None = None
) -> JudgeResult:
    """:func:`judge_answers` on the settings' answers (read, with every other input, before
    the store and the judge open); then the answer checks, the calibration against the
    labels and the evidence sheet's new run. Stamped once: judge, prompt, answers file and
    store fingerprint."""
    started = Run("judge")
    got = _read_inputs(settings, warn or (lambda _w: None))
    with opened(settings.store) as (s, _):
        with opened_judge(settings.judge) as j, judgement_cache(settings.cache) as replies:
            assert j is not None
            result = judge_answers(
                got.rows, j, got.prompt, retries=settings.retries,
                refusal_pattern=settings.refusal_pattern, cache=replies,
                allow_unjudged=settings.allow_unjudged, progress=progress,
            )  # fmt: skip
            model_id, judging = j.model_id, j.stats.as_dict()
        fingerprint = s.fingerprint() if s is not None else None
        scheme = settings.judge.partition(":")[0] if isinstance(settings.judge, str) else None
        stamp(result, started, s, fingerprint=fingerprint, seed=settings.seed, **{
            "judge": {"model_id": model_id, **({"spec_scheme": scheme} if scheme else {})},
            "judging": judging,
            "prompt": {"version": got.prompt.version, "source": got.prompt.source},
            **_answers_facts(settings.answers, got.source),
            "store_fingerprint": fingerprint,
        })  # fmt: skip
    result.answer_checks = got.checks
    if got.labels is not None:
        from .calibration import calibrate

        result.calibration = calibrate(result.answers, *got.labels, seed=settings.seed)
    if settings.sheet is not None:
        result.sheet = _append_to_sheet(settings, result, got, model_id, fingerprint)
    return result


def _answers_facts(answers: Any, source: dict[str, Any] | None) -> dict[str, Any]:
    """The manifest's answers file (and a trace export's source) when read from a file."""
    if not isinstance(answers, str | Path):
        return {}
    return {"answers": str(answers), **({"answers_source": source} if source is not None else {})}


def _append_to_sheet(
    settings: JudgeSettings,
    result: JudgeResult,
    got: _Inputs,
    model_id: str,
    fingerprint: str | None,
) -> dict[str, Any]:
    """This run's rows appended to the evidence sheet; the result's ``sheet`` entry."""
    import json

    from .sheet import sheet

    meta = sheet.RunMeta(model_id, got.prompt.version, fingerprint, settings.reviewer,
                         settings.note)  # fmt: skip
    run_id, files = sheet.write_run(
        Path(settings.sheet or ""), result, got.rows, meta,
        hashes_only=settings.sheet_hashes_only, fmt=settings.sheet_format, key=got.key,
    )  # fmt: skip
    chain = json.loads(files[0].read_text(encoding="utf-8"))["chain"]
    return {
        "run_id": run_id,
        "files": [str(p) for p in files],
        "chain_head": chain["head"],
        "rows": chain["rows"],
        "signed": got.key is not None,
    }


def run_check_answers(
    settings: CheckAnswersSettings, warn: Say | None = None
) -> AnswerChecksResult:
    """:func:`.answer_checks.check_answers` on the settings' answers (a file read as judge
    reads it, each trace-export warning escaped through ``warn``, or loaded rows) against
    its chunks (read first: they pair a trace's documents without ids). Stamped once, with
    the answers and chunks files and the reading time."""
    started = Run("check-answers")
    t0 = time.perf_counter()
    corpus = corpus_of(settings.chunks, settings.id_column, settings.text_column)
    assert corpus is not None
    pattern = settings.citation_pattern or DEFAULT_CITATION_PATTERN
    rows, source = _rows(settings.answers, pattern, settings.answers_format, corpus)
    for warning in (source or {}).get("warnings", []):
        (warn or (lambda _w: None))(visible(warning))
    read = round(time.perf_counter() - t0, 3)
    result = check_answers(rows, corpus)
    answers, chunks = settings.answers, settings.chunks
    path = str(answers) if isinstance(answers, str | Path) else None
    facts: dict[str, Any] = {"answers_file": path}
    if isinstance(chunks, str | Path):
        facts["chunks_file"] = str(chunks)
    facts["seconds"] = {"read": read, **result.manifest_facts.get("seconds", {})}
    stamp(result, started, **facts)
    return result


__all__ = ["judged_answers", "run_check_answers", "run_judge"]
