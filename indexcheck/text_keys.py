"""The content key every pairing by text uses: MD5 of the normalised chunk text.

MD5 is no safeguard here, only a 128-bit key that is the same everywhere: one run pairs by it
and nothing keeps it. It is the key because DuckDB computes it over a whole Arrow column
outside the GIL (``md5_number``), ten times as fast as a call a text; :func:`content_key`
gives the same two halves from :mod:`hashlib`.

diff-index pairs old and new rows by it, check-index and diagnose pair foreign ids by it, and
trace readers pair documents that carry no id by it; so it lives below all of them.
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
from operator import methodcaller
from typing import Any

import numpy as np

#: texts hashed in one DuckDB query at the least (a query costs about 2 ms); fewer are hashed
#: one :mod:`hashlib` call a text
DUCKDB_MIN = 16384
_MASK = (1 << 64) - 1
_local = threading.local()


def normalize_text(text: str) -> str:
    """The form that is hashed: NFC, ``\\n`` line endings, no outer whitespace."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n")).strip()


def content_key(text: str) -> tuple[int, int]:
    """MD5 of the normalised UTF-8 text, read as a little-endian 128-bit number (as DuckDB's
    ``md5_number``), as two unsigned 64-bit halves: (high, low)."""
    digest = hashlib.md5(normalize_text(text).encode("utf-8"), usedforsecurity=False).digest()
    v = int.from_bytes(digest, "little")
    return v >> 64, v & _MASK


#: what ``str.strip()`` removes from an ASCII string
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def content_keys(texts: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`content_key` of every text (a list of str, or an Arrow string array) as two
    uint64 arrays, in batches: ASCII texts are normalised by Arrow kernels (``\r\n`` ->
    ``\n``, then ``str.strip``'s ASCII whitespace trimmed; NFC changes no ASCII text) and
    hashed straight from the Arrow data buffer; any other text goes through
    :func:`normalize_text`. The keys are those of :func:`content_key`, bit for bit: from one
    DuckDB query for DUCKDB_MIN texts or more, else one :mod:`hashlib` call a text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    n = len(arr)
    if arr.null_count:
        raise TypeError("content_keys: a text is null")
    # the positions of the texts that are not ASCII (a boolean array's to_numpy costs
    # milliseconds a block: its bits are unpacked in Python objects)
    slow = pc.indices_nonzero(pc.invert(pc.string_is_ascii(arr))).to_numpy()
    norm = pc.utf8_trim(pc.replace_substring(arr, "\r\n", "\n"), characters=_ASCII_SPACE)
    if n >= DUCKDB_MIN:
        high, low = _duckdb_md5(norm)
    else:
        at = norm.offset
        offsets = np.frombuffer(norm.buffers()[1], dtype=np.int32)[at : at + n + 1]
        data = norm.buffers()[2]
        view = memoryview(data) if data is not None else memoryview(b"")
        # one digest a text, the loop in C (map over slices): no Python frame runs per text
        parts = map(view.__getitem__, map(slice, offsets[:-1].tolist(), offsets[1:].tolist()))
        md5 = map(methodcaller("digest"), map(_md5, parts))
        halves = np.frombuffer(b"".join(md5), dtype="<u8").reshape(n, 2)
        high, low = halves[:, 1].copy(), halves[:, 0].copy()
    keys = np.stack([high, low], axis=1)
    for i in slow.tolist():
        keys[i] = content_key(arr[i].as_py())
    return keys[:, 0].copy(), keys[:, 1].copy()


def _md5(data: Any) -> Any:
    return hashlib.md5(data, usedforsecurity=False)


def _duckdb_md5(texts: Any) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) uint64 halves of DuckDB's ``md5_number`` of each text, in one query on
    this thread's own connection (DuckDB runs it without the GIL)."""
    import duckdb
    import pyarrow as pa

    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect(config={"threads": 1})
    rel = con.from_arrow(pa.table({"t": texts})).project("md5_number(t) AS k")
    out = rel.project(
        "(k >> 64)::UBIGINT AS high, (k & 18446744073709551615::UHUGEINT)::UBIGINT AS low"
    ).fetchnumpy()
    return np.asarray(out["high"], dtype=np.uint64), np.asarray(out["low"], dtype=np.uint64)


__all__ = ["content_key", "content_keys", "normalize_text"]
