"""Where option defaults come from: ``[tool.indexcheck]`` in pyproject.toml, indexcheck.toml,
``--config`` on the command itself; every table's unknown key is exit 2 with a did-you-mean."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli

FAKE = "py:indexcheck.testing:HASH32"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("INDEXCHECK_STORE", "INDEXCHECK_EMBEDDER"):
        monkeypatch.delenv(var, raising=False)
    rows = [{"id": f"c{i}", "text": f"chunk number {i} about topic {i % 7}"} for i in range(30)]
    (tmp_path / "chunks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run("embed", "--chunks", "chunks.jsonl", "--embedder", FAKE, "--faiss", "index")
    assert done[0] == 0, done
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(f'[project]\nname = "kb"\n\n{body}', encoding="utf-8")


CHECK = f'store = "faiss:index"\nembedder = "{FAKE}"\nchunks = "chunks.jsonl"\n'


def test_check_index_reads_its_options_from_tool_indexcheck(project: Path) -> None:
    _pyproject(project, f"[tool.indexcheck.check-index]\n{CHECK}sample = 12\n")
    code, out, err = run("check-index", "--json", "r.json")
    assert code == 0, err
    result = json.loads((project / "r.json").read_text())
    assert result["schema_version"] == 2 and result["checked"] == 12


def test_indexcheck_toml_wins_over_pyproject(project: Path) -> None:
    _pyproject(project, "[tool.indexcheck.check-index]\nsample = 12\n")
    (project / "indexcheck.toml").write_text(f"[check-index]\n{CHECK}sample = 7\n")
    code, _, err = run("check-index", "--json", "r.json")
    assert code == 0, err
    assert json.loads((project / "r.json").read_text())["checked"] == 7


def test_config_is_an_option_of_the_command_itself(project: Path) -> None:
    (project / "mine.toml").write_text(f"[check-index]\n{CHECK}sample = 5\n")
    code, _, err = run("check-index", "--config", "mine.toml", "--json", "r.json")
    assert code == 0, err
    assert json.loads((project / "r.json").read_text())["checked"] == 5
    # the command's own --config replaces the file found in the folder (here one with a typo)
    (project / "indexcheck.toml").write_text("[check-index]\nsampel = 3\n")
    assert run("check-index", "--config", "mine.toml", "--json", "r.json")[0] == 0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("[tool.indexcheck.check-index]\nsampel = 3\n", "did you mean sample?"),
        ("[tool.indexcheck.defaults]\nembeder = 'minilm'\n", "did you mean embedder?"),
        ("[tool.indexcheck.chek-index]\nsample = 3\n", "did you mean check-index?"),
    ],
)
def test_a_typo_in_any_table_is_exit_2_with_a_did_you_mean(
    project: Path, body: str, said: str
) -> None:
    _pyproject(project, body)
    code, _, err = run("check-index", "--store", "faiss:index", "--chunks", "chunks.jsonl")
    assert code == 2 and said in err, err


def test_a_typo_in_a_ci_table_is_exit_2_with_a_did_you_mean(project: Path) -> None:
    _pyproject(
        project,
        '[tool.indexcheck.ci]\nstore = "faiss:index"\n[tool.indexcheck.ci.probe-scale]\n'
        'expcet = "dot"\n',
    )
    code, _, err = run("ci")
    assert code == 2 and "did you mean expect?" in err, err


def test_a_pyproject_without_the_table_is_not_a_config(project: Path) -> None:
    _pyproject(project, "[tool.ruff]\nline-length = 100\n")
    code, _, err = run("check-index", "--chunks", "chunks.jsonl")
    assert code == 2 and "--store" in err  # no defaults came from it, and no error either
    assert os.path.exists(project / "pyproject.toml")
