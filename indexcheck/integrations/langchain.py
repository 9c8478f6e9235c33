"""The import path ``indexcheck.integrations.langchain`` of the LangChain embedding class.

It lives in :mod:`indexcheck.embedders.frameworks.langchain` (it builds on the embedders);
this module only names it there and loads that module on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_MOVED = {
    "IndexcheckEmbeddings": "indexcheck.embedders.frameworks.langchain",
    "embeddings": "indexcheck.embedders.frameworks.langchain",
}

if TYPE_CHECKING:
    from ..embedders.frameworks.langchain import IndexcheckEmbeddings, embeddings


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MOVED])


__all__ = ["IndexcheckEmbeddings", "embeddings"]
