"""What a FAISS index keeps of the vectors it was given: its codec, read from its type.

A FAISS index searches codes and ``reconstruct`` decodes them: the vectors as added for a
Flat index, an approximation for PQ/SQ/LSH/additive codes. The index is walked through its
wrappers (IDMap, PreTransform, Refine, the storage of HNSW/NSG, the lists of IVF) down to the
codec. :func:`describe_faiss` returns a dict:

- ``kind``: ``none`` | ``pq`` | ``sq`` | ``binary`` | ``additive`` | ``unknown`` (what the
  search scores with); ``lossy``: whether that codec (or a reducing transform) loses data;
- ``vectors_read_back``: ``original`` (a Flat codec, or an ``IndexRefineFlat`` with a flat
  refine index), ``compressed`` or ``unknown``;
- ``codec``: one line, e.g. ``"PQ 16x4 bits (8 bytes per vector)"``; ``layers``: the class
  names from the outside in.
"""

from __future__ import annotations

from typing import Any

#: kinds whose codes lose information about the vectors
LOSSY_KINDS = ("pq", "sq", "binary", "additive")


def _sq_name(qtype: int) -> str:
    import faiss

    for name in dir(faiss.ScalarQuantizer):
        if name.startswith("QT_") and getattr(faiss.ScalarQuantizer, name) == qtype:
            return name[3:]
    return str(qtype)


def _codec_of(index: Any) -> tuple[str, str] | None:
    """(kind, codec line) of a leaf index, or None when it is a wrapper."""
    import faiss

    d = int(index.d)
    raw = 4 * d
    if isinstance(index, faiss.IndexFlat | faiss.IndexIVFFlat):
        return "none", f"flat float32 ({raw} bytes per vector)"
    pq = getattr(index, "pq", None)
    if isinstance(pq, faiss.ProductQuantizer):
        m, nbits = int(pq.M), int(pq.nbits)
        return "pq", f"PQ {m}x{nbits} bits ({(m * nbits + 7) // 8} bytes per vector, from {raw})"
    sq = getattr(index, "sq", None)
    if isinstance(sq, faiss.ScalarQuantizer):
        # no scalar quantizer is exact: fp16/bf16 round, the 8-bit ones clip and round
        size = int(sq.code_size)
        return (
            "sq",
            f"scalar quantizer {_sq_name(int(sq.qtype))} ({size} bytes per vector, from {raw})",
        )
    aq = getattr(index, "aq", None)
    if isinstance(aq, faiss.AdditiveQuantizer):
        name = next((n for n in ("rq", "lsq", "prq", "plsq") if hasattr(index, n)), "aq")
        m, nbits = int(aq.M), int(aq.nbits.at(0))
        return (
            "additive",
            f"additive quantizer {name.upper()} {m}x{nbits} bits "
            f"({int(aq.code_size)} bytes per vector)",
        )
    if isinstance(index, faiss.IndexLSH):
        return "binary", f"LSH {int(index.nbits)} bits ({(int(index.nbits) + 7) // 8} bytes)"
    return None


def _children(index: Any) -> tuple[list[str], list[Any], str | None]:
    """(transform notes, the wrapped indexes to walk, what reconstruct reads from)."""
    import faiss

    if isinstance(index, faiss.IndexIDMap | faiss.IndexIDMap2):
        return [], [faiss.downcast_index(index.index)], None
    if isinstance(index, faiss.IndexPreTransform):
        notes = []
        chain: Any = index.chain  # a faiss std::vector (size/at), typed as a list
        for i in range(chain.size()):
            vt = faiss.downcast_VectorTransform(chain.at(i))
            name = type(vt).__name__
            if int(vt.d_out) < int(vt.d_in):
                name += f" {int(vt.d_in)}->{int(vt.d_out)} dims (lossy)"
            notes.append(name)
        return notes, [faiss.downcast_index(index.index)], None
    if isinstance(index, faiss.IndexRefine):
        base = faiss.downcast_index(index.base_index)
        refine = faiss.downcast_index(index.refine_index)
        return [], [base, refine], "refine"
    storage = getattr(index, "storage", None)
    if storage is not None and isinstance(index, faiss.IndexHNSW | faiss.IndexNSG):
        return [], [faiss.downcast_index(storage)], None
    return [], [], None


def describe_faiss(index: Any) -> dict[str, Any]:
    """The codec of a FAISS index and whether ``reconstruct`` gives back the vectors as
    added (see the module docstring for the keys)."""
    layers: list[str] = []
    notes: list[str] = []
    node = index
    read_back: str | None = None
    while True:
        layers.append(type(node).__name__)
        codec = _codec_of(node)
        if codec is not None:
            kind, line = codec
            break
        extra, kids, reads = _children(node)
        notes.extend(extra)
        if not kids:
            kind, line = "unknown", f"{type(node).__name__} (a codec indexcheck does not know)"
            break
        if reads == "refine" and len(kids) == 2:
            refine = describe_faiss(kids[1])
            read_back = "original" if refine["kind"] == "none" else "compressed"
            layers.append(f"refine: {' > '.join(refine['layers'])}")
        node = kids[0]
    reduced = any("(lossy)" in n for n in notes)
    lossy: bool | None = None if kind == "unknown" else (kind in LOSSY_KINDS or reduced)
    if read_back is None:
        read_back = "unknown" if lossy is None else ("compressed" if lossy else "original")
    return {
        "kind": kind,
        "lossy": lossy,
        "vectors_read_back": read_back,
        "codec": line + (f"; transforms: {', '.join(notes)}" if notes else ""),
        "layers": layers,
    }


__all__ = ["LOSSY_KINDS", "describe_faiss"]
