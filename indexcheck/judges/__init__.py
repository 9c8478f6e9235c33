"""Judges (LLM graders of answers), one module each, opened from a spec string.

``mistral:MODEL``, ``openai:BASE_URL?model=NAME`` (any OpenAI-compatible chat endpoint),
``py:module:function``. Schemes resolve through the one plugin manager
(:mod:`indexcheck.plugins`, hook ``register_judges``: a scheme names a function
``open(rest) -> Judge``); the built-in ones register there like any plugin. SDKs are
imported only when their judge is opened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import plugins
from ..errors import SpecError
from ..safety.textsafe import visible
from .base import BaseJudge, Judge, JudgeRequest, JudgeStats, RawReply
from .cache import JudgementCache, judgement_key

__all__ = [
    "BaseJudge",
    "Judge",
    "JudgeRequest",
    "JudgeStats",
    "JudgementCache",
    "RawReply",
    "judgement_cache",
    "judgement_key",
    "open_judge",
    "opened_judge",
]


def open_mistral_judge(rest: str) -> Judge:
    from .mistral.judge import MistralJudge

    return MistralJudge(rest)


def open_openai_judge(rest: str) -> Judge:
    from .openai.judge import from_spec

    return from_spec(rest)


def open_py_judge(rest: str) -> Judge:
    from .python_hook.judge import PythonHookJudge

    return PythonHookJudge(rest)


def open_judge(spec: str) -> Judge:
    """Open a judge from its spec (secrets only from the environment)."""
    spec = (spec or "").strip()
    scheme, _, rest = spec.partition(":")
    opener = plugins.registry("judges").load(scheme) if scheme else None
    if opener is None:
        raise SpecError(
            f"unknown judge '{visible(spec)}'; use mistral:MODEL, openai:BASE_URL?model=NAME "
            "or py:module:function"
        )
    judge: Judge = opener(rest)
    return judge


@contextmanager
def opened_judge(judge: str | Judge | None) -> Iterator[Judge | None]:
    """``judge`` as given (or None), or opened from its spec and closed when the block ends."""
    if not isinstance(judge, str):
        yield judge
        return
    opened = open_judge(judge)
    try:
        yield opened
    finally:
        getattr(opened, "close", lambda: None)()


@contextmanager
def judgement_cache(path: str | Path | None) -> Iterator[JudgementCache | None]:
    """The judgement cache at ``path`` (None: no cache), closed when the block ends."""
    cache = JudgementCache(Path(path)) if path is not None else None
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()
