"""embed's run entry: the chunks read and the outputs checked first, then the embedder the
settings name opened through its owner's opener, the run, the manifest stamped once."""

from __future__ import annotations

from collections.abc import Callable

from ...output.manifest import Run, stamp
from ...stores.opening import opened
from . import EmbedResult, EmbedSettings, embed, embed_inputs


def run_embed(
    settings: EmbedSettings, progress: Callable[[str], None] | None = None
) -> EmbedResult:
    """The result of :func:`indexcheck.api.embed`."""
    corpus, started = embed_inputs(settings), Run("embed")
    with opened(None, settings.embedder, cache=settings.cache) as (_, e):
        result = embed(settings, e, corpus, progress)
        stamp(result, started, None, e)
        return result


__all__ = ["run_embed"]
