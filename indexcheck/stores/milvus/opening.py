"""Milvus, opening: a server connection or Milvus Lite data, the collection, and what it is
(its schema, vector index and metric; loaded for search if it was not).

This module knows nothing of reading rows or searching (``milvus.py`` does both, over the
:class:`MilvusCollection` built here); it also holds pymilvus/grpc's error table, which
both use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import (
    AuthError,
    BackendUnavailableError,
    DataFileError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ...remote.translate import Caught, ErrorMap, Rule, doing
from ...safety.noise import library_noise
from ...safety.redact import redact_url
from ...safety.secrets import env_secret
from ..base import StoreSpec
from ..metric_table import scores_of

TIMEOUT_S = 30.0
EXACT_INDEXES = {"FLAT", "BRUTE_FORCE", "GPU_BRUTE_FORCE"}
IVF_FLAT_INDEXES = {"IVF_FLAT", "GPU_IVF_FLAT"}
#: Milvus's upper bound on nlist, so an nprobe that probes every list of any IVF index.
MAX_NLIST = 65536

# Lite servers this module started, by data path -> number of open stores using them.
_LITE_USERS: dict[str, int] = {}


def _facts(caught: Caught) -> dict[str, Any]:
    """The gRPC status name (of the exception or its cause), Milvus's code, the message."""
    import grpc

    exc = caught.exc
    cause: Any = exc if isinstance(exc, grpc.RpcError) else exc.__cause__
    code_of = getattr(cause, "code", None) if isinstance(cause, grpc.RpcError) else None
    status = code_of() if callable(code_of) else None
    code = getattr(exc, "code", None)
    message = str(getattr(exc, "message", "") or exc)
    return {
        "status": getattr(status, "name", None),
        "code": code if isinstance(code, int) else None,
        "message": message[:200],
        "low": message.lower(),
    }


def _refused(c: Caught) -> bool:
    refused = c.status in ("UNAUTHENTICATED", "PERMISSION_DENIED")
    return refused or "auth check failure" in c.low or "permission deny" in c.low


_SDK = ("pymilvus.exceptions:MilvusException", "grpc:RpcError")
MILVUS_ERRORS = ErrorMap(
    Rule(
        "pymilvus.exceptions:ConnectionConfigException",
        BackendUnavailableError,
        "cannot open {where}; milvus-lite lets one process hold a .db at a time, so "
        "stop the process using it or point at a copy",
        when=doing("open Milvus Lite"),
    ),
    Rule(
        _SDK,
        AuthError,
        "{where} refused the credentials while trying to {doing}; set MILVUS_TOKEN "
        "to a token (or user:password) that can read the collection",
        when=_refused,
    ),
    Rule(
        _SDK,
        RateLimitError,
        "{where} kept refusing requests (rate limit) while trying to {doing}; wait and retry",
        when=lambda c: c.status == "RESOURCE_EXHAUSTED" or "rate limit" in c.low,
    ),
    Rule(
        _SDK,
        BackendUnavailableError,
        "cannot reach {where} to {doing}; check the URI and that the server is up",
        when=lambda c: c.code == 2 or c.status in ("UNAVAILABLE", "DEADLINE_EXCEEDED"),
    ),
    Rule(
        _SDK,
        BackendUnavailableError,
        "{where} failed to {doing} ({message}); check the server's log",
    ),
    fields=_facts,
    service="milvus",
)


@dataclass
class MilvusCollection:
    """An open Milvus collection and what the store needs to know about it."""

    client: Any
    spec: str  # safe to print
    where: str  # "Milvus at URI" or "Milvus Lite at PATH", for messages
    lite: bool
    name: str
    vector: str = ""
    dimension: int = 0
    pk: str = ""
    id_field: str = ""
    int_ids: bool = False
    text_field: str | None = None
    scalars: list[str] = field(default_factory=list)
    schema_summary: dict[str, str] = field(default_factory=dict)
    index: dict[str, Any] = field(default_factory=dict)
    index_type: str = ""
    metric: str = ""
    #: search params that make a search exact ({} when the normal one is), or None
    exact_params: dict[str, Any] | None = None
    approximate: bool = True
    loaded_by_us: bool = False
    release_lite: Callable[[], None] | None = None

    def close(self) -> None:
        """Release the collection if opening loaded it, then the client (and Lite server)."""
        try:
            if self.loaded_by_us:
                MILVUS_ERRORS.call(
                    "release the collection",
                    partial(self.client.release_collection, self.name),
                    where=self.where,
                )
        finally:
            self.client.close()
            if self.release_lite is not None:
                self.release_lite()


