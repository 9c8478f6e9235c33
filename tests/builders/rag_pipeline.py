"""Test-only: a RAG application built with LangChain over the fixture KB, for
``diagnose --system py:tests.builders.rag_pipeline:APP``.

- Retriever: LangChain's ``FAISS`` vectorstore over a FAISS ``IndexHNSWFlat`` (M=4, inner
  product), searched with breadth ``max(efSearch=1, k)`` as hnswlib (Chroma) does, so a
  deeper fetch searches wider. Embeddings through ``IndexcheckEmbeddings`` with
  :data:`EMBEDDER` (``py:tests.builders.rag_pipeline:EMBEDDER``): a lookup of planned
  32-d unit vectors, so every planted case below is placed, not hoped for.
- Assembly (the app's own): fetch ``DEPTH`` = 8, keep scores >= ``THRESHOLD`` = 0.5,
  sort, keep ``TOP_K`` = 4 (:class:`~indexcheck.integrations.langchain.system.LangChainSystem`).
- Generator: ``ChatPromptTemplate | RunnableLambda(OpenAI SDK chat call)`` against the
  loopback emulator (``RAG_CHAT_URL``), scripted by :func:`generator_script`.

Planted questions (:data:`PLANTED`, question id -> (text, expected chunk, planted fault)):
``ann`` sits by chunk 150, in a small far cluster the HNSW beam of 8 never reaches (20
does); ``shift``'s chunk 40 is stored with chunk 41's vector (a positional shift of 3);
``budget``'s chunk 24 ranks 5th (kept out by keep-4); ``gen`` is always refused by the
generator; ``flaky`` is refused at random (seeded); ``ok`` works; ``out`` is out of scope.
:data:`EXTRA` adds ``filtered`` (chunk 100 is dropped by the app's metadata filter) and
``faint`` (chunk 90 ranks first at 0.41, under the threshold) for the tests that ask them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from indexcheck.embedders.base import BaseEmbedder
from indexcheck.inputs.corpus import load_chunks

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
D, DEPTH, THRESHOLD, TOP_K, EF_SEARCH, M = 32, 8, 0.5, 4, 1, 4
SHIFTED = (40, 41, 42)  # each stored with the next chunk's vector
ARCHIVED = 100  # metadata archived=True: the app's own filter {"archived": False} drops it


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


CORPUS = load_chunks(CHUNKS)
_rng = np.random.default_rng(0)
_a, _b = _unit(_rng.standard_normal(D)), _unit(_rng.standard_normal(D))
#: fresh (correct) vectors of the 160 chunks: 150 round direction a, the last 10 round b
FRESH = np.vstack(
    [
        _unit(_a + 0.3 * _rng.standard_normal((150, D))),
        _unit(_b + 0.3 * _rng.standard_normal((10, D))),
    ]
)
STORED = FRESH.copy()
for _i in SHIFTED:
    STORED[_i] = FRESH[_i + 1]

PLANTED: dict[str, tuple[str, int | None, str]] = {
    "ok": ("What does planted chunk ten say?", 10, "none"),
    "ann": ("What does the far-cluster chunk say?", 150, "ann_miss"),
    "shift": ("What does planted chunk forty say?", 40, "positional_shift"),
    "budget": ("What do chunks twenty to twenty-four say?", 24, "context_budget"),
    "gen": ("What does planted chunk sixty say?", 60, "generation"),
    "flaky": ("What does planted chunk eighty say?", 80, "flaky"),
    "out": ("Who won the 1962 chess olympiad?", None, "out_of_scope"),
}
#: asked only by the tests that name them: ``filtered``'s chunk is dropped by the app's
#: metadata filter; ``faint``'s chunk ranks first at 0.41, under the app's threshold 0.5
EXTRA = {
    "filtered": ("What does the archived chunk say?", ARCHIVED, "filter"),
    "faint": ("What does the faint chunk ninety say?", 90, "threshold"),
}
_Q = {
    "ok": FRESH[10],
    "ann": _unit(0.6 * FRESH[150] + 0.4 * _a),
    "shift": FRESH[40],
    "budget": _unit(FRESH[20] + FRESH[21] + FRESH[22] + FRESH[23] + 0.6 * FRESH[24]),
    "gen": FRESH[60],
    "flaky": FRESH[80],
    "out": _unit(-_a + 0.1 * _b),
    "filtered": FRESH[ARCHIVED],
    "faint": _unit(
        FRESH[90] + 1.4 * _unit(-_a + 0.2 * np.random.default_rng(5).standard_normal(D))
    ),
}
_TABLE = {t: FRESH[i] for i, t in enumerate(CORPUS.texts)}
_TABLE.update({{**PLANTED, **EXTRA}[k][0]: v for k, v in _Q.items()})


class LookupEmbedder(BaseEmbedder):
    """The planned vector of each known text (chunks and planted questions); others hash."""

    def __init__(self) -> None:
        super().__init__()
        self.dimension = D
        self.model_id = "planted-lookup:32"

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        from indexcheck.testing import HashEmbedder

        out = np.empty((len(texts), D), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = _TABLE[t] if t in _TABLE else HashEmbedder(D).embed([t])[0]
        return out, sum(len(t.split()) for t in texts)


EMBEDDER = LookupEmbedder()
EMBEDDER_SPEC = "py:tests.builders.rag_pipeline:EMBEDDER"


def questions_file(path: Path, extra: tuple[str, ...] = ()) -> Path:
    rows = []
    for qid, (text, chunk, _) in {**PLANTED, **{k: EXTRA[k] for k in extra}}.items():
        row: dict[str, Any] = {"id": qid, "question": text}
        if chunk is None:
            row["in_scope"] = False
        else:
            row["expected"] = [CORPUS.ids[chunk]]
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def build_index(folder: Path) -> str:
    """LangChain FAISS folder (index.faiss + index.pkl) holding :data:`STORED`; the
    indexcheck store spec."""
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy
    from langchain_core.documents import Document

    from indexcheck.integrations.langchain.embeddings import IndexcheckEmbeddings

    index = faiss.IndexHNSWFlat(D, M, faiss.METRIC_INNER_PRODUCT)
    index.add(STORED)
    index.hnsw.efSearch = EF_SEARCH
    ids = list(CORPUS.ids)
    docs = {
        i: Document(page_content=t, metadata={"id": i, "archived": n == ARCHIVED}, id=i)
        for n, (i, t) in enumerate(zip(ids, CORPUS.texts, strict=True))
    }
    store = FAISS(
        embedding_function=IndexcheckEmbeddings(EMBEDDER_SPEC),
        index=index,
        docstore=InMemoryDocstore(docs),
        index_to_docstore_id=dict(enumerate(ids)),
        distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
    )
    store.save_local(str(folder))
    return f"faiss:{folder}"


def _flaky_seed(p: float) -> int:
    """The first seed whose draws refuse the 3 runs and answer one of the 3 control runs."""
    import random

    for seed in range(1000):
        r = random.Random(seed)
        draws = [r.random() < p for _ in range(6)]
        if all(draws[:3]) and not all(draws[3:]):
            return seed
    raise AssertionError("no seed")


def generator_script() -> dict[str, Any]:
    from tests.emulators.rag_generator import Scripted

    out = {}
    for text, chunk, fault in {**PLANTED, **EXTRA}.values():
        if chunk is None:
            continue
        passage = CORPUS.texts[chunk][:80]
        mode = {"generation": "refuse", "flaky": "flaky"}.get(fault, "grounded")
        out[text] = Scripted(passage, mode, p=0.5, seed=_flaky_seed(0.5))
    return out


class _WideningFAISS:
    """LangChain's FAISS searched with breadth max(efSearch, k), as hnswlib does."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def similarity_search_with_score(self, query: str, k: int, **kwargs: Any) -> Any:
        self.store.index.hnsw.efSearch = max(EF_SEARCH, k)
        kwargs.setdefault("fetch_k", k)  # a filter is applied to the same k results
        return self.store.similarity_search_with_score(query, k=k, **kwargs)


