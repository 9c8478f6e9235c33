"""Chat completions for the loopback emulator: ``POST /v1/chat/completions``.

Mistral's and OpenAI's chat APIs answer in the same shape, as the SDKs' response models
(``mistralai.client.models.ChatCompletionResponse``, ``openai.types.chat.ChatCompletion``)
read it::

    {"id", "object": "chat.completion", "created": unix, "model": M,
     "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT},
                  "finish_reason": "stop" | "length"}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}

Replies are scripted: :meth:`ChatScript.queue` serves the next requests in order;
:meth:`ChatScript.when` answers every request whose first user message contains a text.
A reply is :func:`valid` (a JSON object), :func:`text` (any content, e.g. malformed JSON),
:func:`truncated` (the JSON cut in half, ``finish_reason: "length"``), :func:`status`
(an HTTP error such as 429 or 503) or :func:`cut_body` (the HTTP body itself cut short).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    kind: str
    content: Any = None
    status: int = 200
    retry_after: float | None = None


def valid(obj: dict[str, Any]) -> Reply:
    return Reply("valid", obj)


def text(content: str) -> Reply:
    return Reply("text", content)


def truncated(obj: dict[str, Any]) -> Reply:
    return Reply("truncated", obj)


def status(code: int, retry_after: float | None = None) -> Reply:
    return Reply("status", status=code, retry_after=retry_after)


def cut_body(obj: dict[str, Any]) -> Reply:
    return Reply("cut", obj)


def reply_from_json(spec: Any) -> Reply:
    """A reply from a fixture entry: a dict is valid JSON, a string is sent as it is."""
    return valid(spec) if isinstance(spec, dict) else text(str(spec))


class CutBody(bytes):
    """A response body the handler announces in full but sends only half of."""


class ChatScript:
    """Scripted chat replies, and the chat requests received (``requests``)."""

    def __init__(self) -> None:
        self._queue: list[Reply] = []
        self._when: list[tuple[str, Reply]] = []
        self.default = valid({"claims": []})
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def when(self, needle: str, reply: Reply) -> None:
        with self._lock:
            self._when.append((needle, reply))

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._when.clear()
            self.requests.clear()

    def _pick(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        users = [m.get("content", "") for m in messages if isinstance(m, dict)]
        users = [u for m, u in zip(messages, users, strict=True) if m.get("role") == "user"]
        first = users[0] if users and isinstance(users[0], str) else ""
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.pop(0)
            for needle, reply in self._when:
                if needle in first:
                    return reply
        return self.default

    def respond(self, body: Any, error: Any) -> tuple[int, dict[str, str], Any]:
        """``(status, extra headers, payload)`` for one authorised chat request."""
        if not isinstance(body, dict) or "model" not in body or "messages" not in body:
            detail = [{"loc": ["body", "messages"], "msg": "Field required", "type": "missing"}]
            return 422, {}, {"detail": detail}
        reply = self._pick(body)
        if reply.kind == "status":
            extra = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            return reply.status, extra, error(reply.status, f"emulated HTTP {reply.status}")
        content = reply.content if reply.kind == "text" else json.dumps(reply.content)
        finish = "stop"
        if reply.kind == "truncated":
            content, finish = content[: len(content) // 2], "length"
        prompt_tokens = sum(
            len(str(m.get("content", "")).split()) for m in body["messages"] if isinstance(m, dict)
        )
        done = len(str(content).split())
        payload = {
            "id": uuid.uuid4().hex,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "tool_calls": None},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": done,
                "total_tokens": prompt_tokens + done,
            },
        }
        if reply.kind == "cut":
            return 200, {}, CutBody(json.dumps(payload).encode())
        return 200, {}, payload
