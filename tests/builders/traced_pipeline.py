"""Test-only: a small LangChain RAG pipeline, traced by real instrumentation, and its exports.

The pipeline is a LangChain FAISS index over ``fixtures/chunks.jsonl`` (indexcheck's
offline ``minilm`` model through ``indexcheck.integrations.langchain``), a retriever (k=3)
and a chat model that answers from the retrieved context (:class:`ContextEchoChatModel`, a
``BaseChatModel``: the first sentence of the first passage; scripted to refuse some
questions and to add a fabrication to one), wired as
``{context, question} | prompt | model | parser``.

One run of the questions is recorded three ways at once:

- ``openinference-instrumentation-langchain`` on an ``opentelemetry-sdk`` tracer provider,
  exporting through the SDK's ``ConsoleSpanExporter`` into a local JSONL file (one
  ``ReadableSpan.to_json()`` per line) and into an ``InMemorySpanExporter``. LangChain's
  instrumentor records each document's content and metadata, never its id or score.
- LangChain's own ``RunCollectorCallbackHandler``: the LangSmith ``Run`` objects that
  ``LangChainTracer`` would upload, dumped with the LangSmith SDK's serializer.
- :class:`GenAICallbackHandler`, written here: no installed instrumentor emits the OTel GenAI
  conventions for a LangChain retriever, so this handler opens real SDK spans with the
  documented ``gen_ai.*`` attribute names (``gen_ai.operation.name`` retrieval/chat,
  ``gen_ai.retrieval.query.text``, ``gen_ai.retrieval.documents``,
  ``gen_ai.input.messages``/``gen_ai.output.messages``).

:mod:`tests.builders.trace_exports` writes the files from those recordings.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
QUESTIONS = ROOT / "fixtures" / "questions.jsonl"
#: the questions run through the pipeline (fixture question ids)
QUESTION_IDS = ("q001", "q002", "q003", "q004", "q005", "q006")
#: answered "I don't know" whatever the context (false refusals to investigate)
REFUSE = ("q003", "q005")
#: answered with a claim that is in no passage (the judge's UNSUPPORTED)
FABRICATE = ("q004",)
REFUSAL = "I don't know; the documents don't cover that."
K = 3


def questions() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: r for r in rows}
    return [by_id[q] for q in QUESTION_IDS]


def langchain_embeddings() -> Any:
    """indexcheck's ``minilm`` as a LangChain ``Embeddings`` (``indexcheck.integrations``):
    the index is checked with ``--embedder minilm``."""
    from indexcheck.integrations.langchain.embeddings import embeddings

    return embeddings("minilm")


def _chat_model(refuse: set[str], fabricate: set[str]) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ContextEchoChatModel(BaseChatModel):
        """Answers with the first sentence of the first passage of the system prompt's
        context; refuses the questions in ``refuse``, adds a fabrication for ``fabricate``."""

        @property
        def _llm_type(self) -> str:
            return "context-echo"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:  # fmt: skip
            system, human = str(messages[0].content), str(messages[-1].content)
            context = system.split("Context:\n", 1)[1]
            body = context.split("\n\n", 1)[1] if "\n\n" in context else context
            first = re.split(r"(?<=[.!?])\s", body.strip(), maxsplit=1)[0]
            if human in refuse:
                text = REFUSAL
            elif human in fabricate:
                text = f"{first} [1] Members also get free drinks at every desk."
            else:
                text = f"{first} [1]"
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    return ContextEchoChatModel()


def _genai_handler(tracer: Any) -> Any:
    from langchain_core.callbacks import BaseCallbackHandler
    from opentelemetry import trace

    class GenAICallbackHandler(BaseCallbackHandler):
        """Real OTel SDK spans named by the OTel GenAI conventions (see the module doc)."""

        def __init__(self) -> None:
            self.spans: dict[Any, Any] = {}
            self.root: Any = None

        def _start(self, run_id: Any, parent: Any, name: str) -> Any:
            ctx = None
            if parent in self.spans:
                ctx = trace.set_span_in_context(self.spans[parent])
            span = tracer.start_span(name, context=ctx)
            self.spans[run_id] = span
            return span

        def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any,
                           parent_run_id: Any = None, **kw: Any) -> None:  # fmt: skip
            if parent_run_id is None:
                span = self._start(run_id, None, "rag_pipeline")
                span.set_attribute("gen_ai.operation.name", "invoke_workflow")
                self.root = run_id

        def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
            if run_id == self.root:
                span = self.spans.pop(run_id)
                msg = [{"role": "assistant", "parts": [{"type": "text", "content": outputs}]}]
                span.set_attribute("gen_ai.output.messages", json.dumps(msg))
                span.end()

        def on_retriever_start(self, serialized: Any, query: str, *, run_id: Any,
                               parent_run_id: Any = None, **kw: Any) -> None:  # fmt: skip
            span = self._start(run_id, self.root, "retrieval fixture-faiss")
            span.set_attribute("gen_ai.operation.name", "retrieval")
            span.set_attribute("gen_ai.data_source.id", "fixture-faiss")
            span.set_attribute("gen_ai.retrieval.top_k", K)
            span.set_attribute("gen_ai.retrieval.query.text", query)

        def on_retriever_end(self, documents: Any, *, run_id: Any, **kw: Any) -> None:
            span = self.spans.pop(run_id)
            docs = [
                {"id": d.id, "score": d.metadata.get("score"), "content": d.page_content}
                for d in documents
            ]
            span.set_attribute("gen_ai.retrieval.documents", json.dumps(docs))
            span.end()

        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any,
                                parent_run_id: Any = None, **kw: Any) -> None:  # fmt: skip
            span = self._start(run_id, self.root, "chat context-echo")
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "context-echo")
            roles = {"system": "system", "human": "user", "ai": "assistant"}
            msgs = [
                {"role": roles.get(m.type, m.type),
                 "parts": [{"type": "text", "content": str(m.content)}]}
                for m in messages[0]
            ]  # fmt: skip
            span.set_attribute("gen_ai.input.messages", json.dumps(msgs))

        def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
            span = self.spans.pop(run_id)
            text = response.generations[0][0].text
            msg = [{"role": "assistant", "parts": [{"type": "text", "content": text}],
                    "finish_reason": "stop"}]  # fmt: skip
            span.set_attribute("gen_ai.output.messages", json.dumps(msg))
            span.end()

    return GenAICallbackHandler()


@dataclass
class Recorded:
    """One traced run: the answers as the pipeline returned them and the three recordings."""

    answers: list[dict[str, Any]]  # the pipeline's own answers.jsonl rows (ids = trace ids)
    spans: list[Any]  # OpenInference ReadableSpans
    genai_spans: list[Any]  # GenAI-convention ReadableSpans
    runs: list[dict[str, Any]]  # LangSmith runs (flat, parent_run_id/trace_id)
    jsonl_export: str  # what ConsoleSpanExporter wrote
    faiss_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)  # set by the caller of write_exports


def run_pipeline(tmp: Path) -> Recorded:
    """Build the FAISS index in ``tmp`` and run the questions through the traced pipeline."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    rows = [json.loads(line) for line in CHUNKS.read_text(encoding="utf-8").splitlines()]
    store = FAISS.from_texts(
        [r["text"] for r in rows],
        langchain_embeddings(),
        metadatas=[{"file": r["file"]} for r in rows],
        ids=[r["id"] for r in rows],
    )
    faiss_dir = tmp / "lc-faiss"
    store.save_local(str(faiss_dir), index_name="docs")
    retriever = store.as_retriever(search_kwargs={"k": K})
    qs = questions()
    text_of = {q["id"]: q["question"] for q in qs}
    model = _chat_model({text_of[i] for i in REFUSE}, {text_of[i] for i in FABRICATE})
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the context only.\n\nContext:\n{context}"),
            ("human", "{question}"),
        ]
    )

    given: list[list[Any]] = []  # the documents each answer was given, as LangChain has them

    def join(docs: list[Any]) -> str:
        given.append(list(docs))
        return "\n\n".join(d.page_content for d in docs)

    chain = (
        {"context": retriever | RunnableLambda(join), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )

    memory, console = InMemorySpanExporter(), io.StringIO()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    fmt = lambda span: span.to_json(indent=None) + "\n"  # noqa: E731
    provider.add_span_processor(
        SimpleSpanProcessor(ConsoleSpanExporter(out=console, formatter=fmt))
    )
    genai_memory = InMemorySpanExporter()
    genai_provider = TracerProvider()
    genai_provider.add_span_processor(SimpleSpanProcessor(genai_memory))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    collector = RunCollectorCallbackHandler()
    answers: list[dict[str, Any]] = []
    try:
        for q in qs:
            before = len(memory.get_finished_spans())
            genai = _genai_handler(genai_provider.get_tracer("tests.traced_pipeline"))
            answer = chain.invoke(q["question"], config={"callbacks": [collector, genai]})
            spans = memory.get_finished_spans()[before:]
            root = next(s for s in spans if s.parent is None)
            contexts = [
                {"id": d.id, "text": d.page_content, "rank": n} for n, d in enumerate(given[-1], 1)
            ]
            answers.append({"id": f"{root.context.trace_id:032x}", "question": q["question"],
                            "answer": answer, "contexts": contexts})  # fmt: skip
    finally:
        instrumentor.uninstrument()
    return Recorded(
        answers=answers,
        spans=list(memory.get_finished_spans()),
        genai_spans=list(genai_memory.get_finished_spans()),
        runs=_flat_runs(collector.traced_runs),
        jsonl_export=console.getvalue(),
        faiss_dir=faiss_dir,
    )


def _flat_runs(roots: list[Any]) -> list[dict[str, Any]]:
    """Every run of every trace, without ``child_runs`` (the runs endpoint's flat form)."""
    from langsmith._internal._serde import dumps_json

    out: list[dict[str, Any]] = []
    todo = list(roots)
    while todo:
        run = todo.pop(0)
        todo.extend(run.child_runs)
        data = run.model_dump(exclude={"child_runs"}) if hasattr(run, "model_dump") else run.dict()
        data.pop("child_runs", None)
        out.append(json.loads(dumps_json(data)))
    return out
