"""Qdrant, opening: a server collection or a local folder, and what the collection is
(its dense vector, dimension and distance).

This module knows nothing of reading points or searching (``qdrant.py`` does both, over
the :class:`QdrantCollection` built here); it also holds qdrant-client's error table,
which both use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import (
    AuthError,
    BackendUnavailableError,
    DataFileError,
    IndexcheckError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ...remote.translate import Caught, ErrorMap, Rule, doing
from ...safety.redact import redact_url
from ...safety.secrets import env_secret
from ..base import StoreSpec
from ..metric_table import scores_of
from ..node_rows import NODE_KEYS

TIMEOUT_S = 30
_OPEN_LOCAL = "open the local folder"


def _facts(caught: Caught) -> dict[str, Any]:
    """HTTP status and body of an unexpected response, the cause of a failed request."""
    exc = caught.exc
    content = getattr(exc, "content", b"") or b""
    return {
        "status": int(getattr(exc, "status_code", 0) or 0),
        "content": content[:160].decode("utf-8", "replace") if isinstance(content, bytes) else "",
        "source": type(getattr(exc, "source", None)).__name__,
    }


_UNEXPECTED = "qdrant_client.http.exceptions:UnexpectedResponse"
_RATE_LIMITED = (
    "Qdrant at {location} kept answering 429 while trying to {doing}; wait and retry, or "
    "raise the rate limit"
)
QDRANT_ERRORS = ErrorMap(
    Rule(
        RuntimeError,
        BackendUnavailableError,
        "Qdrant local storage at '{location}' is locked by another process; stop that "
        "process (local mode allows one at a time) or point at a copy of the folder",
        when=lambda c: c.doing == _OPEN_LOCAL and "already accessed" in c.text,
    ),
    Rule(
        (ValueError, OSError),
        DataFileError,
        "cannot read Qdrant local storage at '{location}' ({text}); check the folder",
        when=doing(_OPEN_LOCAL),
    ),
    Rule(
        _UNEXPECTED,
        AuthError,
        "Qdrant at {location} refused the credentials (HTTP {status}) while trying to "
        "{doing}; set QDRANT_API_KEY to a key that can read '{collection}'",
        when=lambda c: c.status in (401, 403),
    ),
    Rule(_UNEXPECTED, RateLimitError, _RATE_LIMITED, when=lambda c: c.status == 429),
    Rule(
        _UNEXPECTED,
        BackendUnavailableError,
        "Qdrant at {location} failed (HTTP {status}) while trying to {doing}; check the "
        "server's health and retry",
        when=lambda c: c.status >= 500 or c.status == 0,
    ),
    Rule(
        _UNEXPECTED,
        InputError,
        "Qdrant at {location} rejected the request to {doing} (HTTP {status}: {content}); "
        "check the spec",
    ),
    Rule(
        "qdrant_client.common.client_exceptions:ResourceExhaustedResponse",
        RateLimitError,
        _RATE_LIMITED,
    ),
    Rule(
        "qdrant_client.http.exceptions:ResponseHandlingException",
        BackendUnavailableError,
        "cannot reach Qdrant at {location} to {doing} ({source}); check the URL and that "
        "the server is up",
    ),
    Rule(
        (OSError, TimeoutError),
        BackendUnavailableError,
        "cannot reach Qdrant at {location} to {doing} ({name}); check the URL and that the "
        "server is up",
    ),
    fields=_facts,
    service="qdrant",
)


@dataclass
class QdrantCollection:
    """An open Qdrant collection and what the store needs to know about it."""

    client: Any
    models: Any  # qdrant_client.models
    spec: str  # safe to print
    collection: str
    location: str  # the URL (redacted) or the local folder
    local: bool
    vector: str | None  # None: the collection's single unnamed vector
    id_field: str | None
    text_field: str | None  # None: sniffed from a point's payload at open
    info: Any = None  # the collection's info, read once at open
    params: Any = None  # the vector's VectorParams
    dimension: int = 0
    distance: str = ""
    layout: str = "plain"  # plain | langchain | llamaindex (see payload_layout)

    @property
    def where(self) -> str:
        return f"Qdrant collection '{self.collection}' at {self.location}"

    @property
    def text_keys(self) -> list[str]:
        """The payload keys a fetch asks for to give each point its text."""
        keys = [self.text_field] if self.text_field else []
        return keys + (["_node_content", "_node_type"] if self.layout == "llamaindex" else [])

    def metadata_of(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A point's metadata: LangChain nests it under ``metadata``; LlamaIndex adds its
        node keys beside it; otherwise the payload without the text."""
        if self.layout == "langchain":
            nested = payload.get("metadata")
            return dict(nested) if isinstance(nested, dict) else {}
        drop = set(NODE_KEYS) if self.layout == "llamaindex" else set()
        return {k: v for k, v in payload.items() if k != self.text_field and k not in drop}

    @property
    def filter_prefix(self) -> str:
        return "metadata." if self.layout == "langchain" else ""

    def details(self) -> dict[str, Any]:
        """What ``info().details`` says of the collection: mode, vector, distance, id and
        text sources, and on a server its HNSW and quantization settings."""
        info = self.info
        details: dict[str, Any] = {
            "mode": "local" if self.local else "server",
            "collection": self.collection,
            "vector": self.vector or "",
            "distance": self.distance,
            "id_source": f"payload[{self.id_field}]" if self.id_field else "point id",
            "text_field": self.text_field or "",
            "layout": self.layout,
        }
        if self.layout == "llamaindex":
            details["text_field"] = "_node_content (the text LlamaIndex embedded)"
        if self.distance == "Cosine":
            details["stored_vectors"] = (
                "unit-normalised: Qdrant scores Cosine on normalised vectors (a server "
                "normalises at upload), so fetch and iter_vectors return normalised vectors"
            )
        if self.distance == "Manhattan":
            details["note"] = (
                "l1 is not a function of cos, dot or l2; score-scale probes cannot convert it"
            )
        if self.local:
            details["search"] = "brute force (qdrant-client local mode has no ANN index)"
        else:
            details["indexed_vectors_count"] = info.indexed_vectors_count
            details["hnsw"] = {
                "m": info.config.hnsw_config.m,
                "ef_construct": info.config.hnsw_config.ef_construct,
                "full_scan_threshold": info.config.hnsw_config.full_scan_threshold,
            }
            quant = info.config.quantization_config or getattr(
                self.params, "quantization_config", None
            )
            details["quantization"] = type(quant).__name__ if quant is not None else None
        return details


