"""SDK exceptions -> IndexcheckErrors: one declarative table per SDK (httpx's map_exceptions).

A store names its SDK's table in ``BaseStore.errors``; the base looks every exception an SDK
call raises up in it, once, for ``_call`` (with retries), ``_translating`` blocks and the calls
made while the store is being opened (``ErrorMap.mapping``). A table is an ordered list of
:class:`Rule` rows, the first that matches wins::

    CHROMA_ERRORS = ErrorMap(
        Rule("NotFoundError", InputError, "{what}: not found ({text}); check ?collection="),
        Rule(("httpx.*", ConnectionError), BackendUnavailableError, "{what}: unreachable"),
        Rule(Exception, BackendUnavailableError, "{what} failed: {name}: {text}"),
    )

A rule matches an exception by class (``ValueError``), by a lazily resolved
``"module:Attr.path"`` (``"psycopg:errors.UndefinedTable"``, ``"httpx:TimeoutException"``:
looked up in ``sys.modules`` only, so matching never imports an SDK), by a bare class name
matched along the MRO (``"NotFoundError"``, for SDKs whose classes move between releases),
or by a module prefix ``"httpx.*"``; ``when`` adds a test on what was caught (an HTTP
status, a phrase in the message, :func:`doing` for a row of one phase). The table's
``fields`` reads facts off the exception for every row (a gRPC status, a response body). A
message is a ``str.format`` template over the fields of :class:`Caught` (``{name}``,
``{text}``, ``{doing}``, ``{store.host}`` and whatever the store's ``_error_fields`` adds)
or a function of it.

The table also holds the two sentences raised once a :class:`TransientError` outlived every
retry (``rate_limited`` and ``unavailable``), with ``{attempts}`` and ``{err}`` as fields.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import BackendUnavailableError, IndexcheckError, RateLimitError, TransientError

T = TypeVar("T")
Pattern = type[BaseException] | str
Message = str | Callable[["Caught"], str]


class Caught:
    """What a rule sees: ``exc``, ``name`` (its class name), ``text`` (``str(exc)``),
    ``doing``, ``store`` (None while opening) and the extra fields given; attribute access."""

    def __init__(self, exc: BaseException, **fields: Any) -> None:
        self.exc = exc
        self.name = type(exc).__name__
        self.text = str(exc)
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
    """An ordered table of :class:`Rule` rows for one SDK, plus its give-up sentences.

    ``fields`` derives more fields from what was caught, for every row (a scrubbed first
    line, an HTTP status the store recorded)."""

    def __init__(
        self,
        *rules: Rule,
        fields: Callable[[Caught], Mapping[str, Any]] | None = None,
        rate_limited: Message = GAVE_UP_RATE,
        unavailable: Message = GAVE_UP_DOWN,
    ) -> None:
        self.rules = rules
        self.fields = fields
        self.rate_limited = rate_limited
        self.unavailable = unavailable

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

        def translate(exc: BaseException, what: str) -> Exception | None:
            return self.translate(exc, doing=what, **fields)

        def gave_up(what: str, err: TransientError, attempts: int) -> Exception:
            return self.gave_up(err, attempts, doing=what, **fields)

        return translated(doing, translate, gave_up)

    def call(self, doing: str, fn: Callable[[], T], **fields: Any) -> T:
        """Run ``fn`` once inside :meth:`mapping`: ``partial(TABLE.call, where=...)`` is how
        an opener makes its ``call(doing, fn)``."""
        with self.mapping(doing, **fields):
            return fn()


def doing(*what: str) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds only while the store is ``doing`` one of ``what``."""
    return lambda caught: caught.doing in what


@contextmanager
def translated(
    doing: str,
    translate: Callable[[BaseException, str], Exception | None],
    gave_up: Callable[[str, TransientError, int], Exception] | None = None,
) -> Iterator[None]:
    """Raise ``translate(exc, doing)`` in place of what the block raises (IndexcheckErrors
    and what it returns None for pass unchanged); a TransientError becomes
    ``gave_up(doing, err, 0)`` when given: the block is not retried."""
    try:
        yield
    except Exception as exc:
        err = None if isinstance(exc, IndexcheckError) else translate(exc, doing)
        if err is None:
            raise
        if gave_up is not None and isinstance(err, TransientError):
            err = gave_up(doing, err, 0)
        raise err from None


def call_translated(
    doing: str, fn: Callable[[], T], translate: Callable[[BaseException, str], Exception | None]
) -> T:
    """Run ``fn`` once, raising ``translate(exc, doing)`` in place of what it raises (for
    calls made while a store is being opened, before there is a store to ask)."""
    with translated(doing, translate):
        return fn()
