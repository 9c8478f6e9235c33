"""The import path ``indexcheck.integrations.llamaindex`` of the LlamaIndex embedding class.

It lives in :mod:`indexcheck.embedders.frameworks.llamaindex` (it builds on the embedders);
this module only names it there and loads that module on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_MOVED = {
    "IndexcheckEmbedding": "indexcheck.embedders.frameworks.llamaindex",
    "embedding": "indexcheck.embedders.frameworks.llamaindex",
}

if TYPE_CHECKING:
    from ..embedders.frameworks.llamaindex import IndexcheckEmbedding, embedding


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MOVED])


__all__ = ["IndexcheckEmbedding", "embedding"]
