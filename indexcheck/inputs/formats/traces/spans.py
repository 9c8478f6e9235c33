"""Spans of one trace -> one answer, by the OpenInference and the OTel GenAI conventions.

OpenInference: ``openinference.span.kind`` (CHAIN, RETRIEVER, LLM ...), ``input.value`` /
``output.value``, documents as ``retrieval.documents.N.document.{id,score,content,metadata}``,
messages as ``llm.{input,output}_messages.N.message.{role,content}``. OTel GenAI (Development
status): ``gen_ai.operation.name``; a retrieval span's ``gen_ai.retrieval.query.text`` and
``gen_ai.retrieval.documents`` (JSON ``{id, score, content?}``); messages as
``gen_ai.{input,output}.messages`` (``[{role, parts: [{type: "text", content}]}]``), or,
before 1.37, span events ``gen_ai.user.message``/``gen_ai.choice`` and the attributes
``gen_ai.prompt.N.content``/``gen_ai.completion.N.content``.

The question is the root span's input, else the first retriever's query; the answer the root
span's output, else the last LLM output message; the documents those of the retriever spans in
start order, each in its recorded order (rank 1 first).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .model import (
    ANSWER_KEYS,
    QUESTION_KEYS,
    Span,
    TraceAnswer,
    TraceDoc,
    as_text,
    document,
    text_or_none,
)

KIND = "openinference.span.kind"
OP = "gen_ai.operation.name"
LLM_OPS = {"chat", "text_completion", "generate_content"}
RETRIEVAL_OPS = {"retrieval", "retrieve"}
_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.")


def kind(span: Span) -> str:
    """RETRIEVER, LLM, CHAIN ... by either convention ('' when the span says nothing)."""
    k = str(span.attrs.get(KIND) or span.attrs.get("span_kind") or "").upper()
    if k:
        return k
    op = str(span.attrs.get(OP) or "").lower()
    if op in RETRIEVAL_OPS:
        return "RETRIEVER"
    if op in LLM_OPS:
        return "LLM"
    return "CHAIN" if op else ""


def _json(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def _message_text(messages: Any, role: str | None) -> str | None:
    """The text of the last message (of ``role`` when given) in a GenAI message list."""
    messages = _json(messages)
    if not isinstance(messages, list):
        return None
    for m in reversed(messages):
        if not isinstance(m, dict) or (role and m.get("role") not in (role, None)):
            continue
        parts = m.get("parts")
        if isinstance(parts, list):
            contents = [p.get("content") for p in parts if isinstance(p, dict)]
            texts = [t for t in contents if isinstance(t, str)]
            if texts:
                return "".join(texts)
        if isinstance(m.get("content"), str):
            return str(m["content"])
    return None


def _messages_attr(attrs: dict[str, Any], prefix: str, role: str | None) -> str | None:
    """``llm.output_messages.N.message.content`` (the last of ``role``)."""
    n, found = 0, None
    while any(k.startswith(f"{prefix}.{n}.") for k in attrs):
        r = attrs.get(f"{prefix}.{n}.message.role")
        content = attrs.get(f"{prefix}.{n}.message.content")
        if isinstance(content, str) and (role is None or r in (role, None)):
            found = content
        n += 1
    return found


def _event_text(span: Span, names: tuple[str, ...]) -> str | None:
    for name, attrs in reversed(span.events):
        if name in names:
            message = _json(attrs.get("message"))
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                return str(message["content"])
            if isinstance(attrs.get("content"), str):
                return str(attrs["content"])
    return None


def span_input(span: Span) -> str | None:
    a = span.attrs
    return (
        as_text(a.get("input.value"), QUESTION_KEYS)
        or text_or_none(a.get("gen_ai.retrieval.query.text"))
        or _message_text(a.get("gen_ai.input.messages"), "user")
        or _messages_attr(a, "llm.input_messages", "user")
        or _event_text(span, ("gen_ai.user.message",))
        or text_or_none(a.get("gen_ai.prompt.0.content"))
    )


def span_output(span: Span) -> str | None:
    a = span.attrs
    return (
        _messages_attr(a, "llm.output_messages", "assistant")
        or _message_text(a.get("gen_ai.output.messages"), "assistant")
        or as_text(a.get("output.value"), ANSWER_KEYS)
        or _event_text(span, ("gen_ai.choice", "gen_ai.assistant.message"))
        or text_or_none(a.get("gen_ai.completion.0.content"))
    )


def documents(span: Span, where: str) -> list[TraceDoc]:
    """The span's retrieved documents in recorded order (``where`` names the span)."""
    a = span.attrs
    positions = sorted({int(m.group(1)) for k in a if (m := _DOC.match(k))})
    docs = []
    for n in positions:
        base = f"retrieval.documents.{n}"
        score = a.get(f"{base}.document.score")
        docs.append(document(where, base, a, "document.id", "document.content", score, flat=True))
    genai = _json(a.get("gen_ai.retrieval.documents"))
    if isinstance(genai, list):
        for n, d in enumerate(genai):
            d = d if isinstance(d, dict) else {}
            base = f"gen_ai.retrieval.documents[{n}]"
            docs.append(document(where, base, d, "id", "content", d.get("score")))
    return docs


def assemble(trace_id: str, spans: list[Span], source: str) -> TraceAnswer:
    """One trace's spans -> its answer (fields may be None: the caller says what is missing)."""
    ids = {s.span_id for s in spans}
    ordered = sorted(spans, key=lambda s: s.start)
    roots = [s for s in ordered if not s.parent_id or s.parent_id not in ids]
    root = roots[0]
    retrievers = [s for s in ordered if kind(s) == "RETRIEVER"]
    llms = [s for s in ordered if kind(s) == "LLM"]
    question = span_input(root) if kind(root) not in ("LLM",) else None
    if not question and retrievers:
        question = span_input(retrievers[0])
    answer = span_output(root)
    if answer is None and llms:
        answer = span_output(llms[-1])
    docs = [d for s in retrievers for d in documents(s, f"{source}{s.where}span {s.span_id}")]
    where = f"{source}{root.where}trace {trace_id}, span {root.span_id}"
    return TraceAnswer(trace_id, where, question, answer, docs)


def answers_from_spans(spans: list[Span], source: str) -> list[TraceAnswer]:
    """Group spans by trace id (first-seen order) and assemble each trace."""
    groups: dict[str, list[Span]] = {}
    for s in spans:
        groups.setdefault(s.trace_id, []).append(s)
    return [assemble(tid, group, source) for tid, group in groups.items()]
