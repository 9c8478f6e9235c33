"""The user's own RAG application behind ``--system py:module:object``, with every call
counted per stage. The contract (docs/guides/your-pipeline.md; keyword arguments carry the
interventions, ``None`` means the app's own setting)::

    class MyApp:
        model_id = "gpt-x@prompt-v3"          # the generator's identity (may be a property)
        depth = 8                             # optional: the app's own retrieval depth
        def retrieve(self, question, depth, filter=None) -> [candidate, ...]
        def assemble(self, question, candidates, *, top_k=None, threshold=None) -> [candidate]
        def generate(self, question, context) -> answer

Candidates have ``id``, ``text`` and ``score`` (mapping, object or LangChain ``Document``);
an answer is a string or has ``answer`` and optional ``citations``/``refused``/``tokens``.
``assemble`` is optional; a bare ``answer(question)`` allows only repeated runs and a control.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....errors import BackendError, IndexcheckError, InputError
from ....inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from ....integrations.ranked import keep_ranked
from ....plugins.user_hooks import HookExitError, load_hook

STAGES = ("retrieve", "assemble", "generate", "answer")


class CallBudgetExhausted(BackendError):
    """``--budget-calls`` reached: stopped before the next call (exit 3, resumable)."""


@dataclass(frozen=True)
class Candidate:
    """One retrieved chunk: its id, text and score on the retriever's own scale."""

    id: str
    text: str
    score: float | None = None


@dataclass
class Generation:
    answer: str
    refused: bool
    citations: list[str] = field(default_factory=list)
    tokens: int | None = None
    #: answer() only: the contexts the app reported, as (id, text, score) mappings
    contexts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StageCost:
    calls: int = 0
    seconds: float = 0.0
    tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "seconds": round(self.seconds, 4), "tokens": self.tokens}


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def as_candidate(raw: Any) -> Candidate:
    """A candidate from a mapping, an object, a ``(doc, score)`` pair or a LangChain
    ``Document``; a candidate without an id is bad input (the hook's fault)."""
    score = None
    if isinstance(raw, tuple) and len(raw) == 2:
        raw, score = raw
    if isinstance(raw, Candidate):
        return raw if score is None else Candidate(raw.id, raw.text, float(score))
    meta = _field(raw, "metadata") or {}
    cid = _field(raw, "id") or meta.get("id")
    text = _field(raw, "text")
    if text is None:
        text = _field(raw, "page_content", "")
    if score is None:
        score = _field(raw, "score", meta.get("score"))
    if cid is None:
        raise InputError(
            "a candidate from the --system hook has no id; give each candidate an 'id' "
            "(for LangChain Documents: Document.id or metadata['id'])"
        )
    return Candidate(str(cid), str(text), None if score is None else float(score))


def as_generation(raw: Any, refusal: re.Pattern[str]) -> Generation:
    """An answer from a string, a mapping, an object or a LangChain message."""
    if raw is None:
        raise InputError(
            "the --system hook returned None for an answer; return the answer text or "
            "{'answer': ..., 'refused': ...}"
        )
    if isinstance(raw, str):
        answer, refused, citations, tokens = raw, None, [], None
    else:
        answer = _field(raw, "answer")
        if answer is None:
            answer = _field(raw, "content", "")
        refused = _field(raw, "refused")
        citations = list(_field(raw, "citations") or [])
        tokens = _field(raw, "tokens")
        usage = _field(raw, "usage") or _field(raw, "usage_metadata")
        if tokens is None and usage:
            tokens = _field(usage, "total_tokens")
    answer = str(answer)
    if refused is None:
        refused = bool(refusal.search(answer))
    return Generation(answer, bool(refused), [str(c) for c in citations], tokens)


