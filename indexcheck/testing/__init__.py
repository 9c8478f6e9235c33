"""What users' test suites (and ours) need: fakes, assertions and the pytest plugin.

- :mod:`.fakes`: :class:`HashEmbedder` (unit vectors from each text's hash, no model),
  :class:`MemoryStore` (an in-memory read-only store with exact search) and
  :func:`positional_cache_bug` (the founding bug, replayed);
- :mod:`.assertions`: ``assert_index_aligned``, ``assert_no_ann_miss``,
  ``assert_threshold_separates`` and ``assert_grounded``, which run a public check and fail
  with its terminal summary (:class:`IndexcheckAssertionError`);
- :mod:`.pytest_plugin`: the ``--indexcheck-store``/``--indexcheck-embedder`` options and
  their fixtures (entry point ``pytest11``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assertions import (
        IndexcheckAssertionError,
        assert_grounded,
        assert_index_aligned,
        assert_no_ann_miss,
        assert_threshold_separates,
        check_passed,
        root_finding,
        summary_text,
    )
    from .fakes import HASH32, HashEmbedder, MemoryStore, positional_cache_bug

#: name -> the module that defines it, loaded on first use: the pytest plugin lives in this
#: package and loads in every test run of a project with indexcheck installed, so importing
#: the package must pull in neither numpy nor the checks
_HOMES = {
    **dict.fromkeys(["HASH32", "HashEmbedder", "MemoryStore", "positional_cache_bug"], ".fakes"),
    **dict.fromkeys(
        [
            "IndexcheckAssertionError",
            "assert_grounded",
            "assert_index_aligned",
            "assert_no_ann_miss",
            "assert_threshold_separates",
            "check_passed",
            "root_finding",
            "summary_text",
        ],
        ".assertions",
    ),
}
__all__ = [
    "HASH32",
    "HashEmbedder",
    "IndexcheckAssertionError",
    "MemoryStore",
    "assert_grounded",
    "assert_index_aligned",
    "assert_no_ann_miss",
    "assert_threshold_separates",
    "check_passed",
    "positional_cache_bug",
    "root_finding",
    "summary_text",
]
assert sorted(__all__) == sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
