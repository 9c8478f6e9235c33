"""The question generator's calls: prompts, requests, reply parsing and repair, budget.

Every call goes through the judge seam (:class:`~indexcheck.judges.base.Judge`: ``mistral:``,
``openai:``, ``py:``), so retries of transient failures, accounting and the judgement cache
are the judge's. A request carries the task in ``question``, the passages (or topics) in
``context`` and its JSON parameters in ``answer``: the cache key is (model, prompt version,
task, passages, parameters), and a ``py:module:function`` generator is called as
``function(task, context, params_json)``. A reply that does not parse gets a repair request
(up to ``retries``), then is dropped and counted, never guessed at.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from typing import Any

from ...errors import BackendError
from ...judges.base import Judge, JudgeRequest, RawReply
from ...judges.cache import JudgementCache, judgement_key
from ...judges.replies import ReplyError, reply_json, reply_text
from ..judge import Prompt

#: how close a question's wording stays to its passage, from nearest to farthest
LEVELS = ("near-verbatim", "light", "reworded")


class Task(StrEnum):
    """What one call asks for."""

    SINGLE_HOP = "single-hop"
    MULTI_HOP = "multi-hop"
    OUT_OF_SCOPE = "out-of-scope"
    ANSWERABLE = "answerable"


PROMPT_FILES = {
    Task.SINGLE_HOP: "questions_v1.md",
    Task.MULTI_HOP: "questions_v1.md",
    Task.OUT_OF_SCOPE: "out_of_scope_v1.md",
    Task.ANSWERABLE: "answerable_v1.md",
}

SCHEMAS = {
    Task.SINGLE_HOP: '{"questions": [{"question", "topic"}]}',
    Task.MULTI_HOP: '{"questions": [{"question", "topic"}]}',
    Task.OUT_OF_SCOPE: '{"questions": [{"question", "topic", "adjacent_to"}]}',
    Task.ANSWERABLE: '{"verdicts": [{"index", "answered", "chunk", "rationale"}]}',
}


def shipped_prompt(name: str) -> Prompt:
    """A prompt shipped in ``indexcheck/prompts``; ``version`` is the first 12 hex of its
    sha256, as the judge's."""
    text = resources.files("indexcheck.prompts").joinpath(name).read_text("utf-8")
    version = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return Prompt(text, version, f"indexcheck/prompts/{name}")


def prompts() -> dict[Task, Prompt]:
    return {task: shipped_prompt(name) for task, name in PROMPT_FILES.items()}


@dataclass(frozen=True)
class Call:
    """One planned request: its task, the text it shows and its parameters."""

    task: Task
    context: str
    params: Mapping[str, Any]

    @property
    def params_json(self) -> str:
        return json.dumps(dict(self.params), sort_keys=True, ensure_ascii=False)

    def user_message(self) -> str:
        return f"TASK: {self.task.value}\nPARAMS: {self.params_json}\n\n{self.context}"


def build_request(prompt: Prompt, call: Call) -> JudgeRequest:
    """The chat messages: the prompt as system message, task, parameters and text as user."""
    messages = (
        {"role": "system", "content": prompt.text},
        {"role": "user", "content": call.user_message()},
    )
    return JudgeRequest(call.task.value, call.context, call.params_json, messages)


def repaired(request: JudgeRequest, previous: str, problem: str, task: Task) -> JudgeRequest:
    """The same request plus the unusable reply and a request for this task's JSON."""
    fix = (
        f"Your previous reply could not be used: {problem}. Reply again with only the JSON "
        f"object {SCHEMAS[task]}, complete, with no text before or after it."
    )
    more = ({"role": "assistant", "content": previous}, {"role": "user", "content": fix})
    return JudgeRequest(request.question, request.context, request.answer, request.messages + more)


def _json_object(raw: RawReply) -> dict[str, Any]:
    data = reply_json(raw)
    if not isinstance(data, dict):
        raise ReplyError("the reply is not a JSON object")
    return data


def parse_questions(raw: RawReply) -> dict[str, Any]:
    """``{"questions": [{question, topic, adjacent_to}]}`` with at least one question."""
    data = _json_object(raw)
    items = data.get("questions")
    if not isinstance(items, list) or not items:
        raise ReplyError('the reply has no non-empty "questions" list')
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReplyError(f"questions[{i}] is not an object")
        text = item.get("question")
        if not isinstance(text, str) or not text.strip():
            raise ReplyError(f'questions[{i}] has no "question" text')
        row = {"question": " ".join(text.split())}
        for key in ("topic", "adjacent_to"):
            if isinstance(item.get(key), str) and item[key].strip():
                row[key] = item[key].strip()
        out.append(row)
    return {"questions": out}


