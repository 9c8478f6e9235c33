"""What a failed indexcheck assertion raises, and the assertions' import path for users.

:class:`IndexcheckAssertionError` lives here, below everything, so a failing test names it
``indexcheck.assertions.IndexcheckAssertionError`` wherever it is raised. The assertions
themselves live in :mod:`indexcheck.cli.assertions`, a front end over :mod:`indexcheck.api`
beside the CLI; ``from indexcheck.assertions import assert_index_aligned`` (or
``indexcheck.testing``) keeps working: this module names them there and loads that module on
first use, as the package face loads :mod:`indexcheck.api`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .lazy_names import lazy_names

if TYPE_CHECKING:
    from .cli.assertions import *  # noqa: F403 (the names of __all__ below)


class IndexcheckAssertionError(AssertionError):
    """A check that did not pass. ``result`` is the check's result; ``str(exc)`` its root
    finding, then its terminal summary (plain text, no colour)."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


#: the assertions, in :mod:`indexcheck.cli.assertions`
_IN_CLI = (
    "assert_grounded assert_index_aligned assert_no_ann_miss assert_threshold_separates "
    "check_passed root_finding summary_text"
).split()
__all__ = ["IndexcheckAssertionError", *_IN_CLI]
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(_IN_CLI, "indexcheck.cli.assertions"))
