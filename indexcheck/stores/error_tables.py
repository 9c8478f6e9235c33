"""SDK exceptions -> indexcheck errors, as one declarative table per SDK.

The pattern of httpx's ``map_exceptions``: a store does not write ``isinstance`` chains;
it lists rules, and :func:`apply_error_table` picks the first that fits. A rule names the
SDK's exception classes by ``"module:Class"`` (resolved when an exception is translated,
so the SDK is imported only by the store that needs it, and a class the installed SDK
lacks simply never matches), an optional condition over the facts of the exception
(HTTP status, gRPC code, message...), the :class:`~indexcheck.errors.IndexcheckError`
subclass to raise and its message, a ``str.format`` template over the facts and the
store's context (``doing``, where the index lives...).

    QDRANT = ErrorTable(facts=qdrant_facts, rules=(
        Rule("qdrant_client.http.exceptions:UnexpectedResponse", AuthError,
             "Qdrant at {location} refused the credentials (HTTP {status}) ...",
             when=lambda f: f["status"] in (401, 403)),
        ...))
    err = apply_error_table(QDRANT, exc, doing="search", location=..., collection=...)

An exception no rule matches gives None: it is not the SDK's, and the caller re-raises
it untranslated (a bug in indexcheck must not be disguised as a backend failure).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import IndexcheckError
from .base import call_translated

T = TypeVar("T")
Facts = Mapping[str, Any]


def no_facts(exc: BaseException) -> dict[str, Any]:
    """The facts every rule may use: the exception's type name and text."""
    return {}


@dataclass(frozen=True)
class Rule:
    """SDK exception class(es) -> the indexcheck error raised for it, when ``when`` holds."""

    raised: str | tuple[str, ...]
    """``"module:Class"`` names of the exceptions it maps (instances of subclasses too)."""
    error: type[IndexcheckError]
    message: str
    """A ``str.format`` template over the facts and the context."""
    when: Callable[[Facts], bool] | None = None


@dataclass(frozen=True)
class ErrorTable:
    """One SDK's rules, first match wins, and how to read facts off its exceptions."""

    rules: tuple[Rule, ...]
    facts: Callable[[BaseException], dict[str, Any]] = field(default=no_facts)


def resolve(name: str) -> type[BaseException] | None:
    """The exception class ``"module:Class"`` names, or None when it cannot be imported."""
    module, _, attr = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def matches(rule: Rule, exc: BaseException) -> bool:
    names = (rule.raised,) if isinstance(rule.raised, str) else rule.raised
    return any((cls := resolve(n)) is not None and isinstance(exc, cls) for n in names)


def apply_error_table(table: ErrorTable, exc: BaseException, **context: Any) -> Exception | None:
    """The error the first matching rule of ``table`` makes for ``exc``, or None.

    Facts: ``type`` (the exception's class name), ``text`` (``str(exc)``), what
    ``table.facts`` reads off it, then ``context`` (which wins on a clash).
    """
    facts: dict[str, Any] | None = None
    for rule in table.rules:
        if not matches(rule, exc):
            continue
        if facts is None:
            facts = {"type": type(exc).__name__, "text": str(exc), **table.facts(exc), **context}
        if rule.when is None or rule.when(facts):
            return rule.error(rule.message.format(**facts))
    return None


class Caller:
    """``call(doing, fn)``: run an SDK call once, raising what ``table`` maps its exception
    to (for calls made while a store is being opened, before there is a store to ask)."""

    def __init__(self, table: ErrorTable, **context: Any) -> None:
        self.table, self.context = table, context

    def __call__(self, doing: str, fn: Callable[[], T]) -> T:
        return call_translated(doing, fn, self.translate)

    def translate(self, exc: BaseException, doing: str) -> Exception | None:
        return apply_error_table(self.table, exc, doing=doing, **self.context)


def doing(*what: str) -> Callable[[Facts], bool]:
    """A ``when`` for a rule that holds only while the store is ``doing`` one of ``what``."""
    return lambda facts: facts.get("doing") in what