def verdict_parser(count: int) -> Callable[[RawReply], dict[str, Any]]:
    """A parser of ``{"verdicts": [{index, answered, chunk, rationale}]}`` that needs one
    verdict for each of ``count`` questions (indices 1..count)."""

    def parse(raw: RawReply) -> dict[str, Any]:
        data = _json_object(raw)
        items = data.get("verdicts")
        if not isinstance(items, list):
            raise ReplyError('the reply has no "verdicts" list')
        found: dict[int, dict[str, Any]] = {}
        for i, item in enumerate(items):
            index = item.get("index") if isinstance(item, dict) else None
            answered = item.get("answered") if isinstance(item, dict) else None
            if not isinstance(index, int) or not 1 <= index <= count:
                raise ReplyError(f"verdicts[{i}] has no question index between 1 and {count}")
            if not isinstance(answered, bool):
                raise ReplyError(f'verdicts[{i}] "answered" must be true or false')
            chunk = item.get("chunk")
            rationale = item.get("rationale")
            found[index] = {
                "index": index,
                "answered": answered,
                "chunk": chunk if isinstance(chunk, str) else None,
                "rationale": rationale if isinstance(rationale, str) else "",
            }
        missing = [i for i in range(1, count + 1) if i not in found]
        if missing:
            raise ReplyError(f"no verdict for question(s) {', '.join(map(str, missing))}")
        return {"verdicts": [found[i] for i in range(1, count + 1)]}

    return parse


class BudgetReachedError(BackendError):
    """Exit 3: ``--budget-calls`` stopped the run; what was done is written first."""


class BudgetSpent(Exception):
    """The ``budget_calls`` cap would be passed by the next request (not an error: the run
    stops and keeps what it has)."""


@dataclass
class CallStats:
    """Requests this run made (``calls`` first attempts, ``repairs``), replies served from
    the cache, and the replies dropped after every repair (with their problems)."""

    calls: int = 0
    repairs: int = 0
    cache_hits: int = 0
    interrupted: int = 0
    """calls made whose repair the budget forbade (their replies are lost)"""
    by_task: dict[str, int] = field(default_factory=dict)
    unusable: list[dict[str, Any]] = field(default_factory=list)

    @property
    def made(self) -> int:
        return self.calls + self.repairs


class Caller:
    """Asks judges for JSON: cache first, then a call, repaired up to ``retries`` times,
    each request counted against ``budget_calls`` before it is sent."""

    def __init__(
        self,
        retries: int = 2,
        cache: JudgementCache | None = None,
        budget_calls: int | None = None,
    ) -> None:
        self.retries = retries
        self.cache = cache
        self.budget = budget_calls
        self.stats = CallStats()

    def _spend(self) -> None:
        if self.budget is not None and self.stats.made >= self.budget:
            raise BudgetSpent(f"--budget-calls {self.budget} reached")

    def ask(
        self,
        judge: Judge,
        prompt: Prompt,
        call: Call,
        parse: Callable[[RawReply], dict[str, Any]],
    ) -> dict[str, Any] | None:
        """The parsed reply to ``call``, or None when it never parsed (counted in
        ``stats.unusable``). Raises BudgetSpent before a request the cap forbids."""
        key = judgement_key(
            judge.model_id, prompt.version, call.task.value, call.context, call.params_json
        )
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            try:
                parsed = parse(cached)
            except ReplyError:
                pass
            else:
                self.stats.cache_hits += 1
                judge.stats.cache_hits += 1
                return parsed
        request = build_request(prompt, call)
        raw: RawReply = ""
        problem = ""
        for attempt in range(self.retries + 1):
            try:
                self._spend()
            except BudgetSpent:
                self.stats.interrupted += 1 if attempt else 0
                raise
            if attempt:
                self.stats.repairs += 1
                judge.stats.repairs += 1
                request = repaired(request, reply_text(raw), problem, call.task)
            else:
                self.stats.calls += 1
                self.stats.by_task[call.task.value] = self.stats.by_task.get(call.task.value, 0) + 1
            raw = judge.ask(request)
            try:
                parsed = parse(raw)
            except ReplyError as exc:
                problem = str(exc)
                continue
            if self.cache is not None:
                self.cache.put(key, judge.model_id, prompt.version, parsed)
            return parsed
        self.stats.unusable.append(
            {
                "task": call.task.value,
                "params": dict(call.params),
                "problem": problem,
                "raw_reply": reply_text(raw)[:2000],
            }
        )
        return None
