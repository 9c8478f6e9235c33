"""Where a repaired copy is written (``--out``, parsed at the face into a
:class:`~indexcheck.stores.targets.TargetSpec`): one writer per target
kind over a small protocol (:mod:`.protocol`: open, write a batch, commit, abort), and the
staging folder published whole (:mod:`.folder`). Writing lives here and only here: the
stores under :mod:`indexcheck.stores` are read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....stores.targets import TargetSpec
from .folder import Written, write_copy
from .parquet import PARQUET
from .protocol import Batch, Source


def source_of(store: Any) -> Source:
    """The source facts a target is written by: kind, metric, ``info().details`` (and, for
    a FAISS folder, ``faiss_layout``: ``langchain`` or ``indexcheck``)."""
    kind = str(getattr(store, "scheme", "") or "")
    info = store.info()
    details = dict(info.details or {})
    if kind == "faiss":
        folder = Path(store.folder)
        name = getattr(store, "index_name", "") or ""
        pkl = folder / f"{name or 'index'}.pkl"
        langchain = pkl.is_file() and (bool(name) or not (folder / "ids.json").is_file())
        details["faiss_layout"] = "langchain" if langchain else "indexcheck"
    metric = str(getattr(store, "metric", "") or info.metric or "")
    return Source(kind, metric, details)


__all__ = ["PARQUET", "Batch", "Source", "TargetSpec", "Written", "source_of",
           "write_copy"]  # fmt: skip
