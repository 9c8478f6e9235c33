"""Option schemas for store specs: each store declares its ``?key=value`` options.

``params = {"metric": Choice("cosine", "ip", "l2"), "efSearch": Int(min=1)}`` on a store
class makes the base refuse unknown keys (exit 2, the known keys and the closest match)
and values of the wrong type or range, before any file is read or request sent.
"""

from __future__ import annotations

import difflib
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

from ..errors import SpecError


class Param:
    """One option; ``parse`` turns the raw text into a value or raises SpecError."""

    def parse(self, where: str, key: str, raw: str) -> Any:
        return raw


@dataclass(frozen=True)
class Str(Param):
    """Any text (names of columns, tables, namespaces...)."""


@dataclass(frozen=True, init=False)
class Choice(Param):
    """One of a fixed set of words; ``case`` False accepts any letter case."""

    values: tuple[str, ...]
    case: bool

    def __init__(self, *values: str, case: bool = False) -> None:
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "case", case)

    def parse(self, where: str, key: str, raw: str) -> Any:
        for value in self.values:
            if raw == value or (not self.case and raw.strip().lower() == value.lower()):
                return value
        raise SpecError(f"{where}: ?{key}= must be one of {', '.join(self.values)}, got '{raw}'")


class _Number(Param, ABC):
    """A number in ``[min, max]``; a subclass says how text becomes its kind of number."""

    kind = "a number"
    min: float | None
    max: float | None

    @abstractmethod
    def convert(self, text: str) -> float | None:
        """The number ``text`` spells, or None when it spells none of this kind."""

    def parse(self, where: str, key: str, raw: str) -> Any:
        value = self.convert(raw.strip())
        if value is None or not _in_range(value, self.min, self.max):
            raise SpecError(f"{where}: ?{key}= must be {_range(self.kind, self)}, got '{raw}'")
        return value


@dataclass(frozen=True)
class Int(_Number):
    """A whole number in ``[min, max]``."""

    kind = "an integer"
    min: int | None = None
    max: int | None = None

    def convert(self, text: str) -> int | None:
        try:
            return int(text)
        except ValueError:
            return None


@dataclass(frozen=True)
class Float(_Number):
    """A finite number in ``[min, max]``."""

    min: float | None = None
    max: float | None = None

    def convert(self, text: str) -> float | None:
        try:
            value = float(text)
        except ValueError:
            return None
        return value if math.isfinite(value) else None


def _in_range(value: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _range(kind: str, p: _Number) -> str:
    if p.min is not None and p.max is not None:
        return f"{kind} in [{p.min:g}, {p.max:g}]"
    if p.min is not None:
        return f"{kind} >= {p.min:g}"
    if p.max is not None:
        return f"{kind} <= {p.max:g}"
    return kind


def check_params(
    scheme: str,
    given: Mapping[str, str],
    schema: Mapping[str, Param],
    hints: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Typed values of ``given`` under ``schema``; SpecError for an unknown key or bad value.

    An unknown key's message names the closest known key (any letter case) and lists all.
    """
    out: dict[str, Any] = {}
    for key, raw in given.items():
        param = schema.get(key)
        if param is None:
            raise SpecError(unknown_message(scheme, key, list(schema), hints))
        out[key] = param.parse(scheme, key, raw)
    return out


def unknown_message(
    scheme: str, key: str, known: list[str], hints: Mapping[str, str] | None = None
) -> str:
    """``unknown option 'efsearch' for faiss; did you mean efSearch? known: ...``."""
    lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(key.lower(), list(lower), n=1, cutoff=0.6)
    if not close:  # a shortened name: 'text' for text_field
        close = [k for k in lower if key and (k.startswith(key.lower()) or key.lower() in k)][:1]
    hint = f" ({hints[key]})" if hints and key in hints else ""
    listed = ", ".join(known) if known else "none"
    guess = f"; did you mean {lower[close[0]]}?" if close else ";"
    return f"unknown option '{key}' for {scheme}{hint}{guess} known: {listed}"


@dataclass(frozen=True)
class StoreSpec:
    """A parsed ``scheme:location?key=value`` spec."""

    scheme: str
    location: str
    params: dict[str, str]

    @classmethod
    def parse(cls, spec: str) -> StoreSpec:
        if ":" not in spec:
            raise SpecError(
                f"store spec '{spec}' has no scheme; write it as SCHEME:LOCATION, "
                "e.g. faiss:./index or parquet:vectors.parquet"
            )
        scheme, rest = spec.split(":", 1)
        scheme = scheme.strip().lower()
        location, params = rest, {}
        # URLs keep their own '?' only for schemes whose location is a URL with a query
        # string of its own; ours are all indexcheck options, so split on the last '?'.
        if "?" in rest:
            location, query = rest.rsplit("?", 1)
            pairs = parse_qsl(query, keep_blank_values=True)
            params = dict(pairs)
            if len(params) != len(pairs):  # the last value would win without a word
                twice = sorted({k for k, _ in pairs if sum(1 for j, _ in pairs if j == k) > 1})
                raise SpecError(
                    f"store spec '{scheme}:...' gives {', '.join(twice)} more than once; "
                    "keep one value"
                )
        return cls(scheme=scheme, location=location, params=params)

    def require(self, key: str, hint: str) -> str:
        value = self.params.get(key)
        if not value:
            raise SpecError(f"store spec '{self.scheme}:...' needs ?{key}=...; {hint}")
        return value


def with_params(spec: str, **params: Any) -> str:
    """``spec`` with ``params`` set (added, or replacing the same keys); None removes a key.

    ``with_params("faiss:DIR?nprobe=4", efSearch=64)`` -> ``faiss:DIR?nprobe=4&efSearch=64``.
    The location is kept as written, so secrets in it are the caller's to redact.
    """
    parsed = StoreSpec.parse(spec)
    merged = dict(parsed.params)
    for key, value in params.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    head = f"{parsed.scheme}:{parsed.location}"
    return f"{head}?{urlencode(merged)}" if merged else head


def http_url(raw: str, not_url: str, credentials: str) -> SplitResult:
    """``raw`` split, once it is an http(s) URL with a host and neither credentials nor a
    query (secrets come from the environment); SpecError ``not_url`` or ``credentials``."""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecError(not_url)
    if parts.username or parts.password or parts.query:
        raise SpecError(credentials)
    return parts


def endpoint_url(raw: str, where: str, example: str, key_env: str) -> str:
    """An http(s) endpoint option (``where``: e.g. ``"pinecone spec: ?host="``), without a
    trailing slash; SpecError for anything else, or for credentials or a query in it (the
    key belongs in ``key_env``)."""
    http_url(
        raw,
        f"{where} must be a URL such as {example} (got '{raw}')",
        f"{where} holds credentials or a query; remove them, the key goes in {key_env}",
    )
    return raw.rstrip("/")
