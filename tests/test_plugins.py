"""Plugins: schemes resolve through entry points, for third-party and built-in stores alike.

The example package ``examples/indexcheck-dictstore`` is installed with pip into a
temporary folder (offline: no dependencies, no build isolation) and put on sys.path, so
its ``indexcheck.stores`` entry point is found the way an installed plugin's would be.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

import indexcheck.embedders as embedders_pkg
import indexcheck.stores as stores_pkg
from indexcheck.errors import SpecError
from indexcheck.stores import BaseStore, open_store, store_class
from indexcheck.stores.faiss_store import FaissStore, write_faiss_folder
from tests.store_contract import check_store_contract

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "indexcheck-dictstore"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    target = tmp_path_factory.mktemp("site")
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
            str(EXAMPLE),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        yield target
    finally:
        sys.path.remove(str(target))
        sys.modules.pop("indexcheck_dictstore", None)
        importlib.invalidate_caches()


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
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group="indexcheck.stores")}
    assert eps["dict"].value == "indexcheck_dictstore:DictStore"
    cls = store_class("dict")
    assert cls.__module__ == "indexcheck_dictstore"
    assert str(plugin_path) in sys.modules["indexcheck_dictstore"].__file__
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
        module = importlib.import_module("indexcheck_dictstore")
        own = [k for k, v in vars(module.DictStore).items() if callable(v)]
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("indexcheck_dictstore", None)
    assert len(own) <= 3, own


class TaggedFaiss(FaissStore):
    """A stand-in registered under the built-in scheme, to see which path opens it."""


def test_builtin_schemes_resolve_through_entry_points(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rng = np.random.default_rng(1)
    write_faiss_folder(tmp_path / "ix", ["a", "b"], rng.standard_normal((2, 4)))
    registered = [EntryPoint("faiss", f"{__name__}:TaggedFaiss", "indexcheck.stores")]
    monkeypatch.setattr(stores_pkg, "entry_points", lambda group: registered)
    store = open_store(f"faiss:{tmp_path / 'ix'}")
    assert type(store) is TaggedFaiss
    # with no entry points at all (a source checkout), the built-in table still works
    monkeypatch.setattr(stores_pkg, "entry_points", lambda group: [])
    assert type(open_store(f"faiss:{tmp_path / 'ix'}")) is FaissStore


def fake_embedder(rest: str) -> object:
    return ("fake", rest)


def test_embedders_resolve_through_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    registered = [EntryPoint("fake", f"{__name__}:fake_embedder", "indexcheck.embedders")]
    monkeypatch.setattr(embedders_pkg, "entry_points", lambda group: registered)
    assert embedders_pkg.open_embedder("fake:model-x") == ("fake", "model-x")
    with pytest.raises(SpecError, match="unknown embedder"):
        embedders_pkg.open_embedder("nope:x")


def test_pyproject_registers_every_builtin_scheme() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert meta["indexcheck.stores"] == stores_pkg.BACKENDS
    assert meta["indexcheck.embedders"] == embedders_pkg.BUILTIN
    for target in stores_pkg.BACKENDS.values():
        module, _, name = target.partition(":")
        assert issubclass(getattr(importlib.import_module(module), name), BaseStore)
