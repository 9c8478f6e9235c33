"""Judges (LLM graders of answers), one module each, opened from a spec string.

``mistral:MODEL``, ``openai:BASE_URL?model=NAME`` (any OpenAI-compatible chat endpoint),
``py:module:function``. SDKs are imported only when their judge is opened.
"""

from __future__ import annotations

from ..errors import SpecError
from ..textsafe import visible
from .base import BaseJudge, Judge, JudgeRequest, JudgeStats, RawReply
from .cache import JudgementCache, judgement_key

__all__ = [
    "BaseJudge",
    "Judge",
    "JudgeRequest",
    "JudgeStats",
    "JudgementCache",
    "RawReply",
    "judgement_key",
    "open_judge",
]


def open_judge(spec: str) -> Judge:
    """Open a judge from its spec (secrets only from the environment)."""
    spec = (spec or "").strip()
    scheme, _, rest = spec.partition(":")
    scheme = scheme.lower()
    if scheme == "mistral":
        from .mistral import MistralJudge

        return MistralJudge(rest)
    if scheme == "openai":
        from .openai import from_spec

        return from_spec(rest)
    if scheme == "py":
        from .python_hook import PythonHookJudge

        return PythonHookJudge(rest)
    raise SpecError(
        f"unknown judge '{visible(spec)}'; use mistral:MODEL, openai:BASE_URL?model=NAME "
        "or py:module:function"
    )
