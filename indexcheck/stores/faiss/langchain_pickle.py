"""LangChain's FAISS ``index.pkl``, read through an unpickler that admits only its classes.

``FAISS.save_local`` pickles ``(docstore, index_to_docstore_id)``. Unpickling can run code,
so the FAISS store reads it only with ``--trust-pickle``, and even then through
:class:`_DocstoreUnpickler`: the docstore and document classes become inert stand-ins that
keep their state, builtins pass, anything else is refused.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import DataFileError
from .ids_files import langchain_rows


class _Loose:
    """Stand-in for a pickled LangChain class: keeps whatever state it is given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __setstate__(self, state: Any) -> None:
        self.state = state


_ALLOWED_PICKLE_CLASSES = {
    ("langchain_community.docstore.in_memory", "InMemoryDocstore"),
    ("langchain.docstore.in_memory", "InMemoryDocstore"),
    ("langchain_core.documents.base", "Document"),
    ("langchain.schema.document", "Document"),
    ("langchain.docstore.document", "Document"),
}


class _DocstoreUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED_PICKLE_CLASSES:
            return _Loose
        if module == "builtins" and name in {"dict", "list", "tuple", "set", "str", "int"}:
            return super().find_class(module, name)
        if module == "copyreg" and name in {"_reconstructor", "__newobj__"}:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}")


def _state_dict(obj: Any) -> dict[str, Any]:
    state = getattr(obj, "state", None)
    if isinstance(state, dict):
        inner = state.get("__dict__")
        return inner if isinstance(inner, dict) else state
    if isinstance(state, tuple) and state and isinstance(state[0], dict):
        return state[0]
    return dict(getattr(obj, "kwargs", {}) or {})


def read_langchain_pickle(path: Path) -> tuple[list[str], list[str | None]]:
    """(ids in faiss row order, texts) from a LangChain ``index.pkl``."""
    with path.open("rb") as f:
        try:
            payload = _DocstoreUnpickler(f).load()
        except Exception as exc:
            raise DataFileError(f"cannot read LangChain pickle {path}: {exc}") from None
    return langchain_rows(payload, path, _state_dict)


def read_langchain_metadata(path: Path, ids: list[str]) -> list[dict[str, Any]]:
    """The docstore metadata of ``ids`` (the faiss rows in order) from ``index.pkl``;
    ``{}`` for a row whose document holds none."""
    with path.open("rb") as f:
        payload = _DocstoreUnpickler(f).load()
    docs = _state_dict(payload[0]).get("_dict", {})
    out = []
    for vid in ids:
        doc = docs.get(vid)
        meta = _state_dict(doc).get("metadata") if doc is not None else None
        out.append(dict(meta) if isinstance(meta, Mapping) else {})
    return out
