"""The Judge seam: one base class that does retries, accounting and the judgement cache.

A judge grades one answer against the context it was given. Providers subclass
:class:`BaseJudge` (a hosted one :class:`HostedJudge`) and implement ``_complete(request)``
for one request; the base translates what it raises through the SDK's rows of the one error
table (``errors``): a 429, a transient 5xx or a dropped connection becomes a
:class:`~indexcheck.errors.TransientError`, retried with exponential backoff in the one loop
(:meth:`indexcheck.remote.retry.RetryPolicy.run`, shared with stores and embedders). Auth failures
and other refusals are raised as the matching :class:`~indexcheck.errors.IndexcheckError` and not
retried, and so is a TransientError whose cause no retry can fix
(:func:`indexcheck.remote.http.cannot_succeed`). Replies that do not parse are not this
module's business: the caller sends a repair request (:meth:`JudgeRequest.repaired`) and asks again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..remote.http import HTTP_ERRORS
from ..remote.retry import CallStats, RetryHooks, RetryPolicy
from ..remote.translate import ErrorMap, translating
from ..remote.waiting import current as current_waiting

#: a chat reply takes longer than an embedding: a hosted judge's seconds per request and
#: per request with all its retries, unless --timeout / --max-wait (or their env) say others
JUDGE_TIMEOUT_S = 120.0
JUDGE_MAX_WAIT_S = 240.0

#: what a judge hands back: the reply text to parse, or a dict it already parsed
RawReply = str | dict[str, Any]


@dataclass
class JudgeStats(CallStats):
    """Cost accounting: requests sent (retries and repairs included), tokens billed,
    answers judged, judgements served from the cache, seconds inside calls, retries."""

    requests: int = 0
    tokens: int = 0
    judged: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    retries: int = 0
    repairs: int = 0


@dataclass(frozen=True)
class JudgeRequest:
    """One judgement to ask for: the case, and the chat messages built from the prompt.

    ``messages`` grows by one assistant/user pair per repair request.
    """

    question: str
    context: str
    answer: str
    messages: tuple[Mapping[str, str], ...] = field(default_factory=tuple)

    def repaired(self, previous: str, problem: str) -> JudgeRequest:
        """The same request plus the unusable reply and a request to send valid JSON."""
        fix = (
            f"Your previous reply could not be used: {problem}. Reply again with only the "
            'JSON object {"claims": [{"claim", "verdict", "evidence_span", "rationale"}]}, '
            "complete, with no text before or after it."
        )
        more = ({"role": "assistant", "content": previous}, {"role": "user", "content": fix})
        return JudgeRequest(self.question, self.context, self.answer, self.messages + more)


@runtime_checkable
class Judge(Protocol):
    """Grades an answer's claims against its context; replies as JSON (text or dict)."""

    model_id: str
    """Identity of the judge model, part of every cache key (e.g. ``mistral:mistral-small``)."""

    @property
    def stats(self) -> JudgeStats: ...

    def ask(self, request: JudgeRequest) -> RawReply: ...


class BaseJudge:
    """Retries with backoff and request/token accounting, written once.

    Subclasses set ``model_id`` and implement ``_complete(request) -> (reply, tokens)``.
    """

    model_id: str = ""
    #: the SDK's rows of the error table; None: what ``_complete`` raises propagates
    errors: ClassVar[ErrorMap | None] = None

    def __init__(
        self, retry: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.stats = JudgeStats()
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = random.Random(0)

    def _complete(self, request: JudgeRequest) -> tuple[RawReply, int]:
        """One request -> (raw reply, tokens billed)."""
        raise TypeError(f"{type(self).__name__} must implement _complete")

    def close(self) -> None:
        """Release connections (nothing to release by default)."""

    def _error_fields(self) -> dict[str, Any]:
        """Fields the messages of ``errors`` use (who, server, key_env, ...); none by default."""
        return {}

    def _request(self, request: JudgeRequest) -> tuple[RawReply, int]:
        """One ``_complete``, what it raises translated once by ``errors``."""
        with translating(self.errors, "judging", **self._error_fields()):
            return self._complete(request)

    def ask(self, request: JudgeRequest) -> RawReply:
        """The judge's raw reply to ``request``, retrying transient failures within the
        policy's retries and its ``max_wait`` budget (``--max-wait``)."""
        reply, tokens = self.retry.run(
            lambda: self._request(request),
            who=f"judge {self.model_id}",
            rate_fix="try again later or use another judge",
            hooks=RetryHooks(sleep=self._sleep, rng=self._rng, stats=self.stats),
        )
        self.stats.tokens += int(tokens)
        return reply


def hosted_waiting(retry: RetryPolicy | None, timeout_s: float | None) -> tuple[RetryPolicy, float]:
    """A hosted judge's retry policy and seconds per request: those given, else
    ``--max-wait`` / ``--timeout`` (:func:`indexcheck.remote.waiting.current`) with the judge's
    defaults (:data:`JUDGE_MAX_WAIT_S`, :data:`JUDGE_TIMEOUT_S`)."""
    waiting = current_waiting(JUDGE_TIMEOUT_S, JUDGE_MAX_WAIT_S)
    policy = retry if retry is not None else RetryPolicy(max_wait=waiting.max_wait)
    return policy, waiting.timeout if timeout_s is None else timeout_s


class HostedJudge(BaseJudge):
    """A chat model behind an HTTP API (Mistral, OpenAI-compatible): the shared HTTP rows of
    the error table, named for a judge. Subclasses set ``key_env`` and ``timeout_s`` and
    say where the server is (``_where``, without credentials)."""

    errors = HTTP_ERRORS
    key_env: ClassVar[str] = ""
    timeout_s: float | None = None

    def _where(self) -> str:
        raise TypeError(f"{type(self).__name__} must implement _where")

    def _error_fields(self) -> dict[str, Any]:
        return {
            "who": f"judge {self.model_id}",
            "server": self._where(),
            "key_env": self.key_env,
            "malformed_fix": f"check {self.key_env} and the server URL",
            "reject_fix": "check the model name in --judge",
            "timeout_s": self.timeout_s,
        }
