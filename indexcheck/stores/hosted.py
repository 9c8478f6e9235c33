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

from ..errors import InputError, SpecError
from ..remote.retry import RetryPolicy
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


def page_hash(blocks: Iterable[Any]) -> str:
    """16 hex digits of SHA-256 over ``id NUL vector-bytes`` of every row of ``blocks``
    (each with ``ids`` and float32 ``vectors``): the fingerprint of a first page."""
    h = hashlib.sha256()
    for block in blocks:
        for i, vid in enumerate(block.ids):
            h.update(vid.encode() + b"\0" + block.vectors[i].tobytes())
    return h.hexdigest()[:16]


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
