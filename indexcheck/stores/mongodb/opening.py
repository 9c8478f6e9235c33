"""Opening a MongoDB Atlas collection: the URI (password from the environment only), the
client, and the vector index's layout from ``$listSearchIndexes`` and one document."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, urlencode, urlsplit

from ...errors import InputError, SpecError
from ...safety.secrets import env_secret
from ..base import StoreSpec
from .errors import PASSWORD_ENV, URI_ENV

SCHEMES = ("mongodb://", "mongodb+srv://")
SHOWN = ("db", "collection", "index", "vector", "text", "metadata", "num_candidates")
DEFAULT_INDEX = "vector_index"  # LangChain's and LlamaIndex's default name


@dataclass(frozen=True)
class Target:
    """What a spec names: the URI to connect with (may hold the password: never shown),
    where (host, no credentials), db, collection, and the spec safe to print."""

    uri: str
    where: str
    db: str
    collection: str
    spec: str
    password: str


def target(spec: StoreSpec) -> Target:
    """The URI, database and collection of ``mongodb:URI?db=D&collection=C[&index=I]``.

    The URI comes from the spec (user allowed, password refused) with the password from
    ``MONGODB_PASSWORD``, or whole from ``MONGODB_URI`` when the spec's URI is empty."""
    raw = spec.location.strip()
    from_env = raw in ("", "$" + URI_ENV)
    uri = env_secret(URI_ENV) if from_env else raw
    if from_env and not uri:
        raise SpecError(
            f"the mongodb spec names no URI and {URI_ENV} is not set; write "
            "mongodb:mongodb+srv://USER@CLUSTER.mongodb.net?db=DB&collection=C, or export "
            f"{URI_ENV}"
        )
    if not uri.startswith(SCHEMES):
        raise SpecError(
            "the mongodb spec needs a mongodb:// or mongodb+srv:// URI before '?', e.g. "
            "mongodb:mongodb://localhost:27017?db=rag&collection=chunks"
        )
    parts = urlsplit(uri)
    password = ""
    if parts.password is not None:
        if not from_env:
            raise SpecError(
                f"put no password in the mongodb spec's URI; keep the user there and export "
                f"the password as {PASSWORD_ENV} (or the whole URI as {URI_ENV})"
            )
        password = parts.password
    elif parts.username and env_secret(PASSWORD_ENV):
        password = env_secret(PASSWORD_ENV)
        host = parts.netloc.rsplit("@", 1)[1]
        uri = uri.replace(parts.netloc, f"{parts.username}:{quote_plus(password)}@{host}", 1)
    elif env_secret(PASSWORD_ENV):
        raise SpecError(
            f"{PASSWORD_ENV} is set but the URI names no user; write it as "
            "mongodb+srv://USER@CLUSTER.mongodb.net"
        )
    where = (parts.hostname or "?") + (f":{parts.port}" if parts.port else "")
    db = spec.require("db", "name the database, e.g. ?db=rag&collection=chunks")
    coll = spec.require("collection", "name the collection, e.g. ?db=rag&collection=chunks")
    shown = {k: spec.params[k] for k in SHOWN if spec.params.get(k)}
    head = f"${URI_ENV}" if from_env else raw.split("?", 1)[0]
    return Target(uri, where, db, coll, f"mongodb:{head}?{urlencode(shown)}", password)


@dataclass(frozen=True)
class Layout:
    """Where a collection keeps what indexcheck reads: the vector index (name, path,
    dimension, similarity, filter paths), the text field, and the metadata (a sub-document,
    or "" for the top-level fields, as LangChain writes them)."""

    index: str
    vector: str
    dimension: int
    similarity: str
    filter_paths: tuple[str, ...]
    text: str | None
    metadata: str
    writer: str
    definition: Mapping[str, Any]


def sniff(
    indexes: list[dict[str, Any]], sample: dict[str, Any] | None, params: Mapping[str, str],
    namespace: str,
) -> Layout:  # fmt: skip
    """The :class:`Layout` from ``$listSearchIndexes`` and one stored document."""
    vector_indexes = [i for i in indexes if i.get("type") == "vectorSearch"]
    names = ", ".join(sorted(str(i.get("name")) for i in vector_indexes)) or "none"
    wanted = params.get("index")
    if wanted:
        found = [i for i in vector_indexes if i.get("name") == wanted]
        if not found:
            raise InputError(
                f"{namespace} has no vector search index '{wanted}' (vector indexes: {names}); "
                "fix ?index= (Atlas answers a $vectorSearch on a missing index with no "
                "documents, not an error)"
            )
    elif len(vector_indexes) == 1:
        found = vector_indexes
    else:
        found = [i for i in vector_indexes if i.get("name") == DEFAULT_INDEX]
        if not found:
            why = "none" if not vector_indexes else f"several ({names})"
            raise InputError(f"{namespace} has {why} vector search indexes; name one with ?index=")
    index = found[0]
    definition = dict(index.get("latestDefinition") or index.get("definition") or {})
    fields = [f for f in definition.get("fields", []) if isinstance(f, dict)]
    vectors = [f for f in fields if f.get("type") == "vector"]
    if params.get("vector"):
        vectors = [f for f in vectors if f.get("path") == params["vector"]]
    if len(vectors) != 1:
        paths = ", ".join(str(f.get("path")) for f in fields if f.get("type") == "vector")
        raise InputError(
            f"the vector index '{index.get('name')}' on {namespace} has "
            f"{'no' if not vectors else 'several'} matching vector fields ({paths or 'none'}); "
            "name one with ?vector="
        )
    vec = vectors[0]
    doc = sample or {}
    text = params.get("text") or ("text" if "text" in doc or not doc else None)
    meta = params.get("metadata")
    if meta is None:
        meta = "metadata" if isinstance(doc.get("metadata"), dict) else ""
    llama = isinstance(doc.get("metadata"), dict) and "_node_content" in doc["metadata"]
    return Layout(
        index=str(index.get("name")),
        vector=str(vec["path"]),
        dimension=int(vec.get("numDimensions", 0)),
        similarity=str(vec.get("similarity", "")),
        filter_paths=tuple(str(f["path"]) for f in fields if f.get("type") == "filter"),
        text=text,
        metadata=meta,
        writer="llamaindex" if llama else ("langchain" if meta == "" else "custom"),
        definition=definition,
    )


def open_client(t: Target, timeout_ms: int) -> Any:
    """A pymongo client for ``t`` (pymongo's own retries off: the base retries)."""
    try:
        from pymongo import MongoClient
    except ImportError as exc:
        from ...errors import MissingDependencyError

        raise MissingDependencyError("the mongodb store", "mongodb", "pymongo") from exc
    return MongoClient(
        t.uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
        retryReads=False, retryWrites=False, appname="indexcheck",
    )  # fmt: skip


Call = Callable[[str, Callable[[], Any]], Any]
