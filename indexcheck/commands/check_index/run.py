"""check-index's run entry: the chunks read first (a bad file is refused before anything is
opened or paid for), then the engine, the store and the embedder the settings name opened
through their owners' openers, the check, the manifest stamped once with the seed and the
chunks file."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack

from ...engines import entered_engine
from ...output.manifest import Run, stamp
from ...stores.opening import opened
from .. import check_index as package  # its functions looked up at call time
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .result import CheckIndexResult
from .settings import CheckIndexSettings


def run_check_index(
    settings: CheckIndexSettings,
    progress: Callable[[str], None] | None = None,
    tick: Callable[[str, int, int | None], None] | None = None,
) -> CheckIndexResult:
    """The result of :func:`indexcheck.api.check_index`."""
    corpus = package.read_chunks(settings)
    started = Run("check-index")
    with ExitStack() as stack:
        stream = settings.stream
        runner = entered_engine(stack, settings.engine, settings.ray_address) if stream else None
        found = opened(
            settings.store, settings.embedder, trust_pickle=settings.trust_pickle,
            cache=settings.cache, lookups=not settings.every,
        )  # fmt: skip
        s, e = stack.enter_context(found)
        result = package.check_index(settings, s, e, corpus, progress, tick, engine=runner)
        rows = {"rows": str(settings.rows)} if settings.rows is not None else {}
        stamp(result, started, s, e, seed=settings.seed, chunks=settings.chunks_path, **rows)
        return result


__all__ = ["run_check_index"]