def open_collection(spec: StoreSpec, options: Any) -> QdrantCollection:
    """Connect (server) or open the folder (local mode), check the collection, describe it."""
    try:
        from qdrant_client import QdrantClient, models
    except ImportError:
        raise MissingDependencyError("the qdrant store", "qdrant", "qdrant-client") from None

    collection = spec.require("collection", "name the Qdrant collection, e.g. ?collection=docs")
    vector = spec.params.get("vector") or None
    id_field = spec.params.get("id_field") or None
    text_field = spec.params.get("text_field") or None
    location = spec.location.strip()
    if not location:
        raise SpecError("qdrant spec needs a server URL or a local folder before '?'")
    local = not location.lower().startswith(("http://", "https://"))
    extras = "".join(
        f"&{k}={v}"
        for k, v in (("vector", vector), ("id_field", id_field), ("text_field", text_field))
        if v
    )
    shown = location if local else redact_url(location)
    if local:
        path = Path(location).expanduser()
        client = _open_local(path, options, QdrantClient)
        location = str(path)
    else:
        api_key = env_secret("QDRANT_API_KEY") or None
        parts = urlsplit(location)
        if parts.username or parts.password:
            raise SpecError(
                "put no credentials in the qdrant URL; set QDRANT_API_KEY in the environment "
                "instead"
            )
        client = QdrantClient(
            url=location, api_key=api_key, timeout=TIMEOUT_S, check_compatibility=False
        )
        location = shown
    opened = QdrantCollection(
        client,
        models,
        f"qdrant:{shown}?collection={collection}{extras}",
        collection,
        location,
        local,
        vector,
        id_field,
        text_field,
    )
    try:
        _check_exists(opened, shown)
        _describe(opened)
        if text_field is None:
            _sniff_layout(opened)
    except IndexcheckError:
        client.close()
        raise
    return opened


