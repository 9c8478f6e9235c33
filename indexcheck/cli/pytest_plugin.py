"""The pytest plugin (entry point ``pytest11``): options and fixtures, nothing automatic.

Options ``--indexcheck-store SPEC``, ``--indexcheck-embedder SPEC`` and
``--indexcheck-trust-pickle``; session-scoped fixtures ``indexcheck_store`` and
``indexcheck_embedder``, opened on first use. Each value is looked up as the CLI looks it
up (command line, ``INDEXCHECK_STORE``/``INDEXCHECK_EMBEDDER``, then ``indexcheck.toml``
through the CLI's own reader). A test asking for a store when none is configured fails
(an error, so a forgotten option never turns CI green), saying how to configure one; a
local run opts out with the ini option ``indexcheck_skip_without_store = true`` or
``INDEXCHECK_SKIP_WITHOUT_STORE=1`` (the test is skipped instead). The embedder falls back
to the default model, as the CLI's does.

A front end beside the CLI; the assertions live in :mod:`indexcheck.testing.assertions`.
Only pytest is imported at load time, so a suite that never asks for the fixtures pays
nothing for the plugin.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_EMBEDDER = "minilm"
NO_STORE = (
    "no index configured for indexcheck: pass --indexcheck-store SPEC (e.g. "
    'faiss:./index), set INDEXCHECK_STORE, or put store = "SPEC" under [defaults] in '
    "indexcheck.toml"
)
SKIP_ENV = "INDEXCHECK_SKIP_WITHOUT_STORE"
OPT_OUT = (
    f"; to skip such tests instead (a local run), set {SKIP_ENV}=1 or "
    "indexcheck_skip_without_store = true in the [pytest] ini"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("indexcheck", "indexcheck: check the RAG index under test")
    group.addoption(
        "--indexcheck-store",
        default=None,
        metavar="SPEC",
        help="Store for the indexcheck_store fixture, e.g. faiss:./index "
        "[env INDEXCHECK_STORE; indexcheck.toml store].",
    )
    group.addoption(
        "--indexcheck-embedder",
        default=None,
        metavar="SPEC",
        help=f"Embedder for the indexcheck_embedder fixture [env INDEXCHECK_EMBEDDER; "
        f"indexcheck.toml embedder; default {DEFAULT_EMBEDDER}].",
    )
    group.addoption(
        "--indexcheck-trust-pickle",
        action="store_true",
        default=None,
        help="Let the store fixture read pickled docstores (LangChain FAISS) "
        "[indexcheck.toml trust-pickle].",
    )
    parser.addini(
        "indexcheck_skip_without_store",
        "Skip, rather than fail, tests asking for indexcheck_store when no store is "
        f"configured (local runs) [env {SKIP_ENV}=1].",
        type="bool",
        default=False,
    )


def _skips_without_store(config: pytest.Config) -> bool:
    env = os.environ.get(SKIP_ENV, "").strip().lower()
    return env in ("1", "true", "yes") or bool(config.getini("indexcheck_skip_without_store"))


def setting(config: pytest.Config, name: str) -> tuple[Any, str]:
    """``store``, ``embedder`` or ``trust_pickle`` and where it came from: the option, then
    the environment variable, then indexcheck.toml (``(None, "")`` when none gives it)."""
    option = f"--indexcheck-{name.replace('_', '-')}"
    given = config.getoption(f"indexcheck_{name}")
    if given is not None:
        return given, option
    env = f"INDEXCHECK_{name.upper()}"
    if name != "trust_pickle" and os.environ.get(env):
        return os.environ[env], env
    path, table = _from_config(config)
    value = table.get(f"{name}_spec" if name != "trust_pickle" else name)
    return (value, str(path)) if value is not None else (None, "")


def _from_config(config: pytest.Config) -> tuple[Path, dict[str, Any]]:
    """What ``indexcheck check-index`` reads from indexcheck.toml (the rootdir's, else the
    working directory's); bad input fails the fixture with the CLI's one-line message."""
    from ..errors import IndexcheckError
    from .app import CONFIG_FILE, _load_config

    path = Path(config.rootpath) / CONFIG_FILE
    if not path.is_file():
        path = Path(CONFIG_FILE)
    try:
        defaults = _load_config(path if path.is_file() else None)
    except IndexcheckError as exc:
        pytest.fail(f"indexcheck: {exc}", pytrace=False)
    return path, defaults.get("check-index", {})


@pytest.fixture(scope="session")
def indexcheck_store(pytestconfig: pytest.Config) -> Iterator[Any]:
    """The configured store, opened read-only once per session and closed after it."""
    spec, source = setting(pytestconfig, "store")
    if not spec:
        if _skips_without_store(pytestconfig):
            pytest.skip(NO_STORE)
        pytest.fail(f"indexcheck: {NO_STORE}{OPT_OUT}", pytrace=False)
    from .. import open_store
    from ..errors import IndexcheckError

    trust = bool(setting(pytestconfig, "trust_pickle")[0])
    try:
        store = open_store(spec, trust_pickle=trust)
    except IndexcheckError as exc:
        pytest.fail(
            f"indexcheck: cannot open the store {spec} (from {source}): {exc}", pytrace=False
        )
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(scope="session")
def indexcheck_embedder(pytestconfig: pytest.Config) -> Iterator[Any]:
    """The configured embedder (default: the default model), each distinct text embedded
    once per session; closed after it."""
    spec, source = setting(pytestconfig, "embedder")
    if not spec:
        spec, source = DEFAULT_EMBEDDER, "the default"
    from .. import open_embedder
    from ..api import CachedEmbedder
    from ..errors import IndexcheckError

    try:
        inner = open_embedder(spec)
    except IndexcheckError as exc:
        pytest.fail(
            f"indexcheck: cannot open the embedder {spec} (from {source}): {exc}", pytrace=False
        )
    try:
        yield CachedEmbedder(inner, None)
    finally:
        close = getattr(inner, "close", None)
        if callable(close):
            close()


__all__ = ["indexcheck_embedder", "indexcheck_store", "pytest_addoption", "setting"]
