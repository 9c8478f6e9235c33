"""``questions generate``'s options as the face receives them: one frozen object, built once
by :func:`indexcheck.api.generate_questions` and passed down (field names and defaults are
the api keywords')."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kit.retrieval import DEFAULT_REFUSAL_PATTERN

if TYPE_CHECKING:
    from ...embedders.base import Embedder
    from ...inputs.corpus import Corpus
    from ...judges.base import Judge
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class GenerateQuestionsSettings:
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
    n: int = 30
    oos: int = 10
    #: share of in-scope questions drawn from two linked chunks
    multi_hop: float = 0.25
    seed: int = 0
    #: cosine to an earlier question at which a question is dropped
    dedupe: float = 0.95
    #: largest share of a question's words copied from its chunk
    max_quote: float = 0.6
    #: exact top FETCH that must hold a question's expected chunks
    fetch: int = 20
    #: least cosine that links two chunks for a multi-hop question
    link_min: float = 0.5
    #: regex on chunk ids marking refusal chunks
    refusal_pattern: str | None = DEFAULT_REFUSAL_PATTERN
    retries: int = 2
    #: a SQLite file for replies and embeddings
    cache: str | Path | None = None
    #: the most requests to make (repairs included); None: no cap
    budget_calls: int | None = None
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
