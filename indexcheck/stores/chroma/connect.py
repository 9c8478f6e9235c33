"""Reaching a Chroma collection: a snapshot of a local folder or a server, its client and
its collection, and chromadb's error table (used while opening and by the store).

:func:`connect` turns a checked ``chroma:`` spec into a :class:`Connection`; the store
(:mod:`.chroma`) is built from it. A local folder is never opened in place: it is copied
first (:mod:`.chroma_snapshot`), because Chroma writes to any folder a client opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from ...errors import (
    AuthError,
    BackendUnavailableError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ...remote.translate import Caught, ErrorMap, Rule, doing
from .snapshot import SQLITE_FILE, _remove_tree, _snapshot

#: the two opening phases with rows of their own
OPEN_FOLDER, GET_COLLECTION = "opening a folder", "opening the collection"
SPEC_HINT = (
    "e.g. chroma:./chroma_db?collection=docs or chroma:http://127.0.0.1:8000?collection=docs"
)


def _missing(c: Caught) -> bool:
    return c.name == "NotFoundError" or "does not exist" in c.text


#: chromadb (and httpx under its HttpClient) -> IndexcheckErrors; ``{what}`` says where
CHROMA_ERRORS = ErrorMap(
    Rule(
        Exception,
        InputError,
        "chroma: cannot open '{src}' with chromadb {version} ({name}: {text}); check the "
        "tenant/database and the Chroma version that wrote it",
        when=doing(OPEN_FOLDER),
    ),
    Rule(
        Exception,
        InputError,
        lambda c: _missing_collection(c.client, c.collection, c.where),
        when=lambda c: c.doing == GET_COLLECTION and _missing(c),
    ),
    Rule(
        ("ChromaAuthError", "AuthorizationError"),
        AuthError,
        "{what}: the server refused the credentials; set CHROMA_CLIENT_AUTH_PROVIDER "
        "and CHROMA_CLIENT_AUTH_CREDENTIALS",
    ),
    Rule("RateLimitError", RateLimitError, "{what}: rate limited by the server; try again later"),
    Rule(
        "NotFoundError", InputError, "{what}: not found ({text}); check ?collection= and the tenant"
    ),
    Rule(
        ("httpx.*", "httpcore.*", ConnectionError, TimeoutError),
        BackendUnavailableError,
        "{what}: the server is unreachable ({name}); check it runs",
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "{what}: {text}",
        when=lambda c: "Could not connect" in c.text,
    ),
    Rule(Exception, BackendUnavailableError, "{what} failed: {name}: {text}"),
    service="chroma",
)


@dataclass
class Connection:
    """An open client and collection, and what the store reports about them."""

    spec: str
    client: Any
    collection: Any
    mode: str
    snapshot_dir: str | None
    seq: int | None
    tenant: str
    database: str


def _import_chromadb() -> Any:
    try:
        import chromadb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("the chroma store", "chroma", "chromadb") from exc
    return chromadb


def _settings() -> Any:
    from chromadb.config import Settings

    # Telemetry off: nothing leaves the machine; reset stays forbidden.
    return Settings(anonymized_telemetry=False, allow_reset=False)


def _remote_client(chromadb: Any, location: str, tenant: str, database: str) -> Any:
    parts = urlsplit(location)
    if parts.username or parts.password:
        raise SpecError(
            "chroma: do not put credentials in the store spec; set "
            "CHROMA_CLIENT_AUTH_PROVIDER and CHROMA_CLIENT_AUTH_CREDENTIALS instead"
        )
    if not parts.hostname or parts.path not in {"", "/"}:
        raise SpecError(f"chroma: expected http(s)://HOST[:PORT] as location; {SPEC_HINT}")
    ssl = parts.scheme == "https"
    try:
        port = parts.port or (443 if ssl else 8000)
    except ValueError as exc:
        raise SpecError(f"chroma: bad port in '{location}'; {SPEC_HINT}") from exc
    with CHROMA_ERRORS.mapping(what=f"chroma server at {parts.scheme}://{parts.hostname}:{port}"):
        return chromadb.HttpClient(
            host=parts.hostname,
            port=port,
            ssl=ssl,
            settings=_settings(),
            tenant=tenant,
            database=database,
        )


def _local_client(chromadb: Any, src: Path, name: str, tenant: str, database: str) -> Any:
    """A PersistentClient on a fresh snapshot of ``src``: (client, snapshot dir, last seq)."""
    if not src.exists():
        raise InputError(
            f"chroma: no such directory '{src}'; pass the folder a Chroma PersistentClient "
            "wrote (it holds chroma.sqlite3)"
        )
    if not (src / SQLITE_FILE).is_file():
        raise InputError(
            f"chroma: '{src}' is not a Chroma database (no {SQLITE_FILE} in it); pass the "
            "folder a Chroma PersistentClient wrote"
        )
    snapshot_dir, seq = _snapshot(src, name)
    try:
        with CHROMA_ERRORS.mapping(OPEN_FOLDER, src=src, version=chromadb.__version__):
            client = chromadb.PersistentClient(
                path=snapshot_dir, settings=_settings(), tenant=tenant, database=database
            )
    except Exception:
        _remove_tree(snapshot_dir)
        raise
    return client, snapshot_dir, seq


def _missing_collection(client: Any, name: str, where: str) -> str:
    try:
        names = sorted(str(c.name) for c in client.list_collections(limit=50))
    except Exception:
        names = []
    listing = ", ".join(names) if names else "none"
    return (
        f"chroma: no collection '{name}' in {where}; existing collections: {listing}; "
        "pass one of them as ?collection="
    )


def connect(spec: Any) -> Connection:
    """Open the client and the collection a ``chroma:`` spec names (a snapshot of a local
    folder, deleted again if the collection cannot be opened)."""
    name = spec.require("collection", SPEC_HINT)
    chromadb = _import_chromadb()
    from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT

    tenant = spec.params.get("tenant") or DEFAULT_TENANT
    database = spec.params.get("database") or DEFAULT_DATABASE
    location = spec.location.strip()
    if not location:
        raise SpecError(f"chroma: the spec has no location; {SPEC_HINT}")
    extra = {k: v for k, v in spec.params.items() if k in {"tenant", "database"}}
    safe_spec = f"chroma:{location}?" + urlencode({"collection": name, **extra})

    snapshot_dir: str | None = None
    seq: int | None = None
    if location.lower().startswith(("http://", "https://")):
        client = _remote_client(chromadb, location, tenant, database)
        mode, where = "http", location
    else:
        src = Path(location).expanduser()
        client, snapshot_dir, seq = _local_client(chromadb, src, name, tenant, database)
        mode, where = "persistent", str(src)

    fields = {"what": f"chroma get_collection '{name}'", "client": client, "collection": name}
    try:
        with CHROMA_ERRORS.mapping(GET_COLLECTION, where=where, **fields):
            collection = client.get_collection(name, embedding_function=None)
    except Exception:
        try:
            client.close()
        finally:
            if snapshot_dir:
                _remove_tree(snapshot_dir)
        raise
    return Connection(safe_spec, client, collection, mode, snapshot_dir, seq, tenant, database)
