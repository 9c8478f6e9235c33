"""compare-ann from its settings: check and parse what was given, open what the specs name,
measure, stamp the manifest once, close."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace

from ...engines import entered_engine
from ...inputs.given import corpus_of
from ...output.manifest import Run, stamp
from ...stores.opening import opened, swept_opener
from ..kit.exact import engine_scope
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .compare import compare_ann, fetch_depths
from .result import AnnResult
from .settings import CompareAnnSettings, swept
from .setup import check_choices, common_filter, manifest_facts, prepare_queries


def run_compare_ann(
    settings: CompareAnnSettings, progress: Callable[[str], None] | None = None
) -> AnnResult:
    """compare-ann as :func:`indexcheck.api.compare_ann` documents it. Everything that can
    be refused without opening anything is refused first, in this order: the query and
    truth sources, the fetch depths, the filter and the sweep (JSON and ``KEY=V1,V2`` text
    parsed), the chunks file, the sweep parameter."""
    s = settings
    check_choices(s.truth_from, s.truth_store, s.questions, s.query_vectors)
    fetch_depths(s.k, s.fetch)
    common = common_filter(s.filter)
    sweep = swept(s.sweep)
    s = replace(s, filter=common, sweep=sweep)
    corpus = corpus_of(s.chunks, s.id_column, s.text_column)
    open_at = swept_opener(s.store, sweep, s.trust_pickle)  # a bad parameter: before any work
    started = Run("compare-ann")
    with ExitStack() as stack:
        stack.enter_context(engine_scope(entered_engine(stack, s.engine, s.ray_address)))
        uses = s.embedder if s.truth_from == "chunks" or s.questions is not None else False
        found = opened(s.store, uses, trust_pickle=s.trust_pickle, cache=s.cache)
        store, e = stack.enter_context(found)
        t, _ = stack.enter_context(opened(s.truth_store, trust_pickle=s.trust_pickle))
        tv, qs, filters = prepare_queries(s, store, t, e, corpus, progress)
        measured = replace(s, true_vectors=tv, filters=filters)
        result = compare_ann(measured, store, qs, progress, open_at)
        stamp(result, started, store, e, seed=s.seed, **manifest_facts(qs, filters))
        return result


__all__ = ["run_compare_ann"]
