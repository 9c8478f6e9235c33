"""What users' test suites (and ours) need: fakes and assertions.

- :mod:`.fakes`: :class:`HashEmbedder` (unit vectors from each text's hash, no model),
  :class:`MemoryStore` (an in-memory read-only store with exact search) and
  :func:`positional_cache_bug` (the founding bug, replayed);
- :mod:`.assertions`: ``assert_index_aligned``, ``assert_no_ann_miss``,
  ``assert_threshold_separates`` and ``assert_grounded``, which run a public check and fail
  with its terminal summary (:class:`IndexcheckAssertionError`);
- the pytest plugin's ``--indexcheck-store``/``--indexcheck-embedder`` fixtures are a
  front end beside the CLI (:mod:`indexcheck.cli.pytest_plugin`, entry point ``pytest11``).
"""

from __future__ import annotations

from . import assertions as _assertions
from . import fakes as _fakes
from .assertions import *  # noqa: F403  (the names of its __all__)
from .fakes import *  # noqa: F403

__all__ = [*_assertions.__all__, *_fakes.__all__]
