"""How long indexcheck waits for hosted services: one request (``--timeout``) and all the
retries of one request together (``--max-wait``).

Resolution order: the command-line option, then ``INDEXCHECK_TIMEOUT`` /
``INDEXCHECK_MAX_WAIT``, then the defaults (60 s per request, 120 s of retrying; a judge or
question generator, whose chat replies take longer, passes its own: 120 s and 240 s). Every
hosted service (the Mistral embedder, the Upstash store, the Mistral and OpenAI-compatible
judges) reads :func:`current` when opened.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from ..errors import InputError
from .retry import RetryPolicy

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_WAIT_S = 120.0
TIMEOUT_ENV = "INDEXCHECK_TIMEOUT"
MAX_WAIT_ENV = "INDEXCHECK_MAX_WAIT"


@dataclass(frozen=True)
class Waiting:
    """Seconds for one request, and seconds for one request's retries in total."""

    timeout: float = DEFAULT_TIMEOUT_S
    max_wait: float = DEFAULT_MAX_WAIT_S


@dataclass(frozen=True)
class Pacing:
    """How one hosted client paces its requests (a value, as httpx's ``Timeout``): its retry
    policy and seconds per request (None: the client's default, usually from :func:`current`)
    and how it sleeps between retries (tests pass a recorder)."""

    retry: RetryPolicy | None = None
    timeout: float | None = None
    sleep: Callable[[float], None] = time.sleep


class PacingKeywords(TypedDict, total=False):
    """The fields of :class:`Pacing`, for a client that still takes them one by one."""

    retry: RetryPolicy | None
    timeout: float | None
    sleep: Callable[[float], None]


_override: dict[str, float | None] = {"timeout": None, "max_wait": None}


def set_override(timeout: float | None = None, max_wait: float | None = None) -> None:
    """Set by the CLI from --timeout / --max-wait (None: fall back to env, then default)."""
    _override["timeout"], _override["max_wait"] = timeout, max_wait


def _seconds(env: str, default: float) -> float:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or value > 86400:
        raise InputError(f"{env}={raw!r} must be a number of seconds in (0, 86400]")
    return value


def current(
    default_timeout: float = DEFAULT_TIMEOUT_S, default_max_wait: float = DEFAULT_MAX_WAIT_S
) -> Waiting:
    """The waiting limits in force now (option > environment > the caller's default)."""
    timeout = _override["timeout"] or _seconds(TIMEOUT_ENV, default_timeout)
    max_wait = _override["max_wait"] or _seconds(MAX_WAIT_ENV, default_max_wait)
    return Waiting(timeout=timeout, max_wait=max_wait)
