"""``questions generate``'s options as the face receives them: one frozen object, built once
by :func:`indexcheck.api.generate_questions` and passed down (field names and defaults are
the api keywords')."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kit.retrieval import DEFAULT_REFUSAL_PATTERN
from ..kit.settings import AT_LEAST_1, COSINE, RETRIES, SEED, SHARE, Settings, bound

if TYPE_CHECKING:
    from ...embedders.base import Embedder
    from ...inputs.corpus import Corpus
    from ...judges.base import Judge
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class GenerateQuestionsSettings(Settings):
    """Every option of ``indexcheck questions generate``."""

    #: a chunks file or corpus; None: the texts of ``store``
    chunks: str | Path | Corpus | None
    #: the model that writes the questions: a judge spec or an opened judge
    generator: str | Judge
    #: the question set to write (JSONL, with OUT.manifest.json beside it)
    out: str | Path | None = None
    store: str | VectorStore | None = None
    embedder: str | Embedder | None = None
    #: the model that checks out-of-scope candidates (None: the generator)
    judge: str | Judge | None = None
    #: in-scope questions and out-of-scope candidates to ask for
    n: int = field(default=30, metadata=bound(0, 100000))
    oos: int = field(default=10, metadata=bound(0, 100000))
    #: share of in-scope questions drawn from two linked chunks
    multi_hop: float = field(default=0.25, metadata=SHARE)
    seed: int = field(default=0, metadata=SEED)
    #: cosine to an earlier question at which a question is dropped
    dedupe: float = field(default=0.95, metadata=bound(0, 1, low_open=True))
    #: largest share of a question's words copied from its chunk
    max_quote: float = field(default=0.6, metadata=SHARE)
    #: exact top FETCH that must hold a question's expected chunks
    fetch: int = field(default=20, metadata=AT_LEAST_1)
    #: least cosine that links two chunks for a multi-hop question
    link_min: float = field(default=0.5, metadata=COSINE)
    #: regex on chunk ids marking refusal chunks
    refusal_pattern: str | None = DEFAULT_REFUSAL_PATTERN
    retries: int = field(default=2, metadata=RETRIES)
    #: a SQLite file for replies and embeddings
    cache: str | Path | None = None
    #: the most requests to make (repairs included); None: no cap
    budget_calls: int | None = field(default=None, metadata=AT_LEAST_1)
    #: plan and price the calls, make none
    dry_run: bool = False
    #: added to the manifest and the set's sidecar
    provenance: Mapping[str, Any] | None = None
    trust_pickle: bool = False

    def options(self) -> dict[str, Any]:
        """The options the manifest records, in its order."""
        names = ("n", "oos", "multi_hop", "dedupe", "max_quote", "fetch", "link_min",
                 "retries", "budget_calls")  # fmt: skip
        return {name: getattr(self, name) for name in names}


__all__ = ["GenerateQuestionsSettings"]
