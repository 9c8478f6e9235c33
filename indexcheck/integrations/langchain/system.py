"""An adapter from a LangChain retriever and chain to ``diagnose --system``'s contract::

    APP = LangChainSystem(
        retriever=vectorstore,      # a VectorStore (scores) or any Runnable retriever
        chain=prompt | llm | StrOutputParser(),   # invoked with {"question", "context"}
        model_id="qwen2.5-7b@prompt-v3", depth=8, threshold=0.3, top_k=4,
    )

``retrieve``: ``similarity_search_with_score(question, k=depth, filter=...)`` on a VectorStore
(the app's own ``filter=`` unless an intervention passes one; ``{}`` is none), else
``retriever.invoke(question, k=depth)`` (scores from ``metadata["score"]``). ``assemble``: by
score (``higher_is_better=False`` for distances), under ``threshold`` dropped, ``top_k`` kept,
or your own ``assemble=``. ``generate``: ``chain.invoke({"question", "context"})``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Required, TypedDict, Unpack

from ..ranked import keep_ranked


class LangChainOptions(TypedDict, total=False):
    """The application's own settings (the keywords of :class:`LangChainSystem`)."""

    model_id: Required[str]
    depth: int
    threshold: float | None
    top_k: int | None
    higher_is_better: bool
    assemble: Callable[..., Any] | None
    separator: str
    filter: Any


_DEFAULTS: LangChainOptions = {
    "model_id": "",
    "depth": 4,
    "threshold": None,
    "top_k": None,
    "higher_is_better": True,
    "assemble": None,
    "separator": "\n\n",
    "filter": None,
}


class LangChainSystem:
    """``retrieve`` / ``assemble`` / ``generate`` over LangChain objects."""

    def __init__(self, retriever: Any, chain: Any, **options: Unpack[LangChainOptions]) -> None:
        unknown = sorted(set(options) - set(_DEFAULTS))
        if unknown:
            raise TypeError(f"LangChainSystem() got an unexpected keyword argument {unknown[0]!r}")
        if "model_id" not in options:
            raise TypeError("LangChainSystem() missing required keyword argument: 'model_id'")
        o = {**_DEFAULTS, **options}
        self.retriever, self.chain = retriever, chain
        self._model_id = o["model_id"]
        self.depth = o["depth"]
        self.threshold, self.top_k = o["threshold"], o["top_k"]
        self.higher_is_better = o["higher_is_better"]
        self._assemble = o["assemble"]
        self.separator = o["separator"]
        self.filter = o["filter"]

    @property
    def model_id(self) -> str:
        return self._model_id

    def retrieve(self, question: str, depth: int, filter: Any = None) -> list[dict[str, Any]]:
        filter = self.filter if filter is None else (filter or None)  # {}: no filter
        search = getattr(self.retriever, "similarity_search_with_score", None)
        if search is not None:
            pairs = search(question, k=depth, **({} if filter is None else {"filter": filter}))
        else:
            kwargs: dict[str, Any] = {"k": depth}
            if filter is not None:
                kwargs["filter"] = filter
            pairs = [
                (d, d.metadata.get("score")) for d in self.retriever.invoke(question, **kwargs)
            ]
        return [
            {
                "id": doc.id or doc.metadata.get("id"),
                "text": doc.page_content,
                "score": None if score is None else float(score),
            }
            for doc, score in pairs
        ]

    def assemble(
        self,
        question: str,
        candidates: list[Any],
        *,
        top_k: int | None = None,
        threshold: float | None = None,
    ) -> list[Any]:
        top_k = self.top_k if top_k is None else top_k
        threshold = self.threshold if threshold is None else threshold
        if self._assemble is not None:
            return list(self._assemble(question, candidates, top_k=top_k, threshold=threshold))
        return keep_ranked(
            candidates,
            top_k=top_k,
            threshold=threshold,
            higher_is_better=self.higher_is_better,
            sort=True,
        )

    def generate(self, question: str, context: list[Any]) -> Any:
        joined = self.separator.join(c.text for c in context)
        return self.chain.invoke({"question": question, "context": joined})


__all__ = ["LangChainSystem"]
