"""Production traces as answers: OpenInference/Phoenix, OTLP (OpenInference or OTel GenAI
spans), Langfuse and LangSmith exports, read into the rows of indexcheck's answers file.

:func:`read_traces` reads one export (the format sniffed by :func:`sniff_format`, or named)
into one ``{id, question, answer, contexts}`` row per trace, with ``where`` naming its file,
line and span or run. A document that carries no id (LangChain's OpenInference instrumentor
records only content and metadata) is paired to a chunk by content hash, the same
normalised xxh3-128 as diff-index
(:func:`indexcheck.commands.diff_index.hash_join.content_key`), when chunks are given; one
that still cannot be named is a DataFileError naming the missing field and its span (exit 2).
Nothing here prints: warnings (scores absent, documents paired by content) are returned in
:class:`TraceRead`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....errors import DataFileError
from ....safety.textsafe import visible
from ...corpus import Corpus
from .model import TraceAnswer, TraceDoc
from .sniff import FORMATS, check_named, sniff_format


@dataclass
class TraceRead:
    """Rows for the answers reader (``(where, row)``) and what the export said about itself."""

    format: str
    rows: list[tuple[str, dict[str, Any]]]
    documents: int = 0
    with_score: int = 0
    paired_by_content: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def scores(self) -> str:
        """``present`` (every document has a score), ``absent`` (none), ``partial``."""
        if self.with_score == self.documents:
            return "present" if self.documents else "absent"
        return "absent" if self.with_score == 0 else "partial"

    def summary(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "traces": len(self.rows),
            "documents": self.documents,
            "scores": self.scores,
            "documents_with_score": self.with_score,
            "paired_by_content": self.paired_by_content,
            "warnings": list(self.warnings),
        }


def _readers() -> dict[str, Any]:
    from .langfuse import read_langfuse
    from .langsmith import read_langsmith
    from .openinference import read_openinference
    from .otlp import read_otlp

    return {
        "openinference": read_openinference,
        "otlp": read_otlp,
        "langfuse": read_langfuse,
        "langsmith": read_langsmith,
    }


class _Pairing:
    """Chunk ids by normalised content hash (first id of a repeated text), and by id."""

    def __init__(self, chunks: Corpus) -> None:
        from ...text_keys import content_key

        self.key = content_key
        self.by_key: dict[tuple[int, int], list[str]] = {}
        for cid, text in zip(chunks.ids, chunks.texts, strict=True):
            self.by_key.setdefault(content_key(text), []).append(cid)
        self.text_of = dict(zip(chunks.ids, chunks.texts, strict=True))
        self.source = chunks.source or "the chunks file"
        self.ambiguous = 0

    def id_for(self, text: str) -> str | None:
        ids = self.by_key.get(self.key(text))
        if not ids:
            return None
        self.ambiguous += len(ids) > 1
        return ids[0]


def _context(doc: TraceDoc, rank: int, pairing: _Pairing | None) -> tuple[dict[str, Any], bool]:
    """The ``contexts`` item of one document, and whether it was paired by content."""
    cid, text, paired = doc.id, doc.text, False
    if cid is None and text is None:
        raise DataFileError(
            f"{doc.where}: {doc.id_field} and {doc.text_field} are both missing, so the "
            "document cannot be named; record document ids or contents in the traces"
        )
    if cid is None:
        assert text is not None
        if pairing is None:
            raise DataFileError(
                f"{doc.where}: {doc.id_field} is missing; pass --chunks (the chunks file the "
                "index was built from) to pair the document to a chunk by content hash"
            )
        cid = pairing.id_for(text)
        if cid is None:
            raise DataFileError(
                f"{doc.where}: {doc.id_field} is missing and {doc.text_field} matches no "
                f"chunk of {pairing.source} by content hash; pass the chunks file the index "
                "was built from"
            )
        paired = True
    if text is None:
        if pairing is None or cid not in pairing.text_of:
            raise DataFileError(
                f"{doc.where}: {doc.text_field} is missing; pass --chunks (holding chunk "
                f"'{visible(cid)}') to take the text the model received from the chunks file"
            )
        text = pairing.text_of[cid]
    item: dict[str, Any] = {"id": cid, "text": text, "rank": rank}
    if doc.score is not None:
        item["score"] = doc.score
    return item, paired


def _row(t: TraceAnswer, pairing: _Pairing | None, read: TraceRead) -> dict[str, Any]:
    if not t.question:
        raise DataFileError(
            f"{t.where}: the trace records no question (its root has no input and no "
            "retriever records a query); export the traces with inputs"
        )
    if t.answer is None:
        raise DataFileError(
            f"{t.where}: the trace records no answer (neither its root nor an LLM span or run "
            "has an output); export the traces with outputs"
        )
    contexts = []
    for rank, doc in enumerate(t.docs, 1):
        item, paired = _context(doc, rank, pairing)
        contexts.append(item)
        read.documents += 1
        read.with_score += "score" in item
        read.paired_by_content += paired
    return {"id": t.id, "question": t.question, "answer": t.answer, "contexts": contexts}


def read_traces(path: Path, fmt: str | None = None, chunks: Corpus | None = None) -> TraceRead:
    """Read a trace export into answers rows; ``fmt`` None sniffs it. Raises DataFileError."""
    fmt = fmt or sniff_format(path)
    readers = _readers()
    if fmt not in readers:
        raise DataFileError(
            f"unknown trace format '{visible(fmt)}'; use one of {', '.join(FORMATS)}"
        )
    traces = readers[fmt](path)
    pairing = _Pairing(chunks) if chunks is not None else None
    read = TraceRead(fmt, [])
    read.rows = [(t.where, _row(t, pairing, read)) for t in traces]
    name = path.name
    if read.paired_by_content:
        read.warnings.append(
            f"{name}: {read.paired_by_content} of {read.documents} documents carry no id and "
            "were paired to chunks by content hash"
        )
    if pairing is not None and pairing.ambiguous:
        read.warnings.append(
            f"{name}: {pairing.ambiguous} documents match several chunks of the same text; "
            "each was paired to the first"
        )
    if read.documents and read.scores == "absent":
        why = ""
        if read.paired_by_content and fmt in ("openinference", "otlp"):
            why = " (LangChain's OpenInference instrumentor records none)"
        read.warnings.append(
            f"{name}: the traces record no document scores{why}; scores are absent, so "
            "they cannot calibrate a threshold"
        )
    elif read.scores == "partial":
        read.warnings.append(
            f"{name}: {read.documents - read.with_score} of {read.documents} documents have no "
            "score"
        )
    return read


__all__ = ["FORMATS", "TraceRead", "check_named", "read_traces", "sniff_format"]
