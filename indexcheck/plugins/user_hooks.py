"""``py:module:function`` hooks: a user's own callable, loaded once for every seam that takes
one (embedders, judges).

``load_hook(target, "embedder", "embed")`` imports ``module`` and returns the callable and
its ``model_id``: the named function, or the named object's ``embed`` method (``judge`` for
judges) when it has one. An import that fails is bad input (exit 2); an import that calls
``sys.exit()`` is :class:`HookExitError` (exit 3): an exit 0 must never pass a check that
did not run.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import BackendError, SpecError


class HookExitError(BackendError):
    """A ``py:`` hook called ``sys.exit()``: the run could not finish (exit 3), whatever
    code it asked for; an exit 0 must never pass a check that did not run."""


def _import_here(name: str) -> Any:
    """Import ``name`` as ``python -m`` would from the working folder: the console script
    puts only its own folder on sys.path, so ``py:mymodule:fn`` would not find
    ./mymodule.py. The folder goes last, so an installed module of the same name wins."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        top = name.partition(".")[0]
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(name)


def load_hook(target: str, kind: str, method: str) -> tuple[Callable[..., Any], Any, str]:
    """(callable, the object named, model id) of ``py:target`` for a ``kind`` seam
    ("embedder", "judge") whose objects expose ``method``."""
    module_name, _, attr = target.rpartition(":")
    if not module_name or not attr:
        example = {"embedder": "py:mypkg.emb:embed", "judge": "py:mypkg.judge:grade"}
        raise SpecError(
            f"py:{target} must be py:module:function, e.g. {example.get(kind, 'py:m:f')}"
        )
    try:
        module = _import_here(module_name)
    except ImportError as exc:
        raise SpecError(f"py: cannot import module '{module_name}': {exc}") from None
    except SystemExit as exc:
        raise HookExitError(
            f"importing '{module_name}' for the py:{target} {kind} called "
            f"sys.exit({exc.code!r}); the run could not finish"
        ) from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise SpecError(f"py: module '{module_name}' has no attribute '{attr}'")
    fn = getattr(obj, method) if hasattr(obj, method) else obj
    if not callable(fn):
        raise SpecError(f"py:{target} is not callable")
    return fn, obj, str(getattr(obj, "model_id", f"py:{target}"))


__all__ = ["HookExitError", "load_hook"]
