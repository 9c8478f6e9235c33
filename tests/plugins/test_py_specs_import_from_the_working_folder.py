"""``py:mymodule:fn`` finds ``mymodule.py`` in the folder the command runs in, as the README's
examples assume: the ``indexcheck`` console script does not put that folder on sys.path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import indexcheck
from indexcheck.errors import SpecError

HOOK = """
import numpy as np

def embed(texts):
    return np.ones((len(texts), 3), dtype=np.float32)
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_local_embed.py").write_text(HOOK)
    monkeypatch.chdir(tmp_path)
    # as under the console script: neither the folder nor "" (the current one) on sys.path
    here = {"", ".", os.getcwd(), str(tmp_path)}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in here])
    monkeypatch.delitem(sys.modules, "my_local_embed", raising=False)
    return tmp_path


def test_a_py_embedder_in_the_working_folder_is_found(folder: Path) -> None:
    emb = indexcheck.open_embedder("py:my_local_embed:embed")
    assert np.asarray(emb.embed(["a", "b"])).shape == (2, 3)


def test_a_module_in_no_folder_still_says_what_is_wrong(folder: Path) -> None:
    with pytest.raises(SpecError, match="cannot import module 'not_here_at_all'"):
        indexcheck.open_embedder("py:not_here_at_all:embed")
