"""``questions generate``'s run for the api (and so the CLI): the refusal pattern checked,
the generator and judge opened from their specs (a bad spec names its option), the chunks
read from the file or the store, the set generated, written and stamped once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from ...errors import SpecError
from ...inputs.answers import compile_pattern
from ...inputs.given import corpus_of
from ...judges import judgement_cache, opened_judge
from ...judges.base import Judge
from ...output.manifest import Run, stamp
from ...stores.opening import opened
from ..kit.retrieval import marked_refusals
from . import QuestionSetResult, generate_questions
from .output import chunks_of, finish_run
from .settings import GenerateQuestionsSettings


@contextmanager
def _model(spec: str | Judge | None, option: str) -> Iterator[Judge | None]:
    """A generator or judge as given, or opened through the judge seam (and closed); a bad
    spec names its option."""
    stack = ExitStack()
    try:
        model = stack.enter_context(opened_judge(spec))
    except SpecError as exc:
        raise SpecError(f"{option}: {exc}") from None
    with stack:
        yield model


def _provenance(
    settings: GenerateQuestionsSettings, generator: Judge, corpus: Any
) -> dict[str, Any]:
    """The manifest's and sidecar's generator spec scheme and chunks source (for a generator
    given as a spec), then the caller's ``provenance``."""
    mine: dict[str, Any] = {}
    if isinstance(settings.generator, str):
        scheme = settings.generator.split(":")[0]
        mine["generator"] = {"model_id": generator.model_id, "spec_scheme": scheme}
        store = settings.store if isinstance(settings.store, str) else None
        mine["chunks"] = corpus.source if corpus is not None else store
    return {**mine, **(settings.provenance or {})}


def run_generate_questions(
    settings: GenerateQuestionsSettings, progress: Callable[[str], None] | None = None
) -> QuestionSetResult:
    """Generate, verify and gate a question set as the settings say; with ``out``, write it
    and its provenance sidecar. Closes what it opened."""
    if settings.refusal_pattern is not None:
        compile_pattern(settings.refusal_pattern, "--refusal-pattern")
    started, corpus = Run("questions generate"), corpus_of(settings.chunks)
    with ExitStack() as stack:
        enter = stack.enter_context
        gen = enter(_model(settings.generator, "--generator"))
        ver = enter(_model(settings.judge, "--judge"))
        assert gen is not None
        provenance = _provenance(settings, gen, corpus)
        store = None if corpus is not None else settings.store
        s, _ = enter(opened(store, trust_pickle=settings.trust_pickle))
        chunks = chunks_of(corpus, s)  # neither: refused before anything opens
        uses = False if settings.dry_run else settings.embedder
        _, emb = enter(opened(None, uses, cache=settings.cache))
        cache = enter(judgement_cache(None if settings.dry_run else settings.cache))
        result = generate_questions(
            settings, chunks, gen, emb, judge=ver, refusal_marked=marked_refusals(chunks),
            cache=cache, progress=progress,
        )  # fmt: skip
        facts = finish_run(result, settings.options(), provenance, settings.out, emb)
        stamp(result, started, s, emb, **facts)
        return result


__all__ = ["run_generate_questions"]
