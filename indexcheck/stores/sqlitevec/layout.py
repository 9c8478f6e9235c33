"""sqlite-vec, layouts: which index a database file holds and where its parts are.

Three layouts are read with no hand-written mapping, sniffed from ``sqlite_master``:

- ``langchain``: LangChain's ``SQLiteVec`` writes a table ``T(rowid, text, metadata,
  text_embedding)`` and a ``vec0`` table ``T_vec(rowid, text_embedding float[d])`` filled
  by a trigger; ids are the rowids LangChain's ``add_texts`` returns;
- ``llm``: simonw/llm collections, ``collections(id, name, model)`` and ``embeddings
  (collection_id, id, embedding, content, metadata, ...)`` with float32 little-endian blobs;
- ``vec0``: a ``vec0`` table of the user's own; ids are its primary key (or rowid).

A spec naming nothing picks the one index the file holds, and refuses an ambiguous file
naming the option that picks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, SpecError
from ...filters.sqlitevec import quote_ident as q

#: sqlite-vec's ``distance_metric`` spellings -> ours (its default is l2)
_METRICS = {"l2": "l2", "cosine": "cosine", "l1": "l1"}
LLM_METRIC = "cosine_similarity"
_VECTOR = re.compile(r"^(\w+)\s+(float32|float|int8|bit)\s*\[\s*(\d+)\s*\](.*)$", re.I | re.S)
_OPTION = re.compile(r"(\w+)\s*=\s*(\w+)")


@dataclass(frozen=True)
class Layout:
    """Where one index lives in the file, and what it is."""

    kind: str  # "langchain", "llm" or "vec0"
    rows: str  # the table rows are paged over (side table, embeddings, vec0)
    vec: str | None  # the vec0 table searched (None for llm)
    vector: str  # the vector column
    key: str  # the column of ``vec`` naming a row: rowid or the primary key
    key_is_int: bool
    id: str  # the id column of ``rows``
    text: str | None
    metadata: str | None  # a JSON column
    dimension: int
    metric: str
    columns: dict[str, str] = field(default_factory=dict)  # vec0 metadata column -> type
    partition: frozenset[str] = frozenset()
    aux: tuple[str, ...] = ()
    collection: str | None = None
    collection_id: int | None = None
    model: str | None = None


@dataclass
class Vec0:
    """A parsed ``CREATE VIRTUAL TABLE ... USING vec0(...)``."""

    pk: str | None = None
    pk_is_int: bool = True
    vectors: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # type, d, metric
    columns: dict[str, str] = field(default_factory=dict)
    partition: set[str] = field(default_factory=set)
    aux: dict[str, str] = field(default_factory=dict)


def parse_vec0(sql: str) -> Vec0:
    """The columns of a vec0 table from its ``CREATE`` statement."""
    body = sql[sql.index("(") + 1 : sql.rindex(")")]
    out = Vec0()
    for part in (p.strip() for p in body.split(",")):
        words = part.split()
        if not words or ("=" in words[0] and len(words) == 1):
            continue  # a table option (chunk_size=...)
        m = _VECTOR.match(part)
        if m:
            opts = {k.lower(): v.lower() for k, v in _OPTION.findall(m.group(4))}
            metric = _METRICS.get(opts.get("distance_metric", "l2"), "unknown")
            out.vectors[m.group(1)] = (m.group(2).lower(), int(m.group(3)), metric)
            continue
        name, typ = words[0].strip('"`[]'), (words[1].lower() if len(words) > 1 else "")
        rest = " ".join(w.lower() for w in words[2:])
        if "primary key" in rest:
            if name.lower() != "rowid":
                out.pk, out.pk_is_int = name, typ.startswith("int")
        elif name.startswith("+"):
            out.aux[name[1:]] = typ
        else:
            out.columns[name] = "integer" if typ.startswith("int") else typ
            if "partition key" in rest:
                out.partition.add(name)
    return out


def _tables(conn: Any) -> dict[str, str]:
    return {str(n): str(s or "") for n, s in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table'")}  # fmt: skip


def _is_vec0(sql: str) -> bool:
    return bool(re.search(r"\busing\s+vec0\s*\(", sql, re.I))


def _columns(conn: Any, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({q(table)})")]


def _langchain_tables(tables: dict[str, str], conn: Any) -> list[str]:
    out = []
    for name, sql in tables.items():
        vec = f"{name}_vec"
        if not _is_vec0(sql) and vec in tables and _is_vec0(tables[vec]):
            if {"text", "metadata"} <= set(_columns(conn, name)):
                out.append(name)
    return out


def _llm_collections(tables: dict[str, str], conn: Any) -> list[tuple[int, str, str]]:
    if not {"collections", "embeddings"} <= set(tables):
        return []
    rows = conn.execute("SELECT id, name, model FROM collections ORDER BY id")
    return [(int(i), str(n), str(m)) for i, n, m in rows]


def sniff(conn: Any, params: dict[str, str], where: str) -> Layout:
    """The layout the spec's ``table=``/``collection=`` pick (or the file's only one)."""
    tables = _tables(conn)
    langchain = _langchain_tables(tables, conn)
    paired = {f"{t}_vec" for t in langchain}
    vec0 = [t for t, s in tables.items() if _is_vec0(s) and t not in paired]
    collections = _llm_collections(tables, conn)
    table, collection = params.get("table"), params.get("collection")
    if collection is not None:
        if table not in (None, "embeddings"):
            raise SpecError("sqlitevec: give ?table= or ?collection=, not both")
        return _llm(conn, collections, collection, params, where)
    if table is not None:
        if table in langchain or (table in paired and table.endswith("_vec")):
            base = table if table in langchain else table[: -len("_vec")]
            return _langchain(conn, base, tables[f"{base}_vec"], params)
        if table in vec0:
            return _vec0(conn, table, tables[table], params)
        if table == "embeddings" and collections:
            names = [c[1] for c in collections]
            if len(names) == 1:
                return _llm(conn, collections, names[0], params, where)
            raise SpecError(
                f"sqlitevec: '{where}' holds {len(names)} llm collections "
                f"({', '.join(names)}); pass ?collection=NAME"
            )
        if table in tables:
            raise InputError(
                f"sqlitevec: table '{table}' in '{where}' is not a vec0 virtual table nor "
                "LangChain's SQLiteVec table; pass the vec0 table as ?table="
            )
        known = sorted([*langchain, *vec0])
        raise InputError(
            f"sqlitevec: no table '{table}' in '{where}'; sqlite-vec tables there: "
            f"{', '.join(known) or 'none'}; pass one of them as ?table="
        )
    found = [f"table={t}" for t in langchain + vec0] + [f"collection={c[1]}" for c in collections]
    if not found:
        raise InputError(
            f"sqlitevec: '{where}' holds no sqlite-vec index (no vec0 table, no llm "
            "collection); pass the database file the application wrote"
        )
    if len(found) > 1:
        raise SpecError(
            f"sqlitevec: '{where}' holds {len(found)} indexes ({', '.join(found)}); pass "
            "one as ?table= or ?collection="
        )
    return sniff(conn, dict(params, **dict([found[0].split("=", 1)])), where)


def _pick_vector(vec: Vec0, table: str, asked: str | None) -> tuple[str, int, str]:
    if asked is None and len(vec.vectors) != 1:
        raise SpecError(
            f"sqlitevec: vec0 table '{table}' has {len(vec.vectors)} vector columns "
            f"({', '.join(vec.vectors) or 'none'}); pass ?vector=COLUMN"
        )
    name = asked or next(iter(vec.vectors))
    if name not in vec.vectors:
        raise InputError(
            f"sqlitevec: vec0 table '{table}' has no vector column '{name}'; vector "
            f"columns: {', '.join(vec.vectors)}; pass ?vector=COLUMN"
        )
    typ, dim, metric = vec.vectors[name]
    if typ not in ("float", "float32"):
        raise InputError(
            f"sqlitevec: column '{name}' of '{table}' holds {typ} vectors; indexcheck reads "
            "float32 vectors only"
        )
    return name, dim, metric


def _checked_metric(metric: str, params: dict[str, str], where: str) -> str:
    asked = params.get("metric")
    if asked is not None and asked != metric:
        raise SpecError(
            f"sqlitevec: {where} measures '{metric}' but the spec asks ?metric={asked}; "
            f"drop ?metric= or set it to {metric}"
        )
    return metric


def _column(cols: list[str], asked: str | None, default: str | None, what: str, t: str) -> Any:
    if asked is not None:
        if asked not in cols:
            raise InputError(
                f"sqlitevec: table '{t}' has no {what} column '{asked}'; columns: "
                f"{', '.join(cols)}; pass ?{what}=COLUMN"
            )
        return asked
    return default if default in cols else None


def _langchain(conn: Any, base: str, vec_sql: str, params: dict[str, str]) -> Layout:
    vec = parse_vec0(vec_sql)
    name, dim, metric = _pick_vector(vec, f"{base}_vec", params.get("vector"))
    cols = _columns(conn, base)
    return Layout(
        kind="langchain", rows=base, vec=f"{base}_vec", vector=name, key="rowid",
        key_is_int=True, id=_column(cols + ["rowid"], params.get("id"), "rowid", "id", base),
        text=_column(cols, params.get("text"), "text", "text", base),
        metadata=_column(cols, params.get("metadata"), "metadata", "metadata", base),
        dimension=dim, metric=_checked_metric(metric, params, f"'{base}_vec'"),
    )  # fmt: skip


def _vec0(conn: Any, table: str, sql: str, params: dict[str, str]) -> Layout:
    vec = parse_vec0(sql)
    name, dim, metric = _pick_vector(vec, table, params.get("vector"))
    key = vec.pk or "rowid"
    cols = [key, *vec.columns, *vec.aux]
    text_default = next((c for c in ("text", "content") if c in vec.aux or c in vec.columns), None)
    return Layout(
        kind="vec0", rows=table, vec=table, vector=name, key=key, key_is_int=vec.pk_is_int,
        id=_column(cols, params.get("id"), key, "id", table),
        text=_column(cols, params.get("text"), text_default, "text", table),
        metadata=_column(cols, params.get("metadata"), None, "metadata", table),
        dimension=dim, metric=_checked_metric(metric, params, f"'{table}'"),
        columns=dict(vec.columns), partition=frozenset(vec.partition), aux=tuple(vec.aux),
    )  # fmt: skip


def _llm(
    conn: Any, collections: list[tuple[int, str, str]], name: str, params: dict[str, str],
    where: str,
) -> Layout:  # fmt: skip
    if not collections and "embeddings" not in _tables(conn):
        raise InputError(
            f"sqlitevec: '{where}' holds no llm collections (no 'collections' and "
            "'embeddings' tables); pass ?table= for a vec0 table"
        )
    match = [c for c in collections if c[1] == name]
    if not match:
        listing = ", ".join(c[1] for c in collections) or "none"
        raise InputError(
            f"sqlitevec: no llm collection '{name}' in '{where}'; collections: {listing}; "
            "pass one of them as ?collection="
        )
    cid, _, model = match[0]
    first = conn.execute(
        "SELECT length(embedding) FROM embeddings WHERE collection_id = ? "
        "AND embedding IS NOT NULL LIMIT 1", (cid,)).fetchall()  # fmt: skip
    dim = int(first[0][0]) // 4 if first and first[0][0] else 0
    cols = _columns(conn, "embeddings")
    return Layout(
        kind="llm", rows="embeddings", vec=None, vector="embedding", key="id",
        key_is_int=False, id="id",
        text=_column(cols, params.get("text"), "content", "text", "embeddings"),
        metadata=_column(cols, params.get("metadata"), "metadata", "metadata", "embeddings"),
        dimension=dim, metric=_checked_metric(LLM_METRIC, params, f"llm collection '{name}'"),
        collection=name, collection_id=cid, model=model,
    )  # fmt: skip
