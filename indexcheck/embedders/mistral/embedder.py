"""Mistral's hosted embeddings (``mistral:MODEL``) through the official ``mistralai`` SDK.

One request is ``POST /v1/embeddings`` with ``{"model", "input": [texts]}``; the answer holds
``data[i].embedding`` (floats) and ``data[i].index`` (position in ``input``), plus
``usage.prompt_tokens`` (the billed input tokens). Rows are placed by ``index``, never by
their order in the reply. ``mistral-embed`` returns 1024-d vectors of unit L2 norm.

Retries happen once, in :class:`~indexcheck.embedders.base.BaseEmbedder`: the SDK client is
built with retry strategy ``"none"``, and the HTTP rows of the one error table
(:data:`indexcheck.remote.http.HTTP_ERRORS`, shared with the judges) turn a 429 into a
rate-limited :class:`~indexcheck.errors.TransientError` (carrying ``Retry-After``), and
408/409/500/502/503/504, timeouts and dropped connections into a plain one. 401/403 become
:class:`~indexcheck.errors.AuthError`, other 4xx :class:`~indexcheck.errors.InputError` with the
server's message. The API key is read from ``MISTRAL_API_KEY`` through
:func:`indexcheck.safety.secrets.env_secret` (stray whitespace stripped with a warning, a control
character refused, exit 2) and never appears in a message, ``model_id`` or repr;
``MISTRAL_SERVER_URL`` overrides the server (a proxy or an emulator). A request the HTTP
client refuses to send (h11's ``LocalProtocolError`` for an illegal header byte) is bad input,
never retried, and its text (the header, key included) is never shown.

Batch size: the API refuses a request over 16,384 tokens in total ("Too many tokens in batch.
Max is 16384", its 400 message) and caps the number of inputs per request (256 or 512 by
public reports); 32 inputs keeps chunks of up to 512 tokens under the token cap.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, TypedDict, Unpack
from urllib.parse import parse_qsl

import numpy as np

from ...errors import (
    DimensionMismatchError,
    InputError,
    MissingDependencyError,
    SpecError,
    TransientError,
)
from ...remote.http import HTTP_ERRORS, where
from ...remote.retry import RetryPolicy
from ...remote.waiting import Pacing
from ...remote.waiting import current as current_waiting
from ...safety.redact import remember
from ...safety.secrets import env_secret
from ..base import BaseEmbedder

DEFAULT_MODEL = "mistral-embed"
#: default output dimension of models whose size is documented
DIMENSIONS: dict[str, int] = {"mistral-embed": 1024}
DEFAULT_BATCH_SIZE = 32
API_KEY_ENV = "MISTRAL_API_KEY"
SERVER_URL_ENV = "MISTRAL_SERVER_URL"


def _load_sdk() -> tuple[Any, Any, Any]:
    """``(Mistral, RetryConfig, BackoffStrategy)`` from mistralai 3.x or 1.x/2.x."""
    for client_module, utils_module in (
        ("mistralai.client", "mistralai.client.utils"),
        ("mistralai", "mistralai.utils"),
    ):
        try:
            client = importlib.import_module(client_module)
            utils = importlib.import_module(utils_module)
            return client.Mistral, utils.RetryConfig, utils.BackoffStrategy
        except (ImportError, AttributeError):
            continue
    raise MissingDependencyError("the mistral embedder", "mistral", package="mistralai")


class PacingKeywords(TypedDict, total=False):
    """The fields of :class:`~indexcheck.remote.waiting.Pacing`, taken one by one."""

    retry: RetryPolicy | None
    sleep: Callable[[float], None]
    timeout_s: float | None


class MistralEmbedder(BaseEmbedder):
    """Mistral embeddings API: float32 ``(n, dimension)`` rows as served (unit norm for
    ``mistral-embed``, so dot = cosine); tokens from ``usage.prompt_tokens``."""

    errors = HTTP_ERRORS
    hosted = True

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        server_url: str | None = None,
        batch_size: int | None = None,
        *,
        dimension: int | None = None,
        progress: Callable[[int], None] | None = None,
        pacing: Pacing | None = None,
        **given: Unpack[PacingKeywords],
    ) -> None:
        """``pacing``: the retry policy (default: ``--max-wait``), seconds per request
        (default: ``--timeout``) and the sleep between retries; ``retry=``, ``sleep=`` and
        ``timeout_s=`` still set them one by one."""
        pace, waiting = pacing or Pacing(), current_waiting()
        retry = given.get("retry", pace.retry) or RetryPolicy(max_wait=waiting.max_wait)
        super().__init__(retry=retry, sleep=given.get("sleep", pace.sleep), progress=progress)
        timeout_s = given.get("timeout_s", pace.timeout)
        self.timeout_s = waiting.timeout if timeout_s is None else timeout_s
        self.model = model.strip() or DEFAULT_MODEL
        key = env_secret(API_KEY_ENV) if api_key is None else api_key
        remember(key)
        if not key.strip():
            raise InputError(
                f"the mistral embedder needs an API key; set {API_KEY_ENV} in the environment"
            )
        default_dim = DIMENSIONS.get(self.model)
        if dimension is None and default_dim is None:
            raise SpecError(
                f"the dimension of Mistral model '{self.model}' is not known; "
                f"name it in the spec, e.g. mistral:{self.model}?dim=1024"
            )
        if dimension is not None and dimension < 1:
            raise SpecError(f"mistral: dim must be a positive integer, got {dimension}")
        if batch_size is not None and batch_size < 1:
            raise InputError(f"mistral: batch size must be at least 1, got {batch_size}")
        self.dimension = int(dimension if dimension is not None else default_dim or 0)
        # Ask for a size only when it differs from the model's default: not every model
        # accepts output_dimension.
        self._output_dimension = None if self.dimension == default_dim else self.dimension
        self.model_id = f"mistral:{self.model}"
        if self._output_dimension is not None:
            self.model_id += f"?dim={self._output_dimension}"
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE
        self.server_url = server_url or os.environ.get(SERVER_URL_ENV) or None
        self._client: Any = mistral_client(key, self.server_url, self.timeout_s)

    def __repr__(self) -> str:
        return f"MistralEmbedder(model_id={self.model_id!r}, server={self._where()!r})"

    def close(self) -> None:
        """Close the SDK's HTTP connections."""
        close_client(self._client)

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:
        kwargs: dict[str, Any] = {}
        if self._output_dimension is not None:
            kwargs["output_dimension"] = self._output_dimension
        response = self._client.embeddings.create(model=self.model, inputs=texts, **kwargs)
        return self._parse(response, len(texts))

    def _parse(self, response: Any, n: int) -> tuple[np.ndarray, int]:
        """Rows of the reply placed by their ``index``; tokens from ``usage``."""
        data = list(response.data or [])
        if len(data) != n or any(item.embedding is None for item in data):
            # a short reply is a malformed 200: retried like a 5xx
            raise TransientError(f"{self._where()} returned {len(data)} embeddings for {n} texts")
        indices = [item.index for item in data]
        if all(i is None for i in indices):
            order = list(range(n))
        elif sorted(i for i in indices if i is not None) == list(range(n)):
            order = [int(i) for i in indices]
        else:
            raise TransientError(
                f"{self._where()} returned embeddings with indices {indices[:8]} for {n} texts"
            )
        widths = {len(item.embedding) for item in data}
        if widths != {self.dimension}:
            got = ", ".join(str(w) for w in sorted(widths))
            raise DimensionMismatchError(
                f"{self.model_id} returned vectors of dimension {got}, expected "
                f"{self.dimension}; set it in the spec, e.g. mistral:{self.model}?dim={got}"
            )
        out = np.empty((n, self.dimension), dtype=np.float32)
        out[order] = np.asarray([item.embedding for item in data], dtype=np.float32)
        usage = response.usage
        tokens = getattr(usage, "prompt_tokens", None) or getattr(usage, "total_tokens", None)
        return out, int(tokens or 0)

    def _error_fields(self) -> dict[str, Any]:
        """What the HTTP rows of the error table name: the model, its server and key."""
        return {
            "who": self.model_id,
            "server": self._where(),
            "key_env": API_KEY_ENV,
            "malformed_fix": f"check {API_KEY_ENV} and {SERVER_URL_ENV} for stray characters",
            "reject_fix": "check the model name and the texts sent",
            "timeout_s": self.timeout_s,
        }

    def _where(self) -> str:
        """The server for messages, without any user:password part of its URL."""
        return where(self.server_url, "the Mistral API")


