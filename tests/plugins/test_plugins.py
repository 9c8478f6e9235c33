"""Plugins: one pluggy manager, through which built-in and third-party stores, embedders,
judges and commands register alike.

The example package ``examples/indexcheck-dictstore`` is installed with pip into a
temporary folder (offline: no dependencies, no build isolation) and put on sys.path, so
its ``indexcheck`` entry point is found the way an installed plugin's would be.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

import indexcheck.embedders as embedders_pkg
import indexcheck.plugins as plugins
import indexcheck.stores as stores_pkg
from indexcheck.errors import SpecError
from indexcheck.plugins import defaults as default_plugins
from indexcheck.stores import BaseStore, open_store, store_class
from indexcheck.stores.faiss.store import FaissStore, write_faiss_folder
from tests.store_contract import check_store_contract

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "indexcheck-dictstore"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    target = tmp_path_factory.mktemp("site")
    # built from a private copy: pip builds in the source folder (build/, *.egg-info), and two
    # workers installing from one folder at once took each other's build from under them
    source = tmp_path_factory.mktemp("example") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    plugins.reset()
    try:
        yield target
    finally:
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m.startswith("indexcheck_dictstore")]:
            sys.modules.pop(name)
        importlib.invalidate_caches()
        plugins.reset()


def _npz(tmp_path: Path) -> tuple[Path, list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    ids = [f"c{i}" for i in range(23)]
    vectors = rng.standard_normal((23, 8)).astype(np.float32)
    path = tmp_path / "v.npz"
    np.savez(path, **dict(zip(ids, vectors, strict=True)))
    return path, ids, vectors


def test_installed_plugin_resolves_through_its_entry_point(
    plugin_path: Path, tmp_path: Path
) -> None:
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group="indexcheck")}
    assert eps["dict"].value == "indexcheck_dictstore"
    cls = store_class("dict")
    assert cls.__module__ == "indexcheck_dictstore.store"
    assert str(plugin_path) in sys.modules["indexcheck_dictstore"].__file__
    assert plugins.registry("stores").owners["dict"] == "dict"  # the entry point's name
    path, ids, vectors = _npz(tmp_path)
    with open_store(f"dict:{path}?metric=ip") as store:
        assert type(store) is cls and isinstance(store, BaseStore)
        check_store_contract(store, ids, vectors)
        assert store.info().metric == "ip"
    with pytest.raises(SpecError, match="unknown option 'metrc' for dict; did you mean metric"):
        open_store(f"dict:{path}?metrc=ip")


def test_example_store_implements_at_most_three_methods() -> None:
    sys.path.insert(0, str(EXAMPLE))
    try:
        module = importlib.import_module("indexcheck_dictstore.store")
        own = [k for k, v in vars(module.DictStore).items() if callable(v)]
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in [m for m in sys.modules if m.startswith("indexcheck_dictstore")]:
            sys.modules.pop(name)
    assert len(own) <= 3, own


def test_example_plugin_adds_a_command(plugin_path: Path, tmp_path: Path) -> None:
    path, ids, _ = _npz(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(ROOT)])}
    cmd = [sys.executable, "-c", "from indexcheck.cli import main; main()"]
    done = subprocess.run(
        [*cmd, "dict-info", str(path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{len(ids)} vectors, dimension 8"
    listed = subprocess.run([*cmd, "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert "dict-info" in listed.stdout and "check-index" in listed.stdout


class TaggedFaiss(FaissStore):
    """A stand-in registered under the built-in scheme by a second plugin."""


class _ClashingPlugin:
    @plugins.hookimpl
    def register_stores(self, register: object) -> None:
        register("faiss", f"{__name__}:TaggedFaiss")  # type: ignore[operator]


class _CommandPlugin:
    @plugins.hookimpl
    def register_commands(self, cli: object) -> None:
        import click

        cli.add_command(click.Command("check-index", callback=lambda: None))  # type: ignore[attr-defined]


@pytest.fixture
def fresh_manager() -> Iterator[None]:
    plugins.reset()
    try:
        yield
    finally:
        plugins.reset()


def test_builtins_register_through_the_hooks(
    fresh_manager: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rng = np.random.default_rng(1)
    write_faiss_folder(tmp_path / "ix", ["a", "b"], rng.standard_normal((2, 4)))
    # no installed plugin and no legacy entry point at all: the built-ins still resolve
    monkeypatch.setattr(plugins, "entry_points", lambda group: [])
    monkeypatch.setattr(
        plugins.pluggy.PluginManager,
        "load_setuptools_entrypoints",
        lambda self, group, name=None: 0,
    )
    assert type(open_store(f"faiss:{tmp_path / 'ix'}")) is FaissStore
    stores = plugins.registry("stores")
    assert stores.owners["faiss"] == "indexcheck.plugins.defaults"
    assert set(plugins.registry("judges").names()) == {"mistral", "openai", "py"}


def test_a_second_plugin_for_a_builtin_scheme_is_refused_by_name(
    fresh_manager: None, tmp_path: Path
) -> None:
    rng = np.random.default_rng(1)
    write_faiss_folder(tmp_path / "ix", ["a", "b"], rng.standard_normal((2, 4)))
    plugins.manager().register(_ClashingPlugin(), name="clashing")
    with pytest.raises(
        SpecError,
        match=r"two plugins register the store 'faiss' "
        r"\(indexcheck.plugins.defaults and clashing\); uninstall one",
    ):
        open_store(f"faiss:{tmp_path / 'ix'}")
    # a clash on one scheme leaves the others alone
    assert stores_pkg.store_class("parquet").__name__ == "ParquetStore"


def test_a_plugin_cannot_replace_a_builtin_command(fresh_manager: None) -> None:
    import click

    from indexcheck.cli import app

    plugins.manager().register(_CommandPlugin(), name="cmds")
    group = click.Group("t")
    original = app.cli.commands["check-index"]
    monkey_cli = app.cli
    try:
        app.cli = group  # type: ignore[assignment]
        app._register()
    finally:
        app.cli = monkey_cli
    assert group.commands["check-index"].callback is original.callback


def fake_embedder(rest: str) -> object:
    return ("fake", rest)


def test_legacy_entry_point_groups_still_register(
    fresh_manager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered = {
        "indexcheck.embedders": [
            EntryPoint("fake", f"{__name__}:fake_embedder", "indexcheck.embedders")
        ]
    }
    monkeypatch.setattr(plugins, "entry_points", lambda group: registered.get(group, []))
    assert embedders_pkg.open_embedder("fake:model-x") == ("fake", "model-x")
    with pytest.raises(SpecError, match="unknown embedder"):
        embedders_pkg.open_embedder("nope:x")


def test_every_builtin_target_imports_and_pyproject_lists_none() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "pluggy>=1.3" in meta["dependencies"]
    # the built-ins register through the hooks, not through per-scheme entry points
    assert not {"indexcheck.stores", "indexcheck.embedders"} & set(meta.get("entry-points", {}))
    assert stores_pkg.BACKENDS == default_plugins.STORES
    for target in default_plugins.STORES.values():
        module, _, name = target.partition(":")
        assert issubclass(getattr(importlib.import_module(module), name), BaseStore)
    for table in (default_plugins.EMBEDDERS, default_plugins.JUDGES):
        for target in table.values():
            module, _, name = target.partition(":")
            assert callable(getattr(importlib.import_module(module), name))
