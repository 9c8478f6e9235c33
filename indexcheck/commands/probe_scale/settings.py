"""probe-scale's options, as :func:`indexcheck.api.probe_scale` receives them: one frozen
object built once at the face and passed down unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..kit.settings import SEED, Settings, bound
from .probe import MAX_PROBES

if TYPE_CHECKING:
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class ProbeScaleSettings(Settings):
    """Every option of probe-scale; the names and defaults of the api's keywords."""

    #: a spec or an opened store
    store: str | VectorStore
    #: probe queries, built from the store's own vectors
    probes: int = field(default=16, metadata=bound(1, MAX_PROBES))
    #: results per probe query
    k: int = field(default=8, metadata=bound(1, 100))
    seed: int = field(default=0, metadata=SEED)
    #: probe the search run under this metadata filter: a node, a dict or JSON text (parsed here)
    filter: Any = None
    #: keep the result per index fingerprint for later commands (unfiltered only)
    cache: bool = False
    #: return the result kept for this index instead, probing (and keeping) only when none is
    reuse: bool = False
    trust_pickle: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.filter, str):  # refused before the store opens
            from ...filters import parse_filter

            object.__setattr__(self, "filter", parse_filter(self.filter))


__all__ = ["ProbeScaleSettings"]
