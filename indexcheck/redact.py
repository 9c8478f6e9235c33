"""Removing secrets from text that may be printed: URLs with passwords, tokens."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit


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
    """A function that blanks every non-empty ``secret`` out of a text."""
    kept = [s for s in secrets if s]

    def redact(text: str) -> str:
        for secret in kept:
            text = text.replace(secret, "***")
        return text

    return redact