def _check_exists(c: QdrantCollection, shown: str) -> None:
    call, client = partial(QDRANT_ERRORS.call, location=shown, collection=c.collection), c.client
    if not c.local and call("find the collection", partial(client.collection_exists, c.collection)):
        return
    aliases = call("list aliases", client.get_aliases).aliases
    if c.collection in {a.alias_name for a in aliases}:
        return
    names = [x.name for x in call("list collections", client.get_collections).collections]
    if c.collection not in names:
        listed = ", ".join(sorted(names)) if names else "none"
        raise InputError(
            f"no Qdrant collection '{c.collection}' at {shown} (collections there: {listed}); "
            "fix ?collection= in the spec"
        )


def _describe(c: QdrantCollection) -> None:
    """Read the collection's config: its one dense vector, dimension and distance."""
    call = partial(QDRANT_ERRORS.call, location=c.location, collection=c.collection)
    c.info = call("read the collection", partial(c.client.get_collection, c.collection))
    vectors, given = c.info.config.params.vectors, c.vector
    if isinstance(vectors, c.models.VectorParams):
        if c.vector:
            raise InputError(
                f"{c.where} has a single unnamed vector, not '{c.vector}'; "
                "drop &vector= from the spec"
            )
        params = vectors
    else:
        named: dict[str, Any] = dict(vectors or {})
        if not named:
            raise InputError(f"{c.where} holds no dense vectors; indexcheck needs one")
        if c.vector is None and len(named) == 1:
            c.vector = next(iter(named))
        elif c.vector is None:
            raise InputError(
                f"{c.where} has several named vectors ({', '.join(sorted(named))}); "
                "pick one with &vector=NAME"
            )
        if c.vector not in named:
            raise InputError(
                f"{c.where} has no vector named '{c.vector}'; "
                f"use one of: {', '.join(sorted(named))}"
            )
        params = named[c.vector]
    if getattr(params, "multivector_config", None) is not None:
        raise InputError(
            f"{c.where}: vector '{given or ''}' is a multivector, which indexcheck "
            "cannot check; pass &vector= naming a single dense vector"
        )
    c.params, c.dimension = params, int(params.size)
    c.distance = str(getattr(params.distance, "value", params.distance))
    known = scores_of("qdrant")
    if c.distance not in known:
        raise InputError(
            f"{c.where} uses distance '{c.distance}', which indexcheck does not "
            f"know; supported: {', '.join(known)}"
        )


def payload_layout(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(layout, text key) of a payload: LlamaIndex's (the node as JSON under
    ``_node_content``, text inside it), LangChain's (``page_content`` and a nested
    ``metadata``), else ``text``."""
    if isinstance(payload.get("_node_content"), str):
        return "llamaindex", None
    if "page_content" in payload and "text" not in payload:
        return "langchain", "page_content"
    return "plain", "text"


def _sniff_layout(c: QdrantCollection) -> None:
    """The layout of the collection's first point (``&text_field=`` skips this)."""
    call = partial(QDRANT_ERRORS.call, location=c.location, collection=c.collection)
    records, _ = call("read a point", partial(c.client.scroll, c.collection, limit=1,
                                              with_payload=True, with_vectors=False))  # fmt: skip
    c.layout, c.text_field = payload_layout(dict(records[0].payload or {}) if records else {})


def _open_local(path: Path, options: Any, client_cls: Any) -> Any:
    """Open a qdrant-client local folder without letting it create or change anything."""
    # QdrantClient(path=...) creates meta.json (and the folder) when absent: refuse first.
    if not (path / "meta.json").is_file():
        raise DataFileError(
            f"no Qdrant local storage at '{path}' (no meta.json); pass the folder that was "
            "given to QdrantClient(path=...), or an http(s):// URL for a server"
        )
    if not getattr(options, "trust_pickle", False):
        raise InputError(
            f"Qdrant local storage at '{path}' keeps each point as a Python pickle, which can "
            "run code when loaded; pass --trust-pickle if you trust who wrote the folder"
        )
    opened = partial(client_cls, path=str(path))
    return QDRANT_ERRORS.call(_OPEN_LOCAL, opened, location=str(path), collection="")