def _chat(prompt_value: Any) -> dict[str, Any]:
    from openai import OpenAI

    client = OpenAI(base_url=os.environ["RAG_CHAT_URL"], api_key=os.environ["OPENAI_API_KEY"])
    messages = [
        {"role": {"human": "user", "ai": "assistant"}.get(m.type, m.type), "content": m.content}
        for m in prompt_value.to_messages()
    ]
    reply = client.chat.completions.create(model=os.environ["RAG_MODEL"], messages=messages)
    usage = reply.usage.total_tokens if reply.usage else None
    return {"answer": reply.choices[0].message.content or "", "tokens": usage}


class _App:
    """Opened on first use from RAG_INDEX / RAG_CHAT_URL / RAG_MODEL (set by the test)."""

    def __init__(self) -> None:
        self._inner: Any = None
        self._key: tuple[str, str] | None = None
        self.retrievals = 0

    def _app(self) -> Any:
        key = (os.environ["RAG_INDEX"], os.environ["RAG_MODEL"])
        if self._inner is None or key != self._key:
            from langchain_community.vectorstores import FAISS
            from langchain_core.prompts import ChatPromptTemplate
            from langchain_core.runnables import RunnableLambda

            from indexcheck.integrations.langchain.embeddings import IndexcheckEmbeddings
            from indexcheck.integrations.langchain.system import LangChainSystem

            store = FAISS.load_local(
                key[0], IndexcheckEmbeddings(EMBEDDER_SPEC), allow_dangerous_deserialization=True
            )
            prompt = ChatPromptTemplate.from_messages(
                [
                    ("system", "Answer only from the context; otherwise say you don't know."),
                    ("human", "Question: {question}\n\nContext:\n{context}"),
                ]
            )
            chain = prompt | RunnableLambda(_chat)
            self._inner = LangChainSystem(
                _WideningFAISS(store),
                chain,
                model_id=key[1],
                depth=DEPTH,
                threshold=THRESHOLD,
                top_k=TOP_K,
                filter={"archived": False},
            )
            self._key = key
        return self._inner

    @property
    def model_id(self) -> str:
        return os.environ["RAG_MODEL"]

    depth = DEPTH

    def retrieve(self, question: str, depth: int, filter: Any = None) -> Any:
        self.retrievals += 1
        return self._app().retrieve(question, depth, filter)

    def assemble(self, question: str, candidates: Any, **kwargs: Any) -> Any:
        return self._app().assemble(question, candidates, **kwargs)

    def generate(self, question: str, context: Any) -> Any:
        return self._app().generate(question, context)


