"""Assertions for a test suite: each runs one public check and fails with its summary.

``assert_index_aligned``, ``assert_no_ann_miss``, ``assert_threshold_separates`` and
``assert_grounded`` call :func:`indexcheck.check_index`, :func:`indexcheck.compare_ann`,
:func:`indexcheck.sweep_threshold` and :func:`indexcheck.judge` with the same keywords and
scales, return the result when it passes (so a test can assert more), and otherwise raise
:class:`IndexcheckAssertionError`: the root finding on the first line, then the check's
terminal summary as the CLI prints it, in plain text. A front end over the public face
(``import indexcheck``), beside the CLI; re-exported by :mod:`indexcheck.testing`; the pytest
plugin (:mod:`indexcheck.cli.pytest_plugin`) gives the fixtures.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..api import EmbedderLike, StoreLike
    from ..commands.check_index import CheckIndexResult
    from ..commands.compare_ann import AnnResult, QuerySet
    from ..commands.judge import JudgeResult
    from ..commands.sweep_threshold import SweepResult
    from ..inputs.corpus import Corpus
    from ..inputs.questions import Question
    from ..judges.base import Judge


class IndexcheckAssertionError(AssertionError):
    """A check that did not pass. ``result`` is the check's result; ``str(exc)`` its root
    finding, then its terminal summary (plain text, no colour)."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


IndexcheckAssertionError.__module__ = "indexcheck.testing"  # the path users import it from


#: Width of the rendered summary: wide enough that chunk ids are not cut (as the CLI in a log).
SUMMARY_WIDTH = 120
_FAILING = ("FAIL", "BLOCK", "INSUFFICIENT_EVIDENCE")
R = TypeVar("R")


