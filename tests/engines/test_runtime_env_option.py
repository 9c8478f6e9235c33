"""INDEXCHECK_RAY_RUNTIME_ENV: a JSON object or a JSON file's path, refused with one
sentence (exit 2) before Ray is joined when it is neither."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.engines.ray.engine import runtime_env_from
from indexcheck.errors import InputError


def test_a_json_object_or_a_file_holding_one(tmp_path) -> None:
    assert runtime_env_from(None) is None and runtime_env_from("  ") is None
    assert runtime_env_from('{"working_dir": "."}') == {"working_dir": "."}
    path = tmp_path / "env.json"
    path.write_text('{"py_modules": ["hooks"], "pip": ["indexcheck[ray]==0.1.0"]}')
    assert runtime_env_from(str(path)) == {
        "py_modules": ["hooks"],
        "pip": ["indexcheck[ray]==0.1.0"],
    }


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('{"working_dir": ', "is not valid JSON"),
        ("[1, 2]", "is not a JSON object but an array"),
        ("/no/such/env.json", "cannot read /no/such/env.json"),
    ],
)
def test_anything_else_is_refused(value: str, says: str) -> None:
    with pytest.raises(InputError, match=says):
        runtime_env_from(value)


def test_the_cli_refuses_it_with_exit_2_before_joining_ray(small_kb, monkeypatch) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("INDEXCHECK_RAY_RUNTIME_ENV", "{working_dir: .}")
    args = ["check-index", "--store", f"faiss:{small_kb['good']}", "--chunks"]
    args += [str(small_kb["chunks"]), "--all", "--engine", "ray", "--ray-address", "127.0.0.1:1"]
    args += ["--embedder", "py:indexcheck.testing:HASH32"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "INDEXCHECK_RAY_RUNTIME_ENV is not valid JSON" in r.output
    assert "Traceback" not in r.output