def open_collection(spec: StoreSpec) -> MilvusCollection:
    """Connect (server) or start Milvus Lite, check the collection and describe it."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise MissingDependencyError("the milvus store", "milvus", "pymilvus") from None

    name = spec.require("collection", "name the Milvus collection, e.g. ?collection=docs")
    given = {k: spec.params.get(k) or None for k in ("vector", "id", "text", "db")}
    db_name = given["db"] or ""
    location = spec.location.strip()
    if not location:
        raise SpecError("milvus spec needs a Milvus Lite .db path or a server URI before '?'")
    lite = not location.lower().startswith(("http://", "https://", "tcp://"))
    extras = "".join(f"&{k}={v}" for k, v in given.items() if v)
    release: Callable[[], None] | None = None
    if lite:
        path = _lite_path(Path(location).expanduser())
        shown = str(path)
        where = f"Milvus Lite at {shown}"
        client, release = _open_lite(path, db_name, where, MilvusClient)
    else:
        parts = urlsplit(location)
        if parts.username or parts.password:
            raise SpecError(
                "put no credentials in the milvus URI; set MILVUS_TOKEN in the environment"
            )
        shown = redact_url(location)
        where = f"Milvus at {shown}"
        token = env_secret("MILVUS_TOKEN", header=False)  # base64-coded by pymilvus
        with library_noise():  # gRPC's channel set-up may print to fd 2
            client = MILVUS_ERRORS.call(
                "connect",
                lambda: MilvusClient(uri=location, token=token, db_name=db_name, timeout=TIMEOUT_S),
                where=where,
            )
    opened = MilvusCollection(
        client, f"milvus:{shown}?collection={name}{extras}", where, lite, name, release_lite=release
    )
    try:
        call = partial(MILVUS_ERRORS.call, where=where)
        if not call("find the collection", partial(client.has_collection, name)):
            names = call("list collections", client.list_collections)
            listed = ", ".join(sorted(names)) if names else "none"
            raise InputError(
                f"no Milvus collection '{name}' in {where} (collections there: {listed}); "
                "fix ?collection= in the spec"
            )
        _read_schema(
            opened,
            call("describe the collection", partial(client.describe_collection, name)),
            given,
        )
        _read_index(opened)
        state = call("read the load state", partial(client.get_load_state, name))
        if "NotLoad" in str(state.get("state")):
            call("load the collection", partial(client.load_collection, name))
            opened.loaded_by_us = True
    except Exception:
        opened.loaded_by_us = False
        opened.close()
        raise
    return opened


def _read_schema(c: MilvusCollection, desc: dict[str, Any], given: dict[str, str | None]) -> None:
    from pymilvus import DataType

    fields = {f["name"]: f for f in desc.get("fields", [])}
    where = f"collection '{c.name}' in {c.where}"
    vectors = [n for n, f in fields.items() if f["type"] == DataType.FLOAT_VECTOR]
    vector = given["vector"]
    if vector is None:
        if len(vectors) != 1:
            listed = ", ".join(vectors) or "none"
            raise InputError(
                f"{where} has {len(vectors)} FLOAT_VECTOR fields ({listed}); "
                "pick one with &vector=FIELD"
            )
        vector = vectors[0]
    elif vector not in vectors:
        kind = fields[vector]["type"].name if vector in fields else "no such field"
        raise InputError(
            f"{where}: '{vector}' is not a FLOAT_VECTOR field ({kind}); "
            f"use one of: {', '.join(vectors) or 'none'}"
        )
    c.vector = vector
    c.dimension = int(fields[vector]["params"]["dim"])
    c.pk = next(n for n, f in fields.items() if f.get("is_primary"))
    c.id_field = given["id"] or c.pk
    key_types = {DataType.INT64, DataType.INT32, DataType.INT16, DataType.INT8}
    id_info = fields.get(c.id_field)
    if id_info is None or id_info["type"] not in key_types | {DataType.VARCHAR}:
        raise InputError(
            f"{where}: id field '{c.id_field}' must be an INT64 or VARCHAR field; "
            f"fields: {', '.join(fields)}"
        )
    c.int_ids = id_info["type"] in key_types
    text = given["text"]
    dynamic = bool(desc.get("enable_dynamic_field"))
    if text is not None and text not in fields and not dynamic:
        raise InputError(f"{where} has no field '{text}' for texts; fields: {', '.join(fields)}")
    if text is None and "text" in fields:
        text = "text"
    c.text_field = text
    c.scalars = [n for n, f in fields.items() if "VECTOR" not in f["type"].name and n != text]
    c.schema_summary = {n: f["type"].name for n, f in sorted(fields.items(), key=lambda kv: kv[0])}


def _read_index(c: MilvusCollection) -> None:
    call, client, name = partial(MILVUS_ERRORS.call, where=c.where), c.client, c.name
    names = call("list indexes", lambda: client.list_indexes(name, field_name=c.vector))
    if names:
        c.index = dict(
            call("describe the index", lambda: client.describe_index(name, index_name=names[0]))
        )
    index_type = str(c.index.get("index_type", "")).upper()
    if not c.index:
        if not c.lite:
            raise InputError(
                f"collection '{name}' in {c.where} has no index on '{c.vector}'; "
                "Milvus cannot search it until one is built"
            )
        metric = "COSINE"  # milvus-lite brute-forces an unindexed field with COSINE
        index_type = "none (brute force)"
    else:
        metric = str(c.index.get("metric_type", "")).upper()
    known = scores_of("milvus")
    if metric not in known:
        raise InputError(
            f"collection '{name}' in {c.where} uses metric '{metric}', which indexcheck "
            f"cannot check; supported: {', '.join(known)}"
        )
    c.metric, c.index_type = metric, index_type
    if not c.index or index_type in EXACT_INDEXES:
        c.approximate, c.exact_params = False, {}
        return
    nlist = c.index.get("nlist") or (c.index.get("params") or {}).get("nlist")
    if index_type in IVF_FLAT_INDEXES and (nlist or c.lite):
        # Lite: pymilvus 3 sends build params flattened and milvus-lite reads them only
        # from a JSON "params" entry, so nlist is not reported; faiss clamps an nprobe
        # above the segment's nlist, so MAX_NLIST probes every list.
        c.exact_params = {"nprobe": int(nlist) if nlist else MAX_NLIST}


def _lite_path(path: Path) -> Path:
    """Check a Milvus Lite data path before pymilvus would create one there."""
    path = path.absolute()
    if path.suffix != ".db":
        raise SpecError(
            f"'{path}' is neither an http(s):// URI nor a Milvus Lite path ending in .db"
        )
    if not path.exists():
        raise DataFileError(
            f"no Milvus Lite data at '{path}'; pass the path given to MilvusClient('....db')"
        )
    if not path.is_dir() or not (path / "collections").is_dir():
        raise DataFileError(
            f"'{path}' is not a milvus-lite 3 data folder (no collections/ inside); files "
            "written by milvus-lite 2.x need that version to read them"
        )
    return path


def _open_lite(
    path: Path, db_name: str, where: str, client_cls: Any
) -> tuple[Any, Callable[[], None] | None]:
    """Connect to Lite data through pymilvus's in-process server; returns (client, release)."""
    try:
        from milvus_lite.server_manager import server_manager_instance as manager
    except ImportError:
        raise MissingDependencyError("Milvus Lite", "milvus", "milvus-lite") from None

    key = str(path)
    running = getattr(manager, "_servers", {})
    started_here = key in _LITE_USERS or key not in running
    with library_noise():  # Lite logs its own traceback when the folder is locked
        client = MILVUS_ERRORS.call(
            "open Milvus Lite",
            lambda: client_cls(uri=key, db_name=db_name, timeout=TIMEOUT_S),
            where=where,
        )
    if not started_here:
        return client, None  # someone else in this process runs that server: leave it be
    _LITE_USERS[key] = _LITE_USERS.get(key, 0) + 1

    def release() -> None:
        _LITE_USERS[key] -= 1
        if _LITE_USERS[key] <= 0:
            del _LITE_USERS[key]
            with library_noise():
                manager.release_server(key)  # flushes nothing new; frees the folder lock

    return client, release
