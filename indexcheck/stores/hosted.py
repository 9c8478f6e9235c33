"""What the stores behind a vendor's hosted API share (Pinecone, turbopuffer, Weaviate, Upstash).

Each is paced by the same spec options (``?retries=&retry_interval=&timeout=``, defaults from
``--timeout``/``--max-wait``), takes its key from the environment only, prints its spec with
the options given (never a secret), searches one query per request up to a per-query cap,
and fingerprints the ids and vectors of its first page. :class:`HostedStore` holds that once;
a store says its name pattern, its cap and its sentences.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self
from urllib.parse import urlencode

import numpy as np

from ..errors import AuthError, InputError, SpecError, TransientError
from ..remote.http import (
    MALFORMED_ROW,
    OTHER_STATUS_ROW,
    RATE_LIMITED_ROW,
    SERVER_ERROR_ROW,
    malformed_request,
    retry_after,
    status_row,
)
from ..remote.retry import RetryPolicy
from ..remote.translate import Caught, ErrorMap, Rule
from ..remote.waiting import current as current_waiting
from ..safety.secrets import env_secret
from .base import BaseStore, StoreSpec
from .hits import Hits, gather
from .params import Float, Int, Param

#: the pacing options every hosted store takes
PACING_PARAMS: Mapping[str, Param] = {
    "retries": Int(min=0, max=100),
    "retry_interval": Float(min=0, max=60),
    "timeout": Float(min=0.001, max=3600),
}


def pacing(values: Mapping[str, Any]) -> tuple[RetryPolicy, float]:
    """The retry policy and the per-request timeout (seconds) of the checked spec options
    ``values``: 5 retries from 0.5 s backing off to 20 s, within ``--max-wait``; the timeout
    ``--timeout``, unless the spec names them."""
    waiting = current_waiting()
    interval = float(values.get("retry_interval", 0.5))
    retry = RetryPolicy(
        max_retries=int(values.get("retries", 5)),
        base_delay=interval,
        max_delay=max(20.0, interval),
        max_wait=waiting.max_wait,
    )
    return retry, float(values.get("timeout", waiting.timeout))


def shown_spec(head: str, given: Mapping[str, Any], keys: Sequence[str]) -> str:
    """``head`` with the options of ``keys`` that ``given`` holds, in that order: the spec
    safe to print (secrets never travel in options)."""
    shown = {k: str(given[k]) for k in keys if k in given}
    return head + (f"?{urlencode(shown)}" if shown else "")


def key_hint(env: str) -> dict[str, str]:
    """The ``param_hints`` of a store whose key comes from ``env``."""
    return {"api_key": f"the key goes in {env} only"}


def api_key(env: str, fix: str) -> str:
    """The key in ``env``; InputError (exit 2) saying ``fix`` when it is unset."""
    key = env_secret(env)
    if not key:
        raise InputError(f"{env} is not set; {fix}")
    return key


@dataclass(frozen=True)
class Naming:
    """How a spec names an index or namespace (``scheme:NAME``): the names ``pattern``
    accepts, the ``separator`` that betrays an endpoint written where the name goes, and
    the refusals of each (``misplaced``, ``malformed``: templates over ``{name}``)."""

    pattern: re.Pattern[str]
    separator: str
    misplaced: str
    malformed: str

    def name(self, spec: StoreSpec) -> str:
        """The name ``spec`` gives; SpecError (exit 2) for a URL or a malformed name."""
        name = spec.location.strip()
        if "://" in name or self.separator in name:
            raise SpecError(self.misplaced.format(name=name))
        if not self.pattern.match(name):
            raise SpecError(self.malformed.format(name=name))
        return name


@dataclass(frozen=True)
class Vendor:
    """The words of one hosted store's rows of the error table: the vendor's ``name``, the
    ``key_env`` its key comes from and what that key belongs to (``key_owner``), what it
    holds (``noun``: the index, the namespace), the spec option naming its endpoint, the
    fix of a 404, the statuses of a refused request, its SDK's transport errors and what
    else to check when it stays unreachable (``network_fix``)."""

    name: str
    key_env: str
    key_owner: str
    noun: str
    endpoint: str
    not_found_fix: str
    refused: tuple[int, ...]
    transport: tuple[str, ...]
    network_fix: str

    def fields(self, c: Caught, status: Any, headers: Any, message: str) -> dict[str, Any]:
        """What the rows read of an SDK error: its HTTP ``status``, the ``headers`` of the
        reply (Retry-After) and the server's ``message``, redacted of the key."""
        store = c.store
        redact = store._redact if store is not None else str
        return {
            "status": status if isinstance(status, int) else None,
            "retry_after": retry_after(headers or {}),
            "message": redact(message),
            "malformed": malformed_request(c.exc),
            "who": f"{self.name} {c.doing} on {store.where if store is not None else self.noun}",
            "malformed_fix": f"check {self.key_env} and {self.endpoint} for stray characters",
        }

    def errors(self, fields: Callable[[Caught], Mapping[str, Any]], *extra: Rule) -> ErrorMap:
        """The vendor's rows (service: its name in lower case): a malformed request, the
        key refused (401/403), not found (404), rate limited (429) and 5xx retried, a refused
        request, the transport, ``extra``, any other status."""
        return ErrorMap(
            MALFORMED_ROW,
            status_row(
                AuthError,
                f"{self.name} refused the API key for {{store.where}} (HTTP {{status}}); set "
                f"{self.key_env} to a key of the {self.key_owner}",
                401,
                403,
            ),
            status_row(
                InputError, f"{{who}}: not found (HTTP 404: {{message}}); {self.not_found_fix}", 404
            ),
            RATE_LIMITED_ROW,
            SERVER_ERROR_ROW,
            status_row(
                InputError,
                f"{{who}}: {self.name} refused the request (HTTP {{status}}: {{message}})",
                *self.refused,
            ),
            Rule(self.transport, TransientError, "could not reach {store.where} ({name})"),
            *extra,
            OTHER_STATUS_ROW,
            fields=fields,
            rate_limited=f"{self.name} still rate-limited {{doing}} on {{store.where}} after "
            "{attempts} retries; wait and rerun, or raise ?retries=",
            unavailable=f"{self.name} {{doing}} on {{store.where}} failed after {{attempts}} "
            f"retries ({{err}}); check the network{self.network_fix}, or rerun later",
            service=self.name.lower(),
        )