def mistral_client(key: str, server_url: str | None, timeout_s: float) -> Any:
    """The ``mistralai`` SDK client, sending each request once (retry strategy "none":
    retries happen in :meth:`indexcheck.remote.retry.RetryPolicy.run`), ``timeout_s`` per
    request."""
    mistral_cls, retry_config, backoff = _load_sdk()
    return mistral_cls(
        api_key=key,
        server_url=server_url,
        # strategy "none": the SDK sends once; backoff values are unused but required
        retry_config=retry_config("none", backoff(500, 500, 1.0, 500), False),
        timeout_ms=max(1, int(timeout_s * 1000)),
    )


def close_client(client: Any) -> None:
    """Close an SDK client's HTTP connections (the SDK closes them on ``__exit__``)."""
    exit_ = getattr(client, "__exit__", None)
    if exit_ is not None:
        exit_(None, None, None)


def from_spec(rest: str) -> MistralEmbedder:
    """Build from what follows ``mistral:``: ``[MODEL][?dim=N]`` (empty means mistral-embed);
    the key comes from ``MISTRAL_API_KEY``, the server from ``MISTRAL_SERVER_URL``."""
    model, _, query = rest.partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(params) - {"dim"})
    if unknown:
        raise SpecError(
            f"unknown option '{unknown[0]}' in embedder spec 'mistral:{rest}'; "
            "the only option is ?dim=N"
        )
    dimension: int | None = None
    if "dim" in params:
        try:
            dimension = int(params["dim"])
        except ValueError:
            raise SpecError(
                f"dim must be a positive integer in embedder spec 'mistral:{rest}'"
            ) from None
    return MistralEmbedder(model=model.strip() or DEFAULT_MODEL, dimension=dimension)
