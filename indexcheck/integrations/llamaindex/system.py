"""An adapter from a LlamaIndex query engine to ``diagnose --system``'s plain ``answer``
contract (repeated runs and the control; no intervention reaches inside the engine)::

    from indexcheck.integrations.llamaindex.system import LlamaIndexSystem
    APP = LlamaIndexSystem(index.as_query_engine(similarity_top_k=4), model_id="gpt-x@v2")
    # indexcheck diagnose --system py:myapp:APP --questions q.jsonl --runs 3

``answer(question)`` calls ``engine.query(question)`` and returns the response text with
its ``source_nodes`` as the contexts (id, text, score).
"""

from __future__ import annotations

from typing import Any


class LlamaIndexSystem:
    def __init__(self, engine: Any, *, model_id: str) -> None:
        self.engine = engine
        self.model_id = model_id

    def answer(self, question: str) -> dict[str, Any]:
        response = self.engine.query(question)
        contexts = [
            {"id": n.node.node_id, "text": n.node.get_content(), "score": n.score}
            for n in getattr(response, "source_nodes", []) or []
        ]
        return {"answer": str(response), "contexts": contexts}


__all__ = ["LlamaIndexSystem"]
