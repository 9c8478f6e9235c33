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

_MOVED = {
    "assert_grounded": "indexcheck.cli.assertions",
    "assert_index_aligned": "indexcheck.cli.assertions",
    "assert_no_ann_miss": "indexcheck.cli.assertions",
    "assert_threshold_separates": "indexcheck.cli.assertions",
    "check_passed": "indexcheck.cli.assertions",
    "root_finding": "indexcheck.cli.assertions",
    "summary_text": "indexcheck.cli.assertions",
}

if TYPE_CHECKING:
    from .cli.assertions import (
        assert_grounded,
        assert_index_aligned,
        assert_no_ann_miss,
        assert_threshold_separates,
        check_passed,
        root_finding,
        summary_text,
    )


class IndexcheckAssertionError(AssertionError):
    """A check that did not pass. ``result`` is the check's result; ``str(exc)`` its root
    finding, then its terminal summary (plain text, no colour)."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'indexcheck.assertions' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MOVED])


__all__ = [
    "IndexcheckAssertionError",
    "assert_grounded",
    "assert_index_aligned",
    "assert_no_ann_miss",
    "assert_threshold_separates",
    "check_passed",
    "root_finding",
    "summary_text",
]