APP = _App()


class _AnswerOnly:
    """The same pipeline behind a plain ``answer(question)`` (fewer interventions)."""

    @property
    def model_id(self) -> str:
        return os.environ["RAG_MODEL"]

    def answer(self, question: str) -> dict[str, Any]:
        from indexcheck.commands.diagnose.system.hook import as_candidate

        app = APP._app()
        context = [
            as_candidate(c) for c in app.assemble(question, _cands(app.retrieve(question, DEPTH)))
        ]
        reply = app.generate(question, context)
        return {**reply, "contexts": [{"id": c.id, "text": c.text} for c in context]}


def _cands(rows: list[dict[str, Any]]) -> list[Any]:
    from indexcheck.commands.diagnose.system.hook import as_candidate

    return [as_candidate(r) for r in rows]


ANSWER_ONLY = _AnswerOnly()


def llamaindex_app() -> Any:
    """A LlamaIndex query engine (VectorStoreIndex of the fixture chunks, top 4, the
    emulator behind a ``CustomLLM``), wrapped by ``LlamaIndexSystem``."""
    from llama_index.core import PromptTemplate, VectorStoreIndex
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.schema import TextNode

    from indexcheck.integrations.llamaindex.embeddings import IndexcheckEmbedding
    from indexcheck.integrations.llamaindex.system import LlamaIndexSystem

    class EmulatorLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name=os.environ["RAG_MODEL"])

        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            from openai import OpenAI

            client = OpenAI(
                base_url=os.environ["RAG_CHAT_URL"], api_key=os.environ["OPENAI_API_KEY"]
            )
            reply = client.chat.completions.create(
                model=os.environ["RAG_MODEL"], messages=[{"role": "user", "content": prompt}]
            )
            return CompletionResponse(text=reply.choices[0].message.content or "")

        def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            raise NotImplementedError

    nodes = [TextNode(id_=i, text=t) for i, t in zip(CORPUS.ids, CORPUS.texts, strict=True)]
    index = VectorStoreIndex(nodes, embed_model=IndexcheckEmbedding(EMBEDDER_SPEC))
    engine = index.as_query_engine(
        llm=EmulatorLLM(),
        similarity_top_k=TOP_K,
        text_qa_template=PromptTemplate("Question: {query_str}\n\nContext:\n{context_str}"),
    )
    return LlamaIndexSystem(engine, model_id=os.environ["RAG_MODEL"])
