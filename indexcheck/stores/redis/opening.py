"""Redis, opening: the connection (password from the environment), redis-py's rows of the
error table, and the index's schema read with ``FT.INFO``.

The password comes from ``REDIS_PASSWORD`` (and the user from ``REDIS_USERNAME``), or from
the URL's userinfo, which works but shows in the process list (the CLI warns); either way it
is remembered by the redactor and never printed: the spec indexcheck shows has no userinfo.
Only read commands are sent: ``FT._LIST``, ``FT.INFO``, ``FT.SEARCH``, ``SCAN``,
``HGETALL``, ``JSON.MGET`` (and the ``HELLO``, ``AUTH`` and ``CLIENT SETINFO`` of redis-py's
handshake).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ...errors import (
    AuthError,
    BackendUnavailableError,
    InputError,
    SpecError,
    TransientError,
)
from ...remote.translate import ErrorMap, Rule
from ...safety.redact import redact_url, remember
from ...safety.secrets import env_secret
from ..base import import_sdk
from ..params import StoreSpec

TIMEOUT_S = 30.0
SPEC_HINT = "e.g. redis:redis://127.0.0.1:6379?index=docs"


def _says(*words: str) -> Any:
    return lambda c: any(w in c.text.lower() for w in words)


REDIS_ERRORS = ErrorMap(
    Rule(
        (
            "redis.exceptions:AuthenticationError",
            "redis.exceptions:AuthenticationWrongNumberOfArgsError",
        ),
        AuthError,
        "Redis at {where} refused the credentials while trying to {doing} ({line}); set "
        "REDIS_PASSWORD (and REDIS_USERNAME for an ACL user) to ones that can read '{index}'",
    ),
    Rule(
        "redis.exceptions:NoPermissionError",
        AuthError,
        "Redis at {where} denied the command to {doing} ({line}); the user needs read access "
        "to the index and its keys (ACL +@read +@search ~PREFIX*)",
    ),
    Rule(
        "redis.exceptions:ResponseError",
        AuthError,
        "Redis at {where} asks for a password to {doing} ({line}); set REDIS_PASSWORD",
        when=_says("noauth", "authentication required"),
    ),
    Rule(
        "redis.exceptions:ResponseError",
        InputError,
        "Redis at {where} has no Query Engine ({line}); indexcheck reads vector indexes of "
        "Redis 8, Redis Stack or a server with the search module loaded",
        when=_says("unknown command 'ft.", "unknown command `ft."),
    ),
    Rule(
        "redis.exceptions:ResponseError",
        InputError,
        "Redis at {where} holds no index '{index}' ({line}); pass one FT._LIST names as ?index=",
        when=_says("unknown index name", "no such index", "unknown index"),
    ),
    Rule(
        (
            "redis.exceptions:BusyLoadingError",
            "redis.exceptions:TryAgainError",
            "redis.exceptions:TimeoutError",
        ),
        TransientError,
        "Redis at {where} could not {doing} yet ({name}: {line})",
    ),
    Rule(
        "redis.exceptions:ResponseError",
        InputError,
        "Redis at {where} rejected the request to {doing} ({line}); check the spec",
    ),
    Rule(
        ("redis.exceptions:ConnectionError", OSError),
        BackendUnavailableError,
        "cannot reach Redis at {where} to {doing} ({name}: {line}); check the URL and that the "
        "server is up",
    ),
    Rule(
        "redis.exceptions:RedisError",
        BackendUnavailableError,
        "Redis at {where} failed while trying to {doing} ({name}: {line})",
    ),
    service="redis",
)


def import_redis() -> Any:
    """redis-py, or MissingDependencyError naming the extra."""
    return import_sdk("redis", "redis", "redis")


def server_url(location: str) -> tuple[str, str | None, str | None]:
    """``(URL without userinfo, user, password)`` from the spec's location; a bare
    ``host:port`` is read as ``redis://host:port``."""
    location = location.strip()
    if not location:
        raise SpecError(f"redis: the spec has no server URL; {SPEC_HINT}")
    if "://" not in location:
        location = "redis://" + location
    try:
        parts = urlsplit(location)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError as exc:
        raise SpecError(f"redis: cannot read the URL ({exc}); {SPEC_HINT}") from None
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise SpecError(
            f"redis: the URL scheme must be redis://, rediss:// or unix://, got "
            f"'{parts.scheme}://'; {SPEC_HINT}"
        )
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    remember(password)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")), user, password


def connect(spec: StoreSpec) -> tuple[Any, str]:
    """A redis-py client for the spec's server (bytes replies) and where it is (safe to
    print). The password: ``REDIS_PASSWORD``, else the URL's."""
    redis = import_redis()
    url, user, password = server_url(spec.location)
    password = env_secret("REDIS_PASSWORD") or password
    user = env_secret("REDIS_USERNAME") or user
    remember(password)
    where = redact_url(url)
    client = redis.Redis.from_url(
        url,
        username=user,
        password=password or None,
        decode_responses=False,
        socket_timeout=TIMEOUT_S,
        socket_connect_timeout=TIMEOUT_S,
    )
    return client, where
