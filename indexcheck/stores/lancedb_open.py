"""LanceDB: opening a dataset directory and pinning a table (split from lancedb.py by job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..errors import InputError, MissingDependencyError, SpecError
from .base import StoreSpec
from .lancedb import _SPEC_HINT, LanceDBStore


def _import_lancedb() -> Any:
    try:
        import lancedb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("the lancedb store", "lancedb", "lancedb") from exc
    return lancedb


def _table_names(db: Any) -> list[str]:
    try:
        names: list[str] = []
        token = None
        while True:
            resp = db.list_tables(page_token=token) if token else db.list_tables()
            names.extend(str(n) for n in resp.tables)
            token = getattr(resp, "page_token", None)
            if not token:
                return names
    except AttributeError:
        return [str(n) for n in db.table_names()]


def open_lancedb(spec: StoreSpec, options: Any = None) -> LanceDBStore:
    """Open ``lancedb:PATH?table=T`` read-only, pinned to the table's current version."""
    values = LanceDBStore.check_params(spec.params)
    name = spec.require("table", _SPEC_HINT)
    location = spec.location.strip()
    if not location:
        raise SpecError(f"lancedb: the spec has no path; {_SPEC_HINT}")
    if "://" in location:
        raise SpecError(
            f"lancedb: only local dataset directories are supported, got '{location}'; {_SPEC_HINT}"
        )
    metric = values.get("metric")
    path = Path(location).expanduser()
    # lancedb.connect creates a missing directory: refuse before it can.
    if not path.exists():
        raise InputError(
            f"lancedb: no such directory '{path}'; pass the folder lancedb.connect() wrote "
            f"(it holds {name}.lance)"
        )
    if not path.is_dir():
        raise InputError(f"lancedb: '{path}' is a file; pass the LanceDB directory that holds it")
    params: dict[str, Any] = {
        "vector": spec.params.get("vector") or "vector",
        "id": spec.params.get("id") or "id",
        "text": spec.params.get("text") or "text",
        "text_given": bool(spec.params.get("text")),
        "metric": metric,
        "nprobes": values.get("nprobes"),
        "refine_factor": values.get("refine_factor"),
        "ef": values.get("ef"),
        "prefilter": values.get("prefilter"),
    }
    lancedb = _import_lancedb()
    try:
        db = lancedb.connect(str(path))
        existing = _table_names(db)
    except Exception as exc:
        raise InputError(
            f"lancedb: cannot open '{path}' ({type(exc).__name__}: {exc}); pass a LanceDB directory"
        ) from exc
    if name not in existing:
        listing = ", ".join(sorted(existing)[:50]) or "none"
        raise InputError(
            f"lancedb: no table '{name}' in '{path}'; existing tables: {listing}; pass one of "
            "them as ?table="
        )
    try:
        table = db.open_table(name)
        table.checkout(table.version)  # pin: later writes by others are not seen
    except Exception as exc:
        raise InputError(
            f"lancedb: cannot open table '{name}' in '{path}' ({type(exc).__name__}: {exc}); "
            "check the dataset files are complete"
        ) from exc
    keep = (
        "table",
        "vector",
        "id",
        "text",
        "metric",
        "nprobes",
        "refine_factor",
        "ef",
        "prefilter",
    )
    safe_spec = f"lancedb:{location}?" + urlencode(
        {k: spec.params[k] for k in keep if spec.params.get(k)}
    )
    return LanceDBStore(safe_spec, db, table, name, params)
