"""Filtered search for the Chroma store: the portable filter as Chroma's ``where``.

A mixin of :class:`~indexcheck.stores.chroma.store.ChromaStore` (it uses the store's ``_get``
and ``_query_batch``): ``_native_filter`` translates once, making a fractional bound on an
integer field integral (Chroma truncates it otherwise), and ``_filtered_query_batch``
runs the store's ``collection.query`` with ``where=...``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ChromaFilter:
    _get: Any
    _query_batch: Any

    def _native_filter(self, node: Any) -> Any:
        """Chroma's ``where``; fractional bounds on integer fields made integral."""
        from ...filters import translate
        from ...filters.grammar import RANGE_OPS, iter_conds

        fractional = {
            c.field for c in iter_conds(node) if c.op in RANGE_OPS and isinstance(c.value, float)
        }
        return translate(node, "chroma", integer_fields=self._integer_fields(fractional))

    def _integer_fields(self, fields: set[str]) -> set[str]:
        """Of ``fields``, those whose every metadata value is an integer (one paged read)."""
        if not fields:
            return set()
        kinds: dict[str, set[type]] = {f: set() for f in fields}
        offset = 0
        while True:
            metas = self._get(limit=1000, offset=offset, include=["metadatas"]).get("metadatas")
            if not metas:
                break
            offset += len(metas)
            for m in metas:
                for f in fields:
                    if m and m.get(f) is not None:
                        kinds[f].add(type(m[f]))
        return {f for f, seen in kinds.items() if seen == {int}}

    def _filtered_query_batch(
        self, part: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """``collection.query(where=native)``: D float32 (q, k) distances, I object ids."""
        result: tuple[np.ndarray, np.ndarray] = self._query_batch(part, k, native)
        return result
