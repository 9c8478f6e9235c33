"""Secrets read from the environment, checked at the edge, and passwords inside store specs.

:func:`env_secret` is the one way a key or token is read from the environment
(``MISTRAL_API_KEY``, ``QDRANT_API_KEY``, ``MILVUS_TOKEN``...). Before it reaches an SDK,
surrounding whitespace (a pasted key's trailing space or newline) is stripped with a warning
naming the variable; a control or invisible character inside it (or a non-ASCII one, for a
value sent in an HTTP header) is bad input (exit 2), naming the variable and the code point:
no stripping can make such a key right, and the HTTP client would otherwise fail with the
whole header, key included, in its message. The value then goes to
:mod:`indexcheck.safety.redact`. Warnings go to the sink set by :func:`warnings_to`, else to
:func:`warnings.warn` (:class:`SecretWarning`), once per variable and value; no message ever
holds the value. :func:`spec_password_warning` warns that a password in a store spec shows in
the process list and shell history (the store still opens).
"""

from __future__ import annotations

import os
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import InputError
from . import redact

_PASSWORD_KEYS = frozenset({"password", "pass", "pwd", "passwd"})


def spec_password(spec: str) -> str | None:
    """The password carried by a store spec (URL userinfo or a ``password=`` query key)."""
    _, _, rest = spec.partition(":")
    if "://" not in rest:
        return None
    try:
        parts = urlsplit(rest)
        password = parts.password
    except ValueError:
        return None
    if password:
        return unquote(password)
    for key, value in parse_qsl(parts.query, keep_blank_values=False):
        if key.lower() in _PASSWORD_KEYS and value:
            return value
    return None


def spec_password_warning(spec: str) -> str | None:
    """A one-line warning when ``spec`` holds a password, naming the safe alternatives (the
    password is remembered by the redactor either way)."""
    password = spec_password(spec)
    if password is None:
        return None
    redact.remember(password)
    scheme = spec.partition(":")[0].lower()
    if scheme in ("pgvector", "postgresql", "postgres"):
        fix = "set PGPASSWORD in the environment or put it in ~/.pgpass (chmod 600)"
    else:
        fix = "pass it through the store's environment variable instead"
    return (
        "the --store spec holds a password, which other users can read in the process list "
        f"and which stays in shell history; {fix}"
    )


def scrub(text: str, secrets: list[str | None]) -> str:
    """``text`` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


class SecretWarning(UserWarning):
    """A secret from the environment needed fixing (stray whitespace was stripped)."""


_sink: list[Callable[[str], None]] = []
_warned: set[tuple[str, str]] = set()
_sink_lock = threading.Lock()
# categories of characters no key holds: controls, format (zero-width, BOM), separators
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


@contextmanager
def warnings_to(sink: Callable[[str], None]) -> Iterator[None]:
    """Send secret warnings to ``sink`` while the block runs (nested calls keep the outer
    sink); warnings already given in this scope are not repeated."""
    with _sink_lock:
        outer = bool(_sink)
        if not outer:
            _sink.append(sink)
            _warned.clear()
    try:
        yield
    finally:
        if not outer:
            with _sink_lock:
                _sink.clear()


def _warn(name: str, raw: str, message: str) -> None:
    with _sink_lock:
        if (name, raw) in _warned:
            return
        _warned.add((name, raw))
        sink = _sink[0] if _sink else None
    if sink is not None:
        sink(message)
    else:
        warnings.warn(message, SecretWarning, stacklevel=3)


def check_secret(name: str, raw: str, *, header: bool = True) -> str:
    """``raw`` (the value of ``name``) stripped of surrounding whitespace, with a warning if
    there was any; InputError (exit 2) for a control, invisible or (``header``) non-ASCII
    character inside it. The value is remembered by the redactor; no message shows it."""
    redact.remember(raw)
    value = raw.strip()
    if value != raw and value:
        _warn(
            name,
            raw,
            f"{name} has leading or trailing whitespace (a pasted key?); it was stripped. "
            f"Set {name} without it to silence this warning",
        )
    for ch in value:
        category = unicodedata.category(ch)
        if category in _INVISIBLE:
            kind = "a control character" if category == "Cc" else "an invisible character"
            raise InputError(
                f"{name} holds {kind} (U+{ord(ch):04X}) inside its value; set {name} "
                "again, copying the value from the provider's console"
            )
        if header and not ch.isascii():
            raise InputError(
                f"{name} holds a non-ASCII character (U+{ord(ch):04X}); keys and tokens are "
                f"ASCII: set {name} again, copying the value from the provider's console"
            )
    return value


def env_secret(name: str, *, header: bool = True) -> str:
    """The secret in environment variable ``name``, checked (see :func:`check_secret`);
    ``""`` when it is unset or blank."""
    raw = os.environ.get(name)
    if raw is None:
        return ""
    return check_secret(name, raw, header=header)
