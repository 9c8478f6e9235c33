"""The one redactor: every secret value in use, scrubbed from any text before it is shown.

It knows values handed to :func:`remember` (every key read through
:func:`indexcheck.safety.secrets.env_secret`, a password found in a store spec) and every
environment variable whose name says it is a secret (``*_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*PASSWORD``, ``*_CREDENTIALS``..., also those libraries read, such as ``PGPASSWORD``).
:func:`scrub` replaces each, and its URL-quoted, JSON-escaped and ``repr`` forms, by ``***``;
:func:`scrub_data` does it through a JSON-like structure, :func:`scrubbed_json` for a JSON
document. The CLI runs every error line, traceback, ``--json`` payload and report page
through them, and :func:`install_log_scrubber` every library log record. A value shorter than
:data:`MIN_LENGTH` is not scrubbed (blanking every "a" would make messages unreadable, and a
key that short protects nothing).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

MASK = "***"
#: shorter values are not scrubbed (remembered secrets / secret-named variables)
MIN_LENGTH = 4
MIN_ENV_LENGTH = 8
#: environment variable names that hold secrets
SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?)$|"
    r"^PGPASSWORD$|_SECRET_",
    re.IGNORECASE,
)

_remembered: set[str] = set()
_lock = threading.Lock()
_log_factory_installed = False


def redact_url(url: str) -> str:
    """``url`` without ``user:password@``, query or fragment (they may hold secrets)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url.split("@", 1)[-1].split("?", 1)[0]
    host = parts.hostname or ""
    if port is not None:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def redactor(*secrets: str | None) -> Callable[[str], str]:
    """A function that blanks every non-empty ``secret`` (and every known one) out of a text."""
    kept = [s for s in secrets if s]
    remember(*kept)

    def redact(text: str) -> str:
        for secret in kept:
            text = text.replace(secret, MASK)
        return scrub(text)

    return redact


def remember(*secrets: str | None) -> None:
    """Add ``secrets`` to the values :func:`scrub` removes (their stripped forms too)."""
    with _lock:
        for secret in secrets:
            if not secret:
                continue
            for value in (secret, secret.strip()):
                if len(value) >= MIN_LENGTH:
                    _remembered.add(value)


def forget_all() -> None:
    """Drop every remembered secret (tests; a long-lived process changing keys)."""
    with _lock:
        _remembered.clear()


def _forms(value: str) -> set[str]:
    """``value`` as it may appear in a message: raw, URL-quoted, JSON-escaped, repr'd."""
    forms = {value, quote(value, safe=""), quote(value, safe="/:@")}
    forms.add(json.dumps(value)[1:-1])
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    forms.add(repr(value)[1:-1])
    return {f for f in forms if f}


def known() -> list[str]:
    """Every secret form to scrub, longest first (so a secret containing another goes whole)."""
    with _lock:
        values = set(_remembered)
    for name, value in os.environ.items():
        if SECRET_NAME.search(name) and len(value.strip()) >= MIN_ENV_LENGTH:
            values.add(value)
            values.add(value.strip())
    forms: set[str] = set()
    for value in values:
        forms |= _forms(value)
    return sorted(forms, key=len, reverse=True)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every known secret replaced by ``***``."""
    if not text:
        return text
    for secret in known() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def scrub_data(data: Any) -> Any:
    """A JSON-like structure (dicts, lists, strings, numbers) with every string scrubbed,
    keys included; returned unchanged (the same object) when no secret is known."""
    secrets = known()
    if not secrets:
        return data

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return scrub(value, secrets)
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        if isinstance(value, os.PathLike):
            path = os.fspath(value)
            return scrub(path, secrets) if isinstance(path, str) else value
        tolist = getattr(value, "tolist", None)  # a numpy array or scalar: its Python values
        if callable(tolist) and type(value).__module__ == "numpy":
            return walk(tolist())
        return value

    return walk(data)


def scrubbed_json(data: Any, **dumps: Any) -> str:
    """``json.dumps(data, **dumps)`` holding no known secret. The text is searched first
    (a fast scan, even for a large result); only when a secret shows does the structure get
    walked and dumped again, so no JSON literal is ever broken by a blind replace."""
    text = json.dumps(data, **dumps)
    secrets = known()
    if not any(s in text for s in secrets):
        return text
    return json.dumps(scrub_data(data), **dumps)


def dump_scrubbed(data: Any, fh: Any, **dumps: Any) -> None:
    """Write what :func:`scrubbed_json` returns to the text file ``fh``, a piece at a time:
    the whole text is never held (``indent`` makes :mod:`json` use its pure-Python encoder,
    which for a result of 400,000 rows builds hundreds of MB of pieces before joining them).
    A secret seen in the pieces (each checked with the tail of the one before, so none hides
    across a boundary) rewinds the file and writes the scrubbed structure instead."""
    if not fh.seekable():  # a pipe or a terminal cannot rewind: scrub the whole text first
        fh.write(scrubbed_json(data, **dumps))
        return
    secrets = known()
    longest = max((len(x) for x in secrets), default=0)
    start = fh.tell()
    tail = ""
    for piece in _pieces(data, dumps):
        window = tail + piece
        if secrets and any(x in window for x in secrets):
            break
        fh.write(piece)
        tail = window[-longest:] if longest else ""
    else:
        return
    fh.seek(start)
    fh.truncate()
    for piece in _pieces(scrub_data(data), dumps):
        fh.write(piece)


def _pieces(data: Any, dumps: dict[str, Any]) -> Iterator[str]:
    """``json.JSONEncoder(**dumps).iterencode(data)``; with an ``indent`` (and at most
    ``ensure_ascii`` and ``default`` beside it), the same text from :mod:`.json_pieces`,
    which writes rows of scalars at C speed."""
    from ..output.json_pieces import iter_json

    simple = set(dumps) <= {"indent", "ensure_ascii", "default"}
    if simple and isinstance(dumps.get("indent"), int):
        return iter_json(
            data,
            indent=dumps["indent"],
            ensure_ascii=dumps.get("ensure_ascii", True),
            default=dumps.get("default") or _no_default,
        )
    return json.JSONEncoder(**dumps).iterencode(data)


def _no_default(o: Any) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


class ScrubbedStream:
    """A text stream that scrubs every write (``sys.stdout`` under a rich Console, so the
    terminal summary shows no secret either); everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, flush, encoding...
        return getattr(self._stream, name)


def scrubbed_stream(stream: Any) -> Any:
    """``stream`` wrapped in :class:`ScrubbedStream` (once)."""
    return stream if isinstance(stream, ScrubbedStream) else ScrubbedStream(stream)


def install_log_scrubber() -> None:
    """Scrub every log record any library creates, before any handler formats it."""
    global _log_factory_installed
    with _lock:
        if _log_factory_installed:
            return
        _log_factory_installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        secrets = known()
        if secrets:
            try:
                message = record.getMessage()
            except Exception:  # a record whose args do not fit its format: leave it
                return record
            clean = scrub(message, secrets)
            if clean != message:
                record.msg, record.args = clean, None
        return record

    logging.setLogRecordFactory(factory)


__all__ = [
    "MASK",
    "ScrubbedStream",
    "forget_all",
    "install_log_scrubber",
    "known",
    "redact_url",
    "redactor",
    "remember",
    "scrub",
    "scrub_data",
    "scrubbed_json",
    "scrubbed_stream",
]
