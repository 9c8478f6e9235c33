"""SDK and HTTP exceptions -> IndexcheckErrors: one table for every store, embedder and judge.

httpx's ``map_httpcore_exceptions`` over one mapping, as rows per service. :data:`TABLE`
holds each service's :class:`ErrorMap` under its name (``"chroma"``, ``"pgvector"``,
``"upstash"``, ``"ray"``, ``"http"`` for the hosted services reached through an SDK: Mistral,
OpenAI-compatible; ``"final"`` for what no retry can fix), registered by the module that
knows the SDK (``service=``). A service declares rows only; :func:`translate` is the one
translator and :func:`translating` the one context manager every SDK boundary runs in (the
store, embedder and judge bases, openers through :meth:`ErrorMap.call`). Most specific wins:
rows are read in order, specific rows before the catch-alls, the first match decides. HTTP
statuses, ``Retry-After`` and malformed requests are read in one place, :mod:`.http`, with
the rows built on them.

A :class:`Rule` matches by class, by a lazily resolved ``"module:Attr.path"`` (looked up in
``sys.modules`` only: matching never imports an SDK), by a bare class name along the MRO, or
by a module prefix ``"httpx.*"``; ``when`` tests what was caught (:func:`doing` for one
phase). Its message is a ``str.format`` template over :class:`Caught`'s fields or a function
of it. ``gave_up`` sentences end a :class:`TransientError` that outlived every retry.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import (
    BackendUnavailableError,
    IndexcheckError,
    RateLimitError,
    TransientError,
)

T = TypeVar("T")
Pattern = type[BaseException] | str
Message = str | Callable[["Caught"], str]


class Caught:
    """What a rule sees: ``exc``, ``name`` (its class name), ``text`` (``str(exc)``),
    ``line`` (the text's first line, at most 200 characters, else the class name),
    ``doing``, ``store`` (None while opening) and the extra fields given; attribute access."""

    def __init__(self, exc: BaseException, **fields: Any) -> None:
        self.exc = exc
        self.name = type(exc).__name__
        self.text = str(exc)
        lines = self.text.strip().splitlines()
        self.line = lines[0][:200] if lines else self.name
        self.doing = "reading"
        self.store: Any = None
        self.__dict__.update(fields)

    def __getattr__(self, name: str) -> Any:  # the extra fields, typed loosely for rules
        raise AttributeError(f"no field '{name}' where an error rule looked for it")

    def format(self, message: Message) -> str:
        return message(self) if callable(message) else message.format_map(self.__dict__)


def _resolve(path: str) -> Any:
    module, _, attrs = path.partition(":")
    obj: Any = sys.modules.get(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr, None) if obj is not None else None
    return obj


def matches(pattern: Pattern, exc: BaseException) -> bool:
    """True when ``exc`` is what ``pattern`` names (see the module docstring)."""
    if isinstance(pattern, type):
        return isinstance(exc, pattern)
    if ":" in pattern:
        cls = _resolve(pattern)
        return isinstance(cls, type) and isinstance(exc, cls)
    mro = type(exc).__mro__
    if pattern.endswith(".*"):
        prefix = pattern[:-2]
        return any(c.__module__ == prefix or c.__module__.startswith(prefix + ".") for c in mro)
    return any(c.__name__ == pattern for c in mro)


@dataclass(frozen=True)
class Rule:
    """One row: what it matches, the error raised in its place, and its message.

    ``error`` may also be another :class:`ErrorMap`, which then decides (a phase with its
    own table, e.g. connecting). ``options`` are further keyword arguments of the error,
    each a function of :class:`Caught` (``retry_after=lambda c: c.retry_after``).
    """

    match: Pattern | tuple[Pattern, ...]
    error: type[Exception] | ErrorMap
    message: Message = ""
    when: Callable[[Caught], bool] | None = None
    options: Mapping[str, Callable[[Caught], Any]] = field(default_factory=dict)

    def applies(self, caught: Caught) -> bool:
        patterns = self.match if isinstance(self.match, tuple) else (self.match,)
        if not any(matches(p, caught.exc) for p in patterns):
            return False
        return self.when is None or bool(self.when(caught))

    def build(self, caught: Caught) -> Exception | None:
        if isinstance(self.error, ErrorMap):
            return self.error.lookup(caught)
        extra = {key: fn(caught) for key, fn in self.options.items()}
        return self.error(caught.format(self.message), **extra)


GAVE_UP_RATE = "{label} still rate-limited {doing} after {attempts} retries; wait and rerun"
GAVE_UP_DOWN = (
    "{label} {doing} failed after {attempts} retries ({err}); check the network "
    "and the server, or rerun later"
)


class ErrorMap:
    """One service's rows of the table, in order, plus its give-up sentences.

    ``fields`` derives more fields from what was caught, for every row (a scrubbed first
    line, an HTTP status the store recorded). ``service`` registers the rows in
    :data:`TABLE` under that name. ``chained`` names the errors raised chained to the SDK's
    (a TransientError: the retry loop reads its HTTP status); others are raised from None,
    since an SDK's error may hold the request, key included."""

    def __init__(
        self,
        *rules: Rule,
        fields: Callable[[Caught], Mapping[str, Any]] | None = None,
        rate_limited: Message = GAVE_UP_RATE,
        unavailable: Message = GAVE_UP_DOWN,
        service: str | None = None,
        chained: tuple[type[Exception], ...] = (TransientError,),
    ) -> None:
        self.rules = rules
        self.fields = fields
        self.rate_limited = rate_limited
        self.unavailable = unavailable
        self.chained = chained
        if service is not None:
            TABLE[service] = self

    def translate(self, exc: BaseException, **fields: Any) -> Exception | None:
        """The error for ``exc`` (a TransientError when a retry may help), or None when no
        row matches (the exception is not the SDK's: it propagates unchanged)."""
        return self.lookup(Caught(exc, **fields))

    def lookup(self, caught: Caught) -> Exception | None:
        if self.fields is not None:
            caught.__dict__.update(self.fields(caught))
        for rule in self.rules:
            if rule.applies(caught):
                return rule.build(caught)
        return None

    def gave_up(
        self, err: TransientError, attempts: int, **fields: Any
    ) -> RateLimitError | BackendUnavailableError:
        """The error once ``err`` outlived ``attempts`` retries."""
        caught = Caught(err, attempts=attempts, err=err, **fields)
        if err.rate_limited:
            return RateLimitError(caught.format(self.rate_limited))
        return BackendUnavailableError(caught.format(self.unavailable))

    def mapping(self, doing: str = "opening", **fields: Any) -> AbstractContextManager[None]:
        """Translate what the block raises, with no retries (calls made while a store is
        opened, before there is a store to ask); IndexcheckErrors pass unchanged."""

        def gave_up(what: str, err: TransientError, attempts: int) -> Exception:
            return self.gave_up(err, attempts, doing=what, **fields)

        return translating(self, doing, gave_up, **fields)

    def call(self, doing: str, fn: Callable[[], T], **fields: Any) -> T:
        """Run ``fn`` once inside :meth:`mapping`: ``partial(QDRANT_ERRORS.call, ...)`` is
        how an opener makes its ``call(doing, fn)``."""
        with self.mapping(doing, **fields):
            return fn()


#: every service's rows, by name: the one table
TABLE: dict[str, ErrorMap] = {}


def doing(*what: str) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds only while the store is ``doing`` one of ``what``."""
    return lambda caught: caught.doing in what


def translate(
    exc: BaseException, service: str | ErrorMap | None, **fields: Any
) -> Exception | None:
    """The error for ``exc`` by the rows of ``service`` (a name in :data:`TABLE`, or the rows
    themselves), a TransientError when a retry may help, or None when no row matches (the
    exception is not the SDK's: it propagates unchanged)."""
    rows = _rows(service)
    return None if rows is None else rows.translate(exc, **fields)


def _rows(service: str | ErrorMap | None) -> ErrorMap | None:
    return TABLE[service] if isinstance(service, str) else service


@contextmanager
def translating(
    service: str | ErrorMap | None,
    doing: str = "reading",
    gave_up: Callable[[str, TransientError, int], Exception] | None = None,
    **fields: Any,
) -> Iterator[None]:
    """Raise :func:`translate` of what the block raises in its place: the one SDK boundary.

    IndexcheckErrors, TransientErrors and what no row matches pass unchanged. A
    TransientError a row makes becomes ``gave_up(doing, err, 0)`` when given (the block is
    not retried); the result is chained to the SDK's error only when the rows say so."""
    try:
        yield
    except (IndexcheckError, TransientError):
        raise
    except Exception as exc:
        rows = _rows(service)
        err = None if rows is None else rows.translate(exc, doing=doing, **fields)
        if rows is None or err is None:
            raise
        if gave_up is not None and isinstance(err, TransientError):
            err = gave_up(doing, err, 0)
        raise err from (exc if isinstance(err, rows.chained) else None)
