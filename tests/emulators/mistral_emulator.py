"""Loopback emulator of Mistral's ``POST /v1/embeddings`` and ``POST /v1/chat/completions``
(scripted, see :mod:`tests.emulators.chat`; OpenAI's SDK reads the same path with base URL
``{url}/v1``), for tests through the real SDKs.

Request ``{"model", "input": str | [str], "output_dimension"?}`` with ``Authorization: Bearer
KEY``. Reply, as the SDK's ``EmbeddingResponse`` model and the API docs describe it::

    {"id": hex, "object": "list", "model": M,
     "data": [{"object": "embedding", "embedding": [float, ...], "index": i}, ...],
     "usage": {"prompt_tokens": T, "total_tokens": T, "completion_tokens": 0}}

Vectors: unit-norm float32 drawn from a generator seeded by sha256(model, text), so equal texts
give equal vectors (:func:`expected_vector`). Tokens: whitespace-separated words per input
(not Mistral's tokenizer). Error bodies follow shapes the live API returns (quoted in public
issue threads): 401 ``{"message": "Unauthorized", "request_id"}``; 400/429/5xx
``{"object": "error", "message", "type", "param", "code"}``; 422 FastAPI's
``{"detail": [{"loc", "msg", "type"}]}`` (the SDK's ``HTTPValidationError``). Limits as the API
reports them: more than ``max_inputs`` inputs or ``max_batch_tokens`` tokens -> 400.

Knobs: :meth:`fail` (next N requests, or all, answer a status, optionally with Retry-After),
``delay_s`` (slow replies), ``shuffle`` (reply rows in reverse order), ``requests`` (recorded),
``fail_after(n, status)`` (every request after the first ``n`` answers ``status``; each
recorded request has its arrival time ``t``, and ``max_in_flight`` the most at once), and
``truncate(times)`` (the next ``times`` 200 replies are cut in half, JSON left open).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from .chat import CHAT_PATH, ChatScript, CutBody

MODELS = {"mistral-embed": 1024, "codestral-embed": 1536}
_REASONS = {
    400: ("invalid_request_error", None),
    429: ("rate_limited", "1300"),
    500: ("internal_server_error", None),
    502: ("bad_gateway", None),
    503: ("service_unavailable", None),
    504: ("gateway_timeout", None),
}


def expected_vector(text: str, dimension: int = 1024, model: str = "mistral-embed") -> np.ndarray:
    """The emulator's float32 unit vector ``(dimension,)`` for ``text`` under ``model``."""
    seed = hashlib.sha256(f"{model}\0{text}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(seed[:8], "little"))
    v = rng.standard_normal(dimension).astype(np.float32)
    return v / np.linalg.norm(v)


def count_tokens(text: str) -> int:
    """Emulated token count: whitespace-separated words."""
    return len(text.split())


class MistralEmulator:
    """``with MistralEmulator(api_key="k") as emu:`` serves ``emu.url`` on 127.0.0.1."""

    def __init__(
        self,
        api_key: str = "test-mistral-key",
        models: dict[str, int] | None = None,
        max_inputs: int = 512,
        max_batch_tokens: int = 16384,
    ) -> None:
        self.api_key = api_key
        self.models = dict(models or MODELS)
        self.max_inputs = max_inputs
        self.max_batch_tokens = max_batch_tokens
        self.delay_s = 0.0
        self.shuffle = False
        self.requests: list[dict[str, Any]] = []
        self.chat = ChatScript()  # scripted replies of POST /v1/chat/completions
        self._failures: list[tuple[int, float | None, dict[str, Any] | None]] = []
        self._fail_forever: tuple[int, float | None, dict[str, Any] | None] | None = None
        self._fail_after: tuple[int, int] | None = None
        self._truncate = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the emulator first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def fail(
        self,
        status: int,
        times: int | None = 1,
        retry_after: float | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Answer the next ``times`` requests (None: every request) with ``status``."""
        with self._lock:
            if times is None:
                self._fail_forever = (status, retry_after, body)
            else:
                self._failures.extend([(status, retry_after, body)] * times)

    def fail_after(self, n: int, status: int = 429) -> None:
        """Serve the first ``n`` embedding requests from now, then answer ``status`` forever."""
        with self._lock:
            self._fail_after = (len(self.requests) + n, status)

    def truncate(self, times: int = 1) -> None:
        """Cut the next ``times`` 200 replies in half (a dropped connection mid-body)."""
        with self._lock:
            self._truncate += times

    def reset(self) -> None:
        """Drop pending failures and recorded requests."""
        with self._lock:
            self._failures.clear()
            self._fail_forever = None
            self._fail_after = None
            self._truncate = 0
            self.requests.clear()

    def __enter__(self) -> MistralEmulator:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.emulator = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- request handling (called from server threads) ------------------------------------

    def handle(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], Any]:
        """``(status, extra headers, JSON body)`` for one request."""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body, "t": time.time()})
            self.in_flight = getattr(self, "in_flight", 0) + 1
            self.max_in_flight = max(getattr(self, "max_in_flight", 0), self.in_flight)
        try:
            return self._handle(path, headers, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _handle(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        if self.delay_s:
            time.sleep(self.delay_s)
        if path not in ("/v1/embeddings", CHAT_PATH):
            return 404, {}, {"detail": "Not Found"}
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {}, {"message": "Unauthorized", "request_id": uuid.uuid4().hex}
        with self._lock:
            failure = self._failures.pop(0) if self._failures else self._fail_forever
            if failure is None and self._fail_after and len(self.requests) > self._fail_after[0]:
                failure = (self._fail_after[1], None, None)
        if failure is not None:
            status, retry_after, custom = failure
            extra = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
            return status, extra, custom or _error(status, f"emulated HTTP {status}")
        if path == CHAT_PATH:
            return self.chat.respond(body, _error)
        if not isinstance(body, dict):
            return 400, {}, _error(400, "Invalid JSON body")
        missing = [k for k in ("model", "input") if k not in body]
        if missing:
            detail = [
                {"loc": ["body", k], "msg": "Field required", "type": "missing"} for k in missing
            ]
            return 422, {}, {"detail": detail}
        inputs = [body["input"]] if isinstance(body["input"], str) else body["input"]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            bad = {
                "loc": ["body", "input"],
                "msg": "Input should be a valid list",
                "type": "list_type",
            }
            return 422, {}, {"detail": [bad]}
        model = body["model"]
        if model not in self.models:
            return 400, {}, _error(400, f"Invalid model: {model}", "invalid_model", "1500")
        if not inputs:
            return 400, {}, _error(400, "Input cannot be empty")
        if len(inputs) > self.max_inputs:
            return 400, {}, _error(400, "Too many inputs in request, split into more batches.")
        tokens = sum(count_tokens(t) for t in inputs)
        if tokens > self.max_batch_tokens:
            msg = f"Too many tokens in batch. Max is {self.max_batch_tokens} got {tokens}"
            return 400, {}, _error(400, msg)
        dim = int(body.get("output_dimension") or self.models[model])
        rows = [
            {
                "object": "embedding",
                "embedding": expected_vector(t, dim, model).tolist(),
                "index": i,
            }
            for i, t in enumerate(inputs)
        ]
        if self.shuffle:
            rows.reverse()
        usage = {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}
        reply = {"id": uuid.uuid4().hex, "object": "list", "model": model, "data": rows}
        with self._lock:
            cut, self._truncate = self._truncate > 0, max(0, self._truncate - 1)
        if cut:
            whole = json.dumps(reply | {"usage": usage}).encode()
            return 200, {}, Raw(whole[: len(whole) // 2])
        return 200, {}, reply | {"usage": usage}


class Raw(bytes):
    """A reply body sent as these bytes, not as JSON."""


def _error(
    status: int, message: str, kind: str | None = None, code: str | None = None
) -> dict[str, Any]:
    default_kind, default_code = _REASONS.get(status, ("error", None))
    return {
        "object": "error",
        "message": message,
        "type": kind or default_kind,
        "param": None,
        "code": code or default_code,
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        emulator: MistralEmulator = self.server.emulator  # type: ignore[attr-defined]
        status, extra, payload = emulator.handle(self.path, headers, raw)
        if isinstance(payload, CutBody):
            data: bytes = payload
        elif isinstance(payload, Raw):
            data = bytes(payload)
        else:
            data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            if isinstance(data, CutBody):  # announce it all, send half, hang up
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return
