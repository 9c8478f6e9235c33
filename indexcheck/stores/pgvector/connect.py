"""pgvector: reading the spec, connecting read-only, and psycopg's error tables.

:func:`parse_target` reads a ``pgvector:postgresql://...?table=T`` spec into a
:class:`Target` (columns, metric, search settings, libpq options, the printable spec
without secrets); :func:`connect` opens the read-only session. ``PSYCOPG_ERRORS`` maps what
psycopg raises on an open connection, ``CONNECT_ERRORS`` what libpq says while connecting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ...errors import (
    AuthError,
    BackendUnavailableError,
    DimensionMismatchError,
    InputError,
    SpecError,
)
from ...remote.translate import Caught, ErrorMap, Rule
from ..base import import_sdk
from ..params import StoreSpec
from .sql import _SECRET_PARAMS, METRICS

_OWN_PARAMS = {
    "table", "schema", "id", "vector", "text", "metric", "ef_search", "probes",
    "collection", "order", "metadata", "operator",
}  # fmt: skip

#: libpq connection keywords a spec may pass through (postgresql.org/docs/current/libpq-connect)
LIBPQ_KEYS = (
    "host hostaddr port dbname user password passfile require_auth channel_binding "
    "connect_timeout client_encoding options application_name fallback_application_name "
    "keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout "
    "replication gssencmode sslmode requiressl sslnegotiation sslcompression sslcert sslkey "
    "sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer "
    "ssl_min_protocol_version ssl_max_protocol_version krbsrvname gsslib gssdelegation "
    "service target_session_attrs load_balance_hosts"
).split()


def import_psycopg() -> Any:
    """psycopg 3, or MissingDependencyError naming the extra."""
    return import_sdk("psycopg", "pgvector", "psycopg[binary]")


def scrub(text: str, secret: str | None) -> str:
    if secret:
        text = text.replace(secret, "***")
    return text


def _fields(c: Caught) -> dict[str, Any]:
    """``first`` (the first line, password scrubbed), ``low`` (all of it, lower case) and
    ``reason`` (libpq's reason, after its 'connection to ... failed: ')."""
    secret = c.store._password
    raw = c.text.strip()
    text = scrub(c.text, secret)
    reason = text.strip().splitlines()[0] if text.strip() else c.name
    return {
        "first": scrub(raw.splitlines()[0] if raw else "", secret),
        "low": text.lower(),
        "reason": reason.split(" failed: ", 1)[-1],
    }


_AUTH_PHRASES = (
    "password authentication failed",
    "no password supplied",
    "authentication failed",
    "pg_hba.conf",
)

#: what libpq says while connecting (no session yet)
CONNECT_ERRORS = ErrorMap(
    Rule(
        "psycopg:OperationalError",
        AuthError,
        "pgvector at {store._where} refused the credentials of user '{store._user}'; check "
        "the user and the password (in the spec URL or PGPASSWORD)",
        when=lambda c: (
            any(p in c.low for p in _AUTH_PHRASES)
            or ("role" in c.low and "does not exist" in c.low)
        ),
    ),
    Rule(
        "psycopg:OperationalError",
        InputError,
        "pgvector at {store._where} has no database '{store._dbname}'; fix the "
        "database name in the spec URL",
        when=lambda c: "database" in c.low and "does not exist" in c.low,
    ),
    Rule(
        "psycopg:OperationalError",
        BackendUnavailableError,
        "cannot connect to pgvector at {store._where} ({reason}); check that PostgreSQL "
        "is running there and the host and port in the spec",
    ),
    Rule(
        "psycopg:ProgrammingError",
        SpecError,
        "pgvector connection options are invalid ({first}); fix the spec",
    ),
    fields=_fields,
    service="pgvector-connect",
)

#: what psycopg raises on an open session, while ``doing`` something
PSYCOPG_ERRORS = ErrorMap(
    Rule(
        "psycopg:errors.InsufficientPrivilege",
        AuthError,
        "pgvector user '{store._user}' may not read {store._qualified} while {doing} "
        "({first}); GRANT SELECT on it",
    ),
    Rule(
        ("psycopg:errors.UndefinedTable", "psycopg:errors.UndefinedColumn"),
        InputError,
        "pgvector table {store._qualified} changed while {doing} ({first}); check ?table= "
        "and columns",
    ),
    Rule(
        "psycopg:errors.DataException",
        DimensionMismatchError,
        "pgvector column {store._qualified}.{store._vec_col} holds vectors whose dimension "
        "is not {store._dimension}, so the server cannot rank them ({first}); fix or delete "
        "those rows (exact_query skips them)",
        when=lambda c: "different vector dimensions" in c.text,
    ),
    Rule("psycopg:OperationalError", CONNECT_ERRORS, when=lambda c: c.store._conn is None),
    Rule(
        "psycopg:OperationalError",
        BackendUnavailableError,
        "pgvector at {store._where} failed while {doing} ({first}); retry",
    ),
    Rule(
        "psycopg:Error",
        BackendUnavailableError,
        "pgvector at {store._where} returned an error while {doing} ({first})",
    ),
    fields=_fields,
    service="pgvector",
)


@dataclass
class Target:
    """What a pgvector spec names; ``spec`` is printable (no password, no secret keys)."""

    spec: str
    location: str
    password: str | None
    user: str
    dbname: str
    where: str
    table: str
    schema: str | None
    id_col: str
    id_given: bool
    vec_col: str | None
    text_col: str | None
    metric: str | None
    search: dict[str, int]
    libpq: dict[str, str]


def parse_target(parsed: StoreSpec) -> Target:
    """Read a ``pgvector:`` spec; SpecError (exit 2) for a malformed URL or option."""
    url = parsed.location
    if not url.startswith(("postgresql://", "postgres://")):
        raise SpecError(
            "pgvector spec must look like pgvector:postgresql://user@host:5432/db?table=T; "
            "the location does not start with postgresql://"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise SpecError(
            "pgvector spec has a malformed postgresql:// URL; write it as "
            "postgresql://user@host:5432/db?table=T"
        ) from None  # the ValueError may quote part of the password
    params = dict(parsed.params)
    host = parts.hostname or params.get("host") or "localhost"
    libpq = {k: v for k, v in params.items() if k not in _OWN_PARAMS}
    password = unquote(parts.password) if parts.password else None
    if "password" in libpq:
        password = libpq.pop("password")
    # the printable spec: no password in the URL, no secret params
    netloc = parts.netloc.rsplit("@", 1)
    userinfo = netloc[0].split(":", 1)[0] if len(netloc) == 2 else ""
    safe_netloc = f"{userinfo}@{netloc[-1]}" if userinfo else netloc[-1]
    location = urlunsplit((parts.scheme, safe_netloc, parts.path, "", ""))
    shown = "&".join(f"{k}={v}" for k, v in params.items() if k not in _SECRET_PARAMS)
    return Target(
        spec=f"pgvector:{location}" + (f"?{shown}" if shown else ""),
        location=urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
        password=password,
        user=unquote(parts.username) if parts.username else "(default user)",
        dbname=unquote(parts.path.lstrip("/")) or "(default database)",
        where=f"{host}:{port or params.get('port') or 5432}",
        table=parsed.require("table", "name the table that holds the vectors"),
        schema=params.get("schema"),
        id_col=params.get("id", "id"),
        id_given="id" in params,
        vec_col=params.get("vector"),
        text_col=params.get("text"),
        metric=_metric(params),
        search=_search(params),
        libpq=libpq,
    )


def _metric(params: dict[str, str]) -> str | None:
    metric = params.get("metric")
    if metric is not None and metric.lower() not in METRICS:
        raise SpecError(f"pgvector metric '{metric}' is unknown; use one of {', '.join(METRICS)}")
    chosen = metric.lower() if metric else None
    if params.get("operator"):  # the operator the application's query uses
        by_op = {op: m for m, (op, _) in METRICS.items()}
        of_op = by_op[params["operator"].strip()]
        if chosen not in (None, of_op):
            raise SpecError(
                f"pgvector &operator={params['operator']} is metric {of_op}, but "
                f"&metric={chosen}; give one of them"
            )
        chosen = of_op
    return chosen


def _search(params: dict[str, str]) -> dict[str, int]:
    search: dict[str, int] = {}
    for key, guc in (("ef_search", "hnsw.ef_search"), ("probes", "ivfflat.probes")):
        if key in params:
            if not params[key].isdigit() or int(params[key]) < 1:
                raise SpecError(f"pgvector {key} must be a positive integer, not '{params[key]}'")
            search[guc] = int(params[key])
    return search
