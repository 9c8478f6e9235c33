"""Error mapping shared by the chat judges (mistralai and openai SDKs raise alike-shaped errors)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ..embedders.mistral import _retry_after, _server_message
from ..errors import AuthError, BackendUnavailableError, InputError, TransientError
from ..retry import malformed_message, malformed_request

TRANSIENT_STATUS = frozenset({408, 409, 500, 502, 503, 504})
# Transport failures worth a retry, by class name: httpx, httpx2 (mistralai 3.x) and openai.
TRANSIENT_TRANSPORT = frozenset(
    {
        "TimeoutException",
        "NetworkError",
        "RemoteProtocolError",
        "NoResponseError",
        "APIConnectionError",
        "APITimeoutError",
        "ResponseValidationError",
        "JSONDecodeError",
    }
)


def where(url: str | None, default: str) -> str:
    """The server for messages, without any user:password part of its URL."""
    if not url:
        return default
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def map_error(exc: Exception, model_id: str, server: str, key_env: str) -> Exception | None:
    """The indexcheck exception for an SDK or transport failure, or None to re-raise.

    A request the HTTP client refused to build (openai wraps h11's LocalProtocolError in an
    APIConnectionError) is bad input and final: its text holds the headers, key included."""
    malformed = malformed_request(exc)
    if malformed is not None:
        return InputError(
            malformed_message(f"judge {model_id}", malformed, f"check {key_env} and the server URL")
        )
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & TRANSIENT_TRANSPORT:
        return TransientError(f"{type(exc).__name__} talking to {server}")
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        return None
    response = getattr(exc, "response", None)
    headers = getattr(exc, "headers", None) or getattr(response, "headers", None) or {}
    body = getattr(exc, "body", "")
    if not isinstance(body, str):
        body = json.dumps(body) if body is not None else ""
    message = _server_message(body)
    if status == 429:
        return TransientError(
            f"HTTP 429: {message}", rate_limited=True, retry_after=_retry_after(headers)
        )
    if status in TRANSIENT_STATUS:
        # a 503 may say when to come back; honour it as for a 429
        return TransientError(
            f"HTTP {status} from {server}: {message}", retry_after=_retry_after(headers)
        )
    if status in (401, 403):
        return AuthError(
            f"judge {model_id}: the server refused the API key (HTTP {status}); "
            f"set {key_env} to a valid key for {server}"
        )
    if 400 <= status < 500:
        return InputError(
            f"judge {model_id} rejected the request (HTTP {status}): {message}; "
            "check the model name in --judge"
        )
    return BackendUnavailableError(f"judge {model_id}: HTTP {status} from {server}: {message}")


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
