"""Portable filter -> the ``filter`` of MongoDB Atlas's ``$vectorSearch`` (MQL).

Atlas takes ``$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $not $nor`` in the
pre-filter, on paths the vector index declares as ``filter`` fields only (any other path
fails the query: "Path 'x' needs to be indexed as filter"), so a field the index does not
declare is refused here, before any query, naming the operator and the fix. MQL's ``$ne``
and ``$nin`` match documents that lack the field (``Missing.INCLUDE``). The portable
``$exists`` means "there and not null", which MQL spells ``{$ne: null}`` (``$exists: true``
alone would also keep nulls), and its negation ``{$eq: null}`` (missing or null).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node, Op


def _cond(c: Cond, prefix: str, paths: Collection[str] | None, index: str) -> dict[str, Any]:
    path = prefix + c.field
    if paths is not None and path not in paths:
        declared = ", ".join(sorted(paths)) or "none"
        raise cannot(
            "mongodb", c, f"'{path}' is not a filter field of the vector index '{index}' "
            f"(declared: {declared}), and Atlas refuses the query; add "
            f'{{"type": "filter", "path": "{path}"}} to the index definition',
        )  # fmt: skip
    if c.op is Op.EXISTS:
        return {path: {"$ne": None} if c.value else {"$eq": None}}
    if c.op in LIST_OPS:
        assert isinstance(c.value, tuple)
        return {path: {c.op.value: list(c.value)}}
    return {path: {c.op.value: c.value}}


def to_mongodb(
    node: Node, prefix: str = "", filter_paths: Collection[str] | None = None, index: str = ""
) -> dict[str, Any]:
    """The ``$vectorSearch.filter`` document for ``node``; ``prefix`` is prepended to every
    field (``metadata.`` for LlamaIndex's layout), ``filter_paths`` are the index's declared
    filter paths (None: not checked)."""
    if isinstance(node, Cond):
        return _cond(node, prefix, filter_paths, index)
    items = [to_mongodb(i, prefix, filter_paths, index) for i in node.items]
    if len(items) == 1:
        return items[0]
    return {"$and" if isinstance(node, And) else "$or": items}
