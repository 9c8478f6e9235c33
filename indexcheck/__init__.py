"""indexcheck: prove a RAG vector index is right before users pay for it being wrong.

::

    import indexcheck
    result = indexcheck.check_index("faiss:./index", "chunks.jsonl")  # result.ok, .to_dict()

The public functions load on first use (``import indexcheck`` stays light): see
:mod:`indexcheck.api` for what each takes and returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

_PUBLIC = {
    "check_answers": "indexcheck.api",
    "check_index": "indexcheck.api",
    "probe_scale": "indexcheck.api",
    "sweep_threshold": "indexcheck.api",
    "compare_ann": "indexcheck.api",
    "diagnose": "indexcheck.api",
    "diff_index": "indexcheck.api",
    "embed": "indexcheck.api",
    "repair": "indexcheck.api",
    "run_ci": "indexcheck.api",
    "judge": "indexcheck.api",
    "generate_questions": "indexcheck.api",
    "open_store": "indexcheck.stores",
    "open_embedder": "indexcheck.embedders",
    "load_chunks": "indexcheck.inputs.corpus",
    "load_questions": "indexcheck.inputs.questions",
}

if TYPE_CHECKING:
    from .api import (
        check_answers,
        check_index,
        compare_ann,
        diagnose,
        diff_index,
        embed,
        generate_questions,
        judge,
        probe_scale,
        repair,
        run_ci,
        sweep_threshold,
    )
    from .embedders import open_embedder
    from .inputs.corpus import load_chunks
    from .inputs.questions import load_questions
    from .stores import open_store


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'indexcheck' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__all__ = [
    "__version__",
    "check_answers",
    "check_index",
    "compare_ann",
    "diagnose",
    "diff_index",
    "embed",
    "generate_questions",
    "judge",
    "load_chunks",
    "load_questions",
    "open_embedder",
    "open_store",
    "probe_scale",
    "repair",
    "run_ci",
    "sweep_threshold",
]
