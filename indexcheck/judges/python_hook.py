"""``py:module:function``: a user's own judge, called as ``function(question, context, answer)``.

It returns the judge's raw reply: a string to parse, or a dict already parsed. A repair
request calls it again with the same arguments (a hook cannot read the repair message);
an object with ``judge(question, context, answer)`` and ``model_id`` works too.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..embedders.python_hook import HookExitError
from ..errors import BackendError, IndexcheckError, SpecError, TransientError
from .base import BaseJudge, JudgeRequest, RawReply


class PythonHookJudge(BaseJudge):
    """Calls a user's function per answer, with the base's accounting."""

    def __init__(self, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        module_name, _, attr = target.rpartition(":")
        if not module_name or not attr:
            raise SpecError(f"py:{target} must be py:module:function, e.g. py:mypkg.judge:grade")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SpecError(f"py: cannot import module '{module_name}': {exc}") from None
        except SystemExit as exc:
            raise HookExitError(
                f"importing '{module_name}' for the py:{target} judge called "
                f"sys.exit({exc.code!r}); the run could not finish"
            ) from None
        self.target = target
        obj = getattr(module, attr, None)
        if obj is None:
            raise SpecError(f"py: module '{module_name}' has no attribute '{attr}'")
        self._fn = obj.judge if hasattr(obj, "judge") else obj
        if not callable(self._fn):
            raise SpecError(f"py:{target} is not callable")
        self.model_id = str(getattr(obj, "model_id", f"py:{target}"))

    def _complete(self, request: JudgeRequest) -> tuple[RawReply, int]:
        try:
            reply = self._fn(request.question, request.context, request.answer)
        except SystemExit as exc:
            raise HookExitError(
                f"the py:{self.target} judge called sys.exit({exc.code!r}); the run could not "
                "finish. A judge hook must return its reply or raise an exception"
            ) from None
        except (IndexcheckError, TransientError):
            raise
        except Exception as exc:  # the user's code: named, never the catch-all
            raise BackendError(
                f"the py:{self.target} judge raised {type(exc).__name__}: {exc}; the run "
                "could not finish (fix the hook; INDEXCHECK_DEBUG=1 shows its traceback)"
            ) from exc
        if not isinstance(reply, str | dict):
            reply = repr(reply)  # kept as an unparseable reply, never silently dropped
        return reply, 0
