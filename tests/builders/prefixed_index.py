"""Test-only: a LangChain FAISS index whose chunks in ``section`` were embedded with an
instruction prefix (E5's ``"passage: "``), the others bare, through a hash embedder
(``tests.fast_hooks.FAST64``: a text's vector is its hash's, so a prefix changes it)."""

from __future__ import annotations

from pathlib import Path

from tests.fast_hooks import FAST64

#: the spec indexcheck embeds with (the same hash embedder, no prefix)
EMBEDDER = "py:tests.fast_hooks:FAST64"


def corpus(n: int) -> tuple[list[str], list[str]]:
    """(ids, texts) of ``n`` distinct short chunks."""
    texts = [f"Chunk {i}: notes on topic {i % 17} with detail {i * 7}." for i in range(n)]
    return [f"c{i}" for i in range(n)], texts


def build_prefixed_faiss(
    folder: Path, n: int, section: range, prefix: str = "passage: ", bare: str = ""
) -> str:
    """Save the index under ``folder`` (``index_name=docs``) and return its store spec:
    texts at positions in ``section`` embedded as ``prefix + text``, the others as
    ``bare + text``."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    ids, texts = corpus(n)
    marked = {texts[p] for p in section}

    class Sectioned(Embeddings):
        def embed_documents(self, docs: list[str]) -> list[list[float]]:
            sent = [(prefix if t in marked else bare) + t for t in docs]
            return FAST64.embed(sent).tolist()

        def embed_query(self, text: str) -> list[float]:
            return FAST64.embed([text])[0].tolist()

    FAISS.from_texts(texts, Sectioned(), ids=ids).save_local(str(folder), index_name="docs")
    return f"faiss:{folder}?index_name=docs"
