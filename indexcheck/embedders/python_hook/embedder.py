"""``py:module:function``: a user's own embedding callable.

The object named may be a function ``f(texts: list[str]) -> array (n, d)``, or an
object with ``embed(texts)`` and optionally ``dimension`` and ``model_id``. When no
dimension is declared, one probe text is embedded at start to learn it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...plugins.user_hooks import HookExitError, load_hook
from ..base import BaseEmbedder


class PythonHookEmbedder(BaseEmbedder):
    """Calls a user's function in batches, with the base's retries and accounting."""

    batch_size = 256

    def __init__(self, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target
        self._fn, obj, self.model_id = load_hook(target, "embedder", "embed")
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


__all__ = ["HookExitError", "PythonHookEmbedder"]
