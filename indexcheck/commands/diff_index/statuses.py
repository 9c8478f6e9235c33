"""diff-index's statuses as findings: which are errors, which a spilled row's flag gives,
and what each finding says."""

from __future__ import annotations

from .hash_join import Flag
from .result import DiffStatus

ERRORS = (
    DiffStatus.SHIFT,
    DiffStatus.MODEL_CHANGE,
    DiffStatus.VECTOR_CHANGED,
    DiffStatus.MISSING_VECTOR,
    DiffStatus.ORPHAN_VECTOR,
    DiffStatus.DIMENSION_MISMATCH,
    DiffStatus.NON_FINITE,
    DiffStatus.ZERO_VECTOR,
)
_BY_FLAG = {
    Flag.MISSING: DiffStatus.MISSING_VECTOR,
    Flag.DIMENSION: DiffStatus.DIMENSION_MISMATCH,
    Flag.NON_FINITE: DiffStatus.NON_FINITE,
    Flag.ZERO: DiffStatus.ZERO_VECTOR,
    Flag.ORPHAN: DiffStatus.ORPHAN_VECTOR,
}
MESSAGES = {
    DiffStatus.SHIFT: "unchanged texts whose new vector is the old vector of another text: "
    "vectors were attached by position; rebuild attaching vectors by text hash",
    DiffStatus.MODEL_CHANGE: "most unchanged texts moved and none holds another text's "
    "vector: the new index was built with another model (or settings)",
    DiffStatus.VECTOR_CHANGED: "unchanged texts whose vector moved and matches no other "
    "text; re-embed these chunks",
    DiffStatus.MISSING_VECTOR: "no vector in the new index for these chunks; index them",
    DiffStatus.ORPHAN_VECTOR: "vectors in the new index have no chunk in --chunks-new; "
    "delete them or add their chunks",
    DiffStatus.DIMENSION_MISMATCH: "new vectors whose length differs from the old index's; "
    "re-embed them with the index's model",
    DiffStatus.NON_FINITE: "new vectors contain NaN or infinity; re-embed these chunks",
    DiffStatus.ZERO_VECTOR: "new vectors are all zeros; re-embed these chunks",
    DiffStatus.ADDED: "texts only in the new index",
    DiffStatus.CHANGED: "ids whose text changed",
    DiffStatus.REMOVED: "texts only in the old index",
    DiffStatus.UNCHECKED: "old vectors unusable (missing, NaN, zero or wrong length): these "
    "pairs could not be compared",
    DiffStatus.DUPLICATE_TEXT: "new chunks repeat an earlier chunk's text; a cache keyed by "
    "position misaligns every vector after the first repeat",
}
