"""LanceDB, opening: the dataset directory, one table pinned to its current version, and
what the table is (its columns, vector dimension, vector index and distance type).

This module knows nothing of reading rows or searching (``lancedb.py`` does both, over the
:class:`LanceTable` built here); it also holds the SDK's error table, which both use.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ...errors import BackendUnavailableError, InputError, MissingDependencyError, SpecError
from ...remote.translate import ErrorMap, Rule, doing
from ..base import StoreSpec

DEFAULT_METRIC = "l2"
SPEC_HINT = "e.g. lancedb:./lancedb?table=chunks"
#: the spec keys kept in the printed spec, in this order
_SPEC_KEYS = (
    "table", "vector", "id", "text", "metric", "nprobes", "refine_factor", "ef", "prefilter"
)  # fmt: skip

#: lancedb and pyarrow raise many types for unreadable data: all mean the dataset
LANCEDB_ERRORS = ErrorMap(
    Rule(
        Exception,
        InputError,
        "lancedb: cannot open '{path}' ({name}: {text}); pass a LanceDB directory",
        when=doing("connect"),
    ),
    Rule(
        Exception,
        InputError,
        "lancedb: cannot open table '{table}' in '{path}' ({name}: {text}); check the "
        "dataset files are complete",
        when=doing("open the table"),
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "lancedb {doing} on table '{table}' failed ({name}: {text}); check the dataset "
        "files are complete and readable",
    ),
    service="lancedb",
)


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def is_vector_type(t: Any) -> bool:
    import pyarrow as pa

    if not (pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    return bool(pa.types.is_floating(t.value_type))


@dataclass
class LanceTable:
    """An open, pinned LanceDB table and what the store needs to know about it."""

    spec: str  # safe to print
    db: Any
    table: Any
    name: str
    vector: str
    id: str
    text: str | None
    id_is_int: bool
    fixed: bool  # fixed-size-list vectors (only those can be searched)
    dimension: int
    index: dict[str, Any] | None
    metric: str
    metric_source: str  # "index", "spec" or "lancedb default"
    search: dict[str, int | None]  # nprobes, refine_factor, ef
    prefilter: str | None


def _import_lancedb() -> Any:
    try:
        import lancedb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("the lancedb store", "lancedb", "lancedb") from exc
    # lancedb warns in every forked child (a worker pool, a plugin's subprocess) that its
    # runtime was reset; indexcheck never uses a table across a fork, so it is noise here
    warnings.filterwarnings(
        "ignore", message="lancedb fork support is experimental", category=RuntimeWarning
    )
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


def open_table(spec: StoreSpec, values: dict[str, Any]) -> LanceTable:
    """Open ``lancedb:PATH?table=T`` read-only, pinned to the table's current version;
    ``values`` are the spec's checked options."""
    name = spec.require("table", SPEC_HINT)
    location = spec.location.strip()
    if not location:
        raise SpecError(f"lancedb: the spec has no path; {SPEC_HINT}")
    if "://" in location:
        raise SpecError(
            f"lancedb: only local dataset directories are supported, got '{location}'; {SPEC_HINT}"
        )
    path = Path(location).expanduser()
    # lancedb.connect creates a missing directory: refuse before it can.
    if not path.exists():
        raise InputError(
            f"lancedb: no such directory '{path}'; pass the folder lancedb.connect() wrote "
            f"(it holds {name}.lance)"
        )
    if not path.is_dir():
        raise InputError(f"lancedb: '{path}' is a file; pass the LanceDB directory that holds it")
    lancedb = _import_lancedb()
    call = partial(LANCEDB_ERRORS.call, table=name, path=str(path))
    db = call("connect", lambda: lancedb.connect(str(path)))
    existing = call("connect", lambda: _table_names(db))
    if name not in existing:
        listing = ", ".join(sorted(existing)[:50]) or "none"
        raise InputError(
            f"lancedb: no table '{name}' in '{path}'; existing tables: {listing}; pass one of "
            "them as ?table="
        )

    def pinned() -> Any:
        table = db.open_table(name)
        table.checkout(table.version)  # pin: later writes by others are not seen
        return table

    table = call("open the table", pinned)
    safe_spec = f"lancedb:{location}?" + urlencode(
        {k: spec.params[k] for k in _SPEC_KEYS if spec.params.get(k)}
    )
    return _describe(table, name, spec, values, safe_spec, db)