class HostedStore(BaseStore):
    """A store behind a vendor's hosted API, searched one query per request.

    A subclass implements ``_search(block, k, native)`` (per query of ``block``, its hits
    best first) and sets ``max_k`` and ``max_k_message`` (a template over ``max_k`` and
    ``k``); the base refuses a larger k before a request, and searches with or without the
    engine's filter (``_native_filter`` translates for the scheme)."""

    query_batch = 16
    no_exact_message = (
        "{label} offers no exact search; use the exact search indexcheck runs over vectors "
        "read with iter_vectors"
    )
    #: results one query may return at the most, and the refusal of a larger k
    max_k: ClassVar[int] = 10_000
    max_k_message: ClassVar[str] = ""
    #: how a spec names the index, for a store opened by name (``scheme:NAME?...``)
    naming: ClassVar[Naming | None] = None
    timeout: float = 60.0

    @classmethod
    def from_spec(
        cls, spec: StoreSpec, options: Any = None, sleep: Callable[[float], None] = time.sleep
    ) -> Self:
        """Open ``scheme:NAME?...``: the options and the name checked (``naming``), then
        :meth:`named` builds the store (``sleep`` waits between retries)."""
        if cls.naming is None:
            raise TypeError(f"{cls.__name__} must set naming or implement from_spec")
        values = cls.check_params(spec.params)
        return cls.named(cls.naming.name(spec), values, sleep)

    @classmethod
    def named(cls, name: str, values: dict[str, Any], sleep: Callable[[float], None]) -> Self:
        """The store of the index ``name`` with the checked options ``values``."""
        raise TypeError(f"{cls.__name__} must implement named")

    def _pace(self, values: Mapping[str, Any]) -> None:
        """``retry`` and ``timeout`` from the checked spec options (:func:`pacing`)."""
        self.retry, self.timeout = pacing(values)

    @staticmethod
    def _page_hash(blocks: Iterable[Any]) -> str:
        """16 hex digits of SHA-256 over ``id NUL vector-bytes`` of every row of ``blocks``
        (each with ``ids`` and float32 ``vectors``): what a fingerprint hashes of the first
        page."""
        h = hashlib.sha256()
        for block in blocks:
            for i, vid in enumerate(block.ids):
                h.update(vid.encode() + b"\0" + block.vectors[i].tobytes())
        return h.hexdigest()[:16]

    def _search(self, block: np.ndarray, k: int, native: Any) -> Hits:
        raise TypeError(f"{type(self).__name__} must implement _search")

    def _knn(
        self, vectors: np.ndarray, k: int, native: Any, *how: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """``_search`` (with ``how``, the kind of search where an engine has several) over
        blocks of ``query_batch`` queries, once k is within ``max_k``."""
        if k > self.max_k:
            raise InputError(self.max_k_message.format(max_k=self.max_k, k=k))
        search = self._search
        return gather(vectors, k, self.query_batch, lambda part: search(part, k, native, *how))

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The engine's own (approximate) top-k: D float32 (q, k) in its score, NaN where
        fewer came back; I object (q, k) ids, None where missing."""
        return self._knn(vectors, k, None)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._knn(vectors, k, native)

    def _native_filter(self, node: Any) -> Any:
        """The engine's filter (:mod:`indexcheck.filters`, by the scheme's name)."""
        from ..filters import translate

        return translate(node, self.scheme)
