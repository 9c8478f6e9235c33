"""What the chat judges share (the mistralai and openai SDKs raise alike-shaped errors): the
one HTTP error mapping, named for a judge, and the text of a chat message."""

from __future__ import annotations

from typing import Any

from ..remote.http_errors import map_http_error, translated, where

__all__ = ["map_error", "message_text", "translated", "where"]


def map_error(
    exc: Exception, model_id: str, server: str, key_env: str, timeout_s: float | None = None
) -> Exception | None:
    """The indexcheck exception for an SDK or transport failure, or None to re-raise
    (:func:`indexcheck.remote.http_errors.map_http_error`). A request the HTTP client refused to
    build (openai wraps h11's LocalProtocolError in an APIConnectionError) is bad input and
    final: its text holds the headers, key included."""
    return map_http_error(
        exc,
        who=f"judge {model_id}",
        server=server,
        key_env=key_env,
        malformed_fix=f"check {key_env} and the server URL",
        reject_fix="check the model name in --judge",
        timeout_s=timeout_s,
    )


def message_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text parts of a list of chunks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for chunk in content:
        text = chunk.get("text") if isinstance(chunk, dict) else getattr(chunk, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)
