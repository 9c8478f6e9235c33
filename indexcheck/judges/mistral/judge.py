"""``mistral:MODEL``: Mistral's chat completions through the official ``mistralai`` SDK.

One request is ``POST /v1/chat/completions`` with ``{"model", "messages", "temperature": 0,
"response_format": {"type": "json_object"}}``; the reply's ``choices[0].message.content`` is the
judgement (a string, or a list of text chunks) and ``usage.total_tokens`` the tokens billed.
The SDK is built with retry strategy ``"none"``: retries happen once, in
:class:`~indexcheck.judges.base.BaseJudge`, within ``--timeout`` per request and
``--max-wait`` per request with its retries (120 s and 240 s unless set). The key comes from
``MISTRAL_API_KEY`` and ``MISTRAL_SERVER_URL`` overrides the server (a proxy or an emulator).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from ...embedders.mistral.embedder import API_KEY_ENV, SERVER_URL_ENV, close_client, mistral_client
from ...errors import InputError, SpecError
from ...remote.http import where
from ...remote.retry import RetryPolicy
from ...safety.redact import remember
from ...safety.secrets import env_secret
from ..base import HostedJudge, JudgeRequest, RawReply, hosted_waiting
from ..replies import message_text


class MistralJudge(HostedJudge):
    """A Mistral chat model as judge, at temperature 0 in JSON mode."""

    key_env = API_KEY_ENV

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        server_url: str | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float | None = None,
    ) -> None:
        retry, self.timeout_s = hosted_waiting(retry, timeout_s)
        super().__init__(retry=retry, sleep=sleep)
        self.model = model.strip()
        if not self.model:
            raise SpecError(
                "mistral: needs a chat model, e.g. --judge mistral:mistral-small-latest"
            )
        key = env_secret(API_KEY_ENV) if api_key is None else api_key
        remember(key)
        if not key.strip():
            raise InputError(f"the mistral judge needs an API key; set {API_KEY_ENV}")
        self.model_id = f"mistral:{self.model}"
        self.server_url = server_url or os.environ.get(SERVER_URL_ENV) or None
        self._client: Any = mistral_client(key, self.server_url, self.timeout_s)

    def __repr__(self) -> str:
        return f"MistralJudge(model_id={self.model_id!r}, server={self._where()!r})"

    def _where(self) -> str:
        return where(self.server_url, "the Mistral API")

    def close(self) -> None:
        close_client(self._client)

    def _complete(self, request: JudgeRequest) -> tuple[RawReply, int]:
        response = self._client.chat.complete(
            model=self.model,
            messages=[dict(m) for m in request.messages],
            temperature=0,
            response_format={"type": "json_object"},
        )
        choices = list(response.choices or [])
        text = message_text(choices[0].message.content) if choices and choices[0].message else ""
        usage = response.usage
        return text, int(getattr(usage, "total_tokens", 0) or 0)