def _describe(
    table: Any, name: str, spec: StoreSpec, values: dict[str, Any], safe_spec: str, db: Any
) -> LanceTable:
    """Check the columns the spec names and read the dimension, index and metric."""
    import pyarrow as pa

    call = partial(LANCEDB_ERRORS.call, table=name, path="")
    vcol = spec.params.get("vector") or "vector"
    idcol = spec.params.get("id") or "id"
    text: str | None = spec.params.get("text") or "text"
    schema = table.schema
    names = list(schema.names)
    if idcol not in names:
        raise InputError(
            f"lancedb table '{name}' has no id column '{idcol}'; columns: "
            f"{', '.join(names)}; pass ?id=COLUMN"
        )
    if vcol not in names:
        vec_like = [f.name for f in schema if is_vector_type(f.type)]
        raise InputError(
            f"lancedb table '{name}' has no vector column '{vcol}'; vector columns: "
            f"{', '.join(vec_like) or 'none'}; pass ?vector=COLUMN"
        )
    vtype = schema.field(vcol).type
    if not is_vector_type(vtype):
        raise InputError(
            f"lancedb column '{vcol}' of table '{name}' is {vtype}, not a list of "
            "floats; pass ?vector=COLUMN naming the embedding column"
        )
    if text not in names:
        if spec.params.get("text"):
            raise InputError(
                f"lancedb table '{name}' has no text column '{text}'; columns: "
                f"{', '.join(names)}; pass ?text=COLUMN or leave it out"
            )
        text = None
    if pa.types.is_fixed_size_list(vtype):
        dimension = int(vtype.list_size)
    else:
        first = call(
            "scan",
            lambda: (
                table.search()
                .where(f"{quote_ident(vcol)} IS NOT NULL")
                .select([vcol])
                .limit(1)
                .to_arrow()
            ),
        )
        dimension = len(first.column(0)[0].as_py()) if first.num_rows else 0
    index = _find_index(table, vcol, call)
    index_metric = index.get("distance_type") if index else None
    asked = values.get("metric")
    if index_metric and asked and asked != index_metric:
        raise SpecError(
            f"lancedb: the vector index '{index['name'] if index else ''}' on '{vcol}' was "
            f"built with distance type '{index_metric}' but the spec asks ?metric={asked}; "
            f"drop ?metric= or set it to {index_metric}"
        )
    if index_metric:
        metric, source = str(index_metric), "index"
    elif asked:
        metric, source = asked, "spec"
    else:
        metric, source = DEFAULT_METRIC, "lancedb default"
    return LanceTable(
        spec=safe_spec,
        db=db,
        table=table,
        name=name,
        vector=vcol,
        id=idcol,
        text=text,
        id_is_int=pa.types.is_integer(schema.field(idcol).type),
        fixed=bool(pa.types.is_fixed_size_list(vtype)),
        dimension=dimension,
        index=index,
        metric=metric,
        metric_source=source,
        search={k: values.get(k) for k in ("nprobes", "refine_factor", "ef")},
        prefilter=values.get("prefilter"),
    )


def _find_index(table: Any, vcol: str, call: Callable[..., Any]) -> dict[str, Any] | None:
    """The vector index on ``vcol`` (name, type, distance type, uuid, rows), or None."""
    for idx in call("list_indices", table.list_indices):
        if list(idx.columns) != [vcol]:
            continue
        stats = call("index_stats", partial(table.index_stats, idx.name))
        dist = getattr(stats, "distance_type", None) if stats is not None else None
        if not dist:
            continue  # a scalar index on the column
        return {
            "name": idx.name,
            "index_type": getattr(stats, "index_type", str(idx.index_type)),
            "distance_type": str(dist).lower(),
            "uuid": getattr(idx, "index_uuid", None),
            "num_indexed_rows": getattr(stats, "num_indexed_rows", None),
            "num_unindexed_rows": getattr(stats, "num_unindexed_rows", None),
        }
    return None
