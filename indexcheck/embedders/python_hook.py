"""``py:module:function``: a user's own embedding callable.

The object named may be a function ``f(texts: list[str]) -> array (n, d)``, or an
object with ``embed(texts)`` and optionally ``dimension`` and ``model_id``. When no
dimension is declared, one probe text is embedded at start to learn it.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ..errors import BackendError, SpecError
from .base import BaseEmbedder


class HookExitError(BackendError):
    """A ``py:`` hook called ``sys.exit()``: the run could not finish (exit 3), whatever
    code it asked for; an exit 0 must never pass a check that did not run."""


class PythonHookEmbedder(BaseEmbedder):
    """Calls a user's function in batches, with the base's retries and accounting."""

    batch_size = 256

    def __init__(self, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        module_name, _, attr = target.rpartition(":")
        if not module_name or not attr:
            raise SpecError(f"py:{target} must be py:module:function, e.g. py:mypkg.emb:embed")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SpecError(f"py: cannot import module '{module_name}': {exc}") from None
        except SystemExit as exc:
            raise HookExitError(
                f"importing '{module_name}' for the py:{target} embedder called "
                f"sys.exit({exc.code!r}); the run could not finish"
            ) from None
        obj = getattr(module, attr, None)
        if obj is None:
            raise SpecError(f"py: module '{module_name}' has no attribute '{attr}'")
        self.target = target
        self._fn = obj.embed if hasattr(obj, "embed") else obj
        if not callable(self._fn):
            raise SpecError(f"py:{target} is not callable")
        self.model_id = str(getattr(obj, "model_id", f"py:{target}"))
        dim = getattr(obj, "dimension", None)
        if dim is None:
            dim = np.asarray(self._call(["dimension probe"])).shape[-1]
        self.dimension = int(dim)

    def _call(self, texts: list[str]) -> Any:
        try:
            return self._fn(texts)
        except SystemExit as exc:
            raise HookExitError(
                f"the py:{self.target} embedder called sys.exit({exc.code!r}); the run could "
                "not finish. A hook must return vectors or raise an exception"
            ) from None

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        vecs = np.asarray(self._call(list(texts)), dtype=np.float32)
        return vecs, sum(len(t.split()) for t in texts)
