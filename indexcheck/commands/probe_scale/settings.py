"""probe-scale's options, as :func:`indexcheck.api.probe_scale` receives them: one frozen
object built once at the face and passed down unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class ProbeScaleSettings:
    """Every option of probe-scale; the names and defaults of the api's keywords."""

    #: a spec or an opened store
    store: str | VectorStore
    #: probe queries, built from the store's own vectors
    probes: int = 16
    #: results per probe query
    k: int = 8
    seed: int = 0
    #: probe the search run under this metadata filter: a node, a dict or JSON text (parsed here)
    filter: Any = None
    #: keep the result per index fingerprint for later commands (unfiltered only)
    cache: bool = False
    #: return the result kept for this index instead, probing (and keeping) only when none is
    reuse: bool = False
    trust_pickle: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.filter, str):  # refused before the store opens
            from ...filters import parse_filter

            object.__setattr__(self, "filter", parse_filter(self.filter))


__all__ = ["ProbeScaleSettings"]
