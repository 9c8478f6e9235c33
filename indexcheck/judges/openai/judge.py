"""``openai:BASE_URL?model=NAME``: any OpenAI-compatible chat endpoint as judge.

vLLM, Ollama, llama.cpp's server and hosted services speak the same
``POST {BASE_URL}/chat/completions``; the request asks for temperature 0 and
``response_format: {"type": "json_object"}``, the reply's ``choices[0].message.content`` is
the judgement and ``usage.total_tokens`` the tokens billed. The key comes from
``OPENAI_API_KEY`` (servers that need none accept any value). The SDK sends once
(``max_retries=0``): retries happen in :class:`~indexcheck.judges.base.BaseJudge`, within
``--timeout`` per request and ``--max-wait`` per request with its retries.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...errors import InputError, MissingDependencyError, SpecError
from ...remote.http import where
from ...remote.retry import RetryPolicy
from ...safety.redact import remember
from ...safety.secrets import env_secret
from ..base import HostedJudge, JudgeRequest, RawReply, hosted_waiting
from ..replies import message_text

API_KEY_ENV = "OPENAI_API_KEY"


class OpenAIJudge(HostedJudge):
    """An OpenAI-compatible chat model as judge, at temperature 0 in JSON mode."""

    key_env = API_KEY_ENV

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float | None = None,
        json_mode: bool = True,
    ) -> None:
        retry, self.timeout_s = hosted_waiting(retry, timeout_s)
        super().__init__(retry=retry, sleep=sleep)
        key = env_secret(API_KEY_ENV) if api_key is None else api_key
        remember(key)
        if not key.strip():
            raise InputError(
                f"the openai judge needs an API key; set {API_KEY_ENV} "
                "(any value for a local server that checks none)"
            )
        try:
            sdk = importlib.import_module("openai")
        except ImportError:
            raise MissingDependencyError("the openai judge", "openai") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.json_mode = json_mode
        self.model_id = f"openai:{where(self.base_url, '')}?model={model}"
        self._client: Any = sdk.OpenAI(
            base_url=self.base_url, api_key=key, max_retries=0, timeout=self.timeout_s
        )

    def __repr__(self) -> str:
        return f"OpenAIJudge(model_id={self.model_id!r})"

    def close(self) -> None:
        self._client.close()

    def _where(self) -> str:
        return where(self.base_url, "")

    def _complete(self, request: JudgeRequest) -> tuple[RawReply, int]:
        extra: dict[str, Any] = {}
        if self.json_mode:
            extra["response_format"] = {"type": "json_object"}
        response = self._client.chat.completions.create(
            model=self.model,
            messages=[dict(m) for m in request.messages],
            temperature=0,
            **extra,
        )
        choices = list(response.choices or [])
        text = message_text(choices[0].message.content) if choices else ""
        usage = response.usage
        return text, int(getattr(usage, "total_tokens", 0) or 0)


def from_spec(rest: str) -> OpenAIJudge:
    """Build from what follows ``openai:``: ``BASE_URL?model=NAME[&json=0]``."""
    base, _, query = rest.partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(params) - {"model", "json"})
    if unknown:
        raise SpecError(
            f"unknown option '{unknown[0]}' in judge spec 'openai:{where(base, '')}?...'; "
            "options are model=NAME and json=0"
        )
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SpecError(
            "openai: needs a base URL and a model, e.g. "
            "--judge 'openai:http://localhost:8000/v1?model=qwen2.5-7b-instruct'"
        )
    model = params.get("model", "").strip()
    if not model:
        raise SpecError(
            f"openai:{where(base, '')} names no model; add ?model=NAME to the judge spec"
        )
    return OpenAIJudge(base, model, json_mode=params.get("json", "1") not in ("0", "false"))
