"""The ci run from its settings: read the config and baseline, open the store (and the old
index of ``[ci.diff-index]``) and the embedder, run the checks, stamp once, close."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from ...output.manifest import Run, stamp
from ...stores.opening import opened
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .config import CiConfig, needs_embedder
from .noninferiority import load_baseline
from .result import CiResult
from .settings import CiSettings


def read_config(path: str | Path) -> CiConfig:
    """The ``[ci]`` table of the TOML file ``path``; a missing file, a FIFO or a device is
    bad input (exit 2) saying how to pass one."""
    from ...inputs.files import require_file

    require_file(path, "config file", "pass --config PATH (see examples/indexcheck.toml)")
    return CiConfig.from_toml(Path(path))


def run_configured(settings: CiSettings, progress: Callable[[str], None] | None = None) -> CiResult:
    """Run ``settings``: a config path is read, a baseline path loaded, then the stores and
    embedder the config names are opened for :func:`indexcheck.commands.ci.run_ci` (looked up
    at call time) and closed after it; the result is stamped once here."""
    from . import run_ci as core  # at call time: the package's core, as tests replace it

    config = settings.config
    if not isinstance(config, CiConfig):
        config = CiConfig.from_toml(Path(config))
    baseline = settings.baseline
    if isinstance(baseline, str | Path):
        baseline = load_baseline(baseline)
    started, trust, cache = Run("ci"), config.trust_pickle, config.cache
    with ExitStack() as stack:
        uses = config.embedder if needs_embedder(config) else False
        s, e = stack.enter_context(opened(config.store, uses, trust_pickle=trust, cache=cache))
        old = config.diff_index.old if config.diff_index is not None else None
        old_store, _ = stack.enter_context(opened(old, trust_pickle=trust))
        result: CiResult = core(
            config, baseline, progress, store=s, embedder=e, old_store=old_store,
            baseline_any_store=settings.baseline_any_store,
        )  # fmt: skip
        stamp(result, started, s, e)
        return result