class System:
    """The application, its calls counted per stage and bounded by ``budget_calls``."""

    def __init__(
        self,
        obj: Any,
        name: str,
        *,
        budget_calls: int | None = None,
        refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN,
    ) -> None:
        self.obj = obj
        self.name = name
        self.staged = callable(getattr(obj, "retrieve", None)) and callable(
            getattr(obj, "generate", None)
        )
        if not self.staged and not callable(getattr(obj, "answer", None)) and not callable(obj):
            raise InputError(
                f"--system {name} has neither retrieve()+generate() nor answer(); "
                "see 'Diagnosing your own pipeline' in the README for the contract"
            )
        self.model_id = str(getattr(obj, "model_id", name))
        self.depth = getattr(obj, "depth", None)
        self.budget_calls = budget_calls
        self.refusal = re.compile(refusal_pattern)
        self.costs = {s: StageCost() for s in STAGES}

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.costs.values())

    def _call(self, stage: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.budget_calls is not None and self.calls >= self.budget_calls:
            made = ", ".join(f"{s} {c.calls}" for s, c in self.costs.items() if c.calls)
            raise CallBudgetExhausted(
                f"--budget-calls {self.budget_calls} reached before the next {stage} call "
                f"({made}); everything done so far is in --cache: rerun with the same --cache "
                "and a larger --budget-calls to resume"
            )
        cost = self.costs[stage]
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except SystemExit as exc:
            raise HookExitError(
                f"the {self.name} system's {stage}() called sys.exit({exc.code!r}); the run "
                "could not finish. Everything done so far is in --cache: rerun to resume"
            ) from None
        except IndexcheckError:
            raise
        except Exception as exc:  # the user's code: named, never the catch-all
            raise BackendError(
                f"the {self.name} system's {stage}() raised {type(exc).__name__}: {exc}; the "
                "run could not finish. Everything done so far is in --cache: fix it and rerun "
                "to resume (INDEXCHECK_DEBUG=1 shows its traceback)"
            ) from exc
        finally:
            cost.calls += 1
            cost.seconds += time.perf_counter() - started

    def _tokens(self, stage: str, tokens: int | None) -> None:
        if tokens is not None:
            cost = self.costs[stage]
            cost.tokens = (cost.tokens or 0) + int(tokens)

    def retrieve(self, question: str, depth: int, filter: Any = None) -> list[Candidate]:
        kwargs = {} if filter is None else {"filter": filter}
        raw = self._call("retrieve", self.obj.retrieve, question, depth, **kwargs)
        return [as_candidate(r) for r in self._listed(raw, "retrieve")]

    def _listed(self, raw: Any, stage: str) -> list[Any]:
        if isinstance(raw, str | bytes | dict) or not hasattr(raw, "__iter__"):
            raise InputError(
                f"the {self.name} system's {stage}() returned {type(raw).__name__}; it must "
                "return a list of candidates (id, text, score)"
            )
        return list(raw)

    def assemble(
        self,
        question: str,
        candidates: Sequence[Candidate],
        *,
        top_k: int | None = None,
        threshold: float | None = None,
    ) -> list[Candidate]:
        fn = getattr(self.obj, "assemble", None)
        if fn is None:
            return keep_ranked(candidates, top_k=top_k, threshold=threshold)
        kwargs = {k: v for k, v in (("top_k", top_k), ("threshold", threshold)) if v is not None}
        raw = self._call("assemble", fn, question, list(candidates), **kwargs)
        return [as_candidate(r) for r in self._listed(raw, "assemble")]

    def generate(self, question: str, context: Sequence[Candidate]) -> Generation:
        raw = self._call("generate", self.obj.generate, question, list(context))
        g = as_generation(raw, self.refusal)
        self._tokens("generate", g.tokens)
        return g

    def answer(self, question: str) -> tuple[Generation, list[Candidate]]:
        fn = getattr(self.obj, "answer", None) or self.obj
        raw = self._call("answer", fn, question)
        g = as_generation(raw, self.refusal)
        self._tokens("answer", g.tokens)
        raw_contexts = [] if isinstance(raw, str) else (_field(raw, "contexts") or [])
        contexts = [
            as_candidate(c) if not isinstance(c, str) else Candidate(f"context-{i}", c)
            for i, c in enumerate(raw_contexts)
        ]
        g.contexts = [{"id": c.id, "text": c.text, "score": c.score} for c in contexts]
        return g, contexts

    def cost(self) -> dict[str, dict[str, Any]]:
        return {s: c.as_dict() for s, c in self.costs.items() if c.calls}


def load_system(
    target: str,
    *,
    budget_calls: int | None = None,
    refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN,
) -> System:
    """The ``py:module:object`` application (the ``py:`` prefix optional), loaded once."""
    spec = target[3:] if target.startswith("py:") else target
    # "__class__" is callable on every object: load_hook imports and finds the object,
    # and System checks the contract (retrieve+generate, or answer) with its own message
    _, obj, _ = load_hook(spec, "system", "__class__")
    return System(obj, f"py:{spec}", budget_calls=budget_calls, refusal_pattern=refusal_pattern)


__all__ = ["Candidate", "CallBudgetExhausted", "Generation", "System", "load_system"]