def summary_text(result: Any, width: int = SUMMARY_WIDTH) -> str:
    """The terminal summary the CLI prints for ``result``, as plain text without colour."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(
        file=out, width=width, color_system=None, force_terminal=False, highlight=False
    )
    terminal = _terminal_sections(result)
    if terminal:
        from ..output.render.terminal import render

        render(terminal, console)
    else:  # judge renders its claims table itself (indexcheck/output/render/judge_terminal.py)
        from ..output.render.judge_terminal import render as render_judge

        render_judge(result, console)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")


def root_finding(result: Any) -> str:
    """The line that says what is wrong: the first error finding, else the failing verdict."""
    answers = getattr(result, "answers", None)
    if answers is not None and hasattr(result, "unjudged"):
        return _judge_root(result)
    texts = [b for s in _terminal_sections(result) for b in s.blocks if hasattr(b, "badge")]
    for b in texts:
        if b.badge == "error":
            return str(b.text)
    for b in reversed(texts):
        if b.badge in _FAILING:
            return str(b.text)
    return "the check did not pass"


def check_passed(result: R, command: str) -> R:
    """``result`` when ``result.ok``; else raise :class:`IndexcheckAssertionError`."""
    __tracebackhide__ = True
    if getattr(result, "ok", False):
        return result
    head = f"indexcheck {command} failed: {root_finding(result)}"
    raise IndexcheckAssertionError(f"{head}\n\n{summary_text(result)}", result)


def assert_index_aligned(
    store: StoreLike,
    chunks: str | Path | Corpus | None,
    *,
    sample: int | None = 100,
    min_cosine: float = 0.999,
    embedder: EmbedderLike = None,
    **options: Any,
) -> CheckIndexResult:
    """Every sampled stored vector is its chunk's fresh embedding (cosine >= ``min_cosine``).

    ``sample`` chunks drawn with ``seed`` (None, or a corpus no larger: all of them);
    ``embedder`` a spec or an opened embedder (None: the default model); other ``options`` as
    :func:`indexcheck.check_index`. Fails naming the shift, model mismatch, stale vector...
    """
    __tracebackhide__ = True
    import indexcheck

    from ..errors import SampleTooLargeError

    check_index = indexcheck.check_index
    try:
        result = check_index(
            store, chunks, embedder, sample=sample, min_cosine=min_cosine, **options
        )
    except SampleTooLargeError:  # a sample as large as the corpus is the corpus
        result = check_index(store, chunks, embedder, sample=None, min_cosine=min_cosine, **options)
    return check_passed(result, "check-index")


def assert_no_ann_miss(
    store: StoreLike,
    *,
    k: int = 4,
    fetch: int | Sequence[int] | None = None,
    target: float = 0.01,
    queries: int | Any | QuerySet = 500,
    **options: Any,
) -> AnnResult:
    """Approximate search misses the exact best chunk in at most ``target`` of ``queries``.

    ``fetch``: the depth the retriever asks for before re-ranking to ``k`` (a list tries
    each, passing when one reaches the target; None: k and 10, 20, 50). ``queries``: a
    number of stored vectors to sample (moved by ``noise``), float32 (q, d) vectors or a
    QuerySet. Other ``options`` as :func:`indexcheck.compare_ann` (seed, noise).
    """
    __tracebackhide__ = True
    import indexcheck

    depths = [fetch] if isinstance(fetch, int) else fetch
    result = indexcheck.compare_ann(store, queries, k=k, fetch=depths, target=target, **options)
    return check_passed(result, "compare-ann")


def assert_threshold_separates(
    store: StoreLike,
    questions: str | Path | Sequence[Question],
    *,
    embedder: EmbedderLike = None,
    recall: float = 0.95,
    rule: str = "recall",
    k: int = 4,
    fetch: int = 20,
    **options: Any,
) -> SweepResult:
    """A refusal threshold keeps in-scope recall >= ``recall`` and refuses the out-of-scope
    questions: the sweep's verdict (``rule`` recall or youden). ``questions`` a question
    file or loaded questions, with in-scope and out-of-scope ones; other ``options`` as
    :func:`indexcheck.sweep_threshold` (refusal_pattern, refusal_marked). The result's
    ``recommended_threshold`` is on the store's own scale and in cosine.
    """
    __tracebackhide__ = True
    import indexcheck

    result = indexcheck.sweep_threshold(
        store,
        questions,
        embedder,
        recall_target=recall,
        rule=rule,
        k=k,
        fetch=fetch,
        **options,
    )
    return check_passed(result, "sweep-threshold")


def assert_grounded(
    answers: str | Path | Sequence[Any],
    *,
    judge: str | Judge,
    **options: Any,
) -> JudgeResult:
    """Every claim of every answer is SUPPORTED by the context it was given, none unjudged.

    ``answers`` an answers file (JSONL/CSV/Parquet) or loaded rows; ``judge`` a spec
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or an opened
    judge; other ``options`` as :func:`indexcheck.judge` (prompt, cache, refusal_pattern,
    allow_unjudged).
    """
    __tracebackhide__ = True
    import indexcheck

    return check_passed(indexcheck.judge(answers, judge, **options), "judge")


def _terminal_sections(result: Any) -> list[Any]:
    """The terminal sections registered for the result's type (none for judge's, whose
    claims table renders itself)."""
    from ..commands import reports  # noqa: F401  (every command's renderer registered)
    from ..output.model import terminal
    from ..output.registry import sections

    return terminal(sections(result))


def _judge_root(result: Any) -> str:
    if result.unjudged:
        return f"answer {result.unjudged[0]}: the judge's reply never parsed (UNJUDGED)"
    for a in result.answers:
        for c in a.claims:
            if c.verdict.value != "SUPPORTED":
                return f"answer {a.id}: claim {c.claim!r} is {c.verdict.value}"
    return "the check did not pass"


__all__ = [
    "IndexcheckAssertionError",
    "assert_grounded",
    "assert_index_aligned",
    "assert_no_ann_miss",
    "assert_threshold_separates",
    "check_passed",
    "root_finding",
    "summary_text",
]
