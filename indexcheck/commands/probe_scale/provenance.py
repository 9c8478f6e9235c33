"""probe-scale: where a measured scale comes from, and the framework formulas on it.

A probe measures the scores the backend computed. For most stores that is the scale the
application sees; for pgvector without an ANN index it is not: the score is whatever
operator the application writes in ``ORDER BY`` (``<=>``, ``<->``, ``<#>``), and
indexcheck only chose one. LangChain and LlamaIndex then often turn the backend score
into a relevance score (``scales/framework_scores.py``); the probe names the ones that
apply, so a threshold in application code can be read on the right scale.
"""

from __future__ import annotations

from ...stores.base import StoreInfo
from .result import ScaleResult

#: pgvector's distance operators: what an application may write in ORDER BY
PG_OPERATORS = (
    {"operator": "<=>", "metric": "cosine", "score": "1-cos"},
    {"operator": "<->", "metric": "l2", "score": "l2"},
    {"operator": "<#>", "metric": "ip", "score": "-dot"},
)


def provenance(info: StoreInfo, result: ScaleResult) -> None:
    """Say where the measured scale comes from, and name the framework formulas on it.

    A store whose score is the operator the application writes (pgvector with no ANN
    index and no ``&metric=``/``&operator=``) gets ``source="operator_assumed"`` and the
    operators it could have used; every probe lists the LangChain/LlamaIndex relevance
    functions that apply to the measured backend score."""
    from ...scales.framework_scores import framework_scores_for

    if info.details.get("score_depends_on_query"):
        result.source = "operator_assumed"
        result.operators = [dict(o) for o in PG_OPERATORS]
        ops = ", ".join(f"{o['operator']} = {o['score']}" for o in PG_OPERATORS)
        result.message += (
            "; these scores come from the operator indexcheck chose "
            f"({info.details.get('operator')}), not from the application: with no ANN "
            "index the scale is the operator its query writes"
            f" ({ops}); pass &metric= or &operator= to match it"
        )
    backend, metric = info.backend, info.metric
    layout = info.details.get("layout")
    if backend == "llamaindex" and layout == "faiss":
        backend = "faiss"  # a LlamaIndex FaissVectorStore folder: faiss's own scores
    entries = framework_scores_for(backend, metric)
    if info.backend == "llamaindex":
        entries = [e for e in entries if e.framework == "llamaindex"]
    if result.transform is not None:
        entries = [e for e in entries if e.backend_score == result.transform]
    result.framework_scores = [
        {
            "name": e.name,
            "framework": e.framework,
            "function": e.function,
            "formula": e.relevance.formula,
            "to_cosine": e.relevance.cos_of_s,
            "monotone": e.relevance.monotone,
            "default": e.default,
            "note": e.note,
        }
        for e in entries
    ]
    if entries:
        named = "; ".join(
            f"{'LangChain' if e.framework == 'langchain' else 'LlamaIndex'} "
            f"{e.function} gives {e.relevance.formula} ({e.name})"
            for e in entries
        )
        result.message += f"; framework relevance scores on this backend: {named}"
