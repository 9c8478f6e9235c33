"""The content key every pairing by text uses: xxh3-128 of the normalised chunk text.

diff-index pairs old and new rows by it, check-index and diagnose pair foreign ids by it, and
trace readers pair documents that carry no id by it; so it lives below all of them.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np
import xxhash


def normalize_text(text: str) -> str:
    """The form that is hashed: NFC, ``\\n`` line endings, no outer whitespace."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n")).strip()


def content_key(text: str) -> tuple[int, int]:
    """xxh3-128 of the normalised UTF-8 text as two unsigned 64-bit halves."""
    v = xxhash.xxh3_128_intdigest(normalize_text(text).encode("utf-8"))
    return v >> 64, v & 0xFFFFFFFFFFFFFFFF


#: what ``str.strip()`` removes from an ASCII string
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def content_keys(texts: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`content_key` of every text (a list of str, or an Arrow string array) as two
    uint64 arrays, in batches: ASCII texts are normalised by Arrow kernels (``\r\n`` ->
    ``\n``, then ``str.strip``'s ASCII whitespace trimmed; NFC changes no ASCII text) and
    hashed straight from the Arrow data buffer; any other text goes through
    :func:`normalize_text`. The keys are those of :func:`content_key`, bit for bit."""
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
    offsets = np.frombuffer(norm.buffers()[1], dtype=np.int32)[norm.offset : norm.offset + n + 1]
    data = norm.buffers()[2]
    view = memoryview(data) if data is not None else memoryview(b"")
    # one digest a text, the loop in C (map over slices): no Python frame runs per text
    parts = map(view.__getitem__, map(slice, offsets[:-1].tolist(), offsets[1:].tolist()))
    out = b"".join(map(xxhash.xxh3_128_digest, parts))
    keys = np.frombuffer(out, dtype=">u8").reshape(n, 2).astype(np.uint64)
    for i in slow.tolist():
        keys[i] = content_key(arr[i].as_py())
    return keys[:, 0].copy(), keys[:, 1].copy()


__all__ = ["content_key", "content_keys", "normalize_text"]
