"""``py:module:function``: a user's own judge, called as ``function(question, context, answer)``.

It returns the judge's raw reply: a string to parse, or a dict already parsed. A repair
request calls it again with the same arguments (a hook cannot read the repair message);
an object with ``judge(question, context, answer)`` and ``model_id`` works too.
"""

from __future__ import annotations

from typing import Any

from ...errors import BackendError, IndexcheckError, TransientError
from ...plugins.user_hooks import HookExitError, load_hook
from ..base import BaseJudge, JudgeRequest, RawReply


class PythonHookJudge(BaseJudge):
    """Calls a user's function per answer, with the base's accounting."""

    def __init__(self, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target
        self._fn, _obj, self.model_id = load_hook(target, "judge", "judge")

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
