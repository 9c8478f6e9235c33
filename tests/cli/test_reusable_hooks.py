"""The GitHub Action (action.yml) and the pre-commit hook (.pre-commit-hooks.yaml) run
commands that work: their `run`/`entry` lines run here, on a small index, through bash and
the installed `indexcheck` script, with the exit codes a CI reads (0 pass, 2 a bad config)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from indexcheck.stores.faiss.store import write_faiss_folder

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "indexcheck"


def _project(tmp_path: Path, table: str = 'expect = "dot"') -> Path:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    if not (tmp_path / "index").exists():
        write_faiss_folder(tmp_path / "index", [f"c{i}" for i in range(60)], x)
    (tmp_path / "indexcheck.toml").write_text(
        f'[ci]\nstore = "faiss:index"\n\n[ci.probe-scale]\n{table}\n', encoding="utf-8"
    )
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), INDEXCHECK_QUIET="1", **extra)
    env["PATH"] = f"{SCRIPT.parent}{os.pathsep}{env['PATH']}"
    env["INDEXCHECK_CACHE_DIR"] = extra.get("INDEXCHECK_CACHE_DIR", env.get("TMPDIR", "/tmp"))
    return env


def _bash(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.fixture(autouse=True)
def _script() -> None:
    if not SCRIPT.is_file() or shutil.which("bash") is None:
        pytest.skip("the indexcheck script or bash is not installed here")


def test_the_action_installs_the_checkout_and_runs_ci_with_its_inputs(tmp_path: Path) -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    install, run_ci = action["runs"]["steps"]
    # the install step is pip on the action's own checkout (not run here: it needs the index)
    assert (
        install["run"].startswith("python -m pip install")
        and "GITHUB_ACTION_PATH" in (install["run"])
    )
    project = _project(tmp_path)
    inputs = {k.upper(): str(v.get("default", "")) for k, v in action["inputs"].items()}
    env = _env(**{k: inputs[k] for k in run_ci["env"]}, INDEXCHECK_CACHE_DIR=str(tmp_path))
    done = _bash(run_ci["run"], project, env)
    assert done.returncode == 0, done.stderr
    assert (project / inputs["JUNIT"]).is_file()
    # a blocking gate fails the step (exit 1), as a CI job must see it
    (project / "indexcheck.toml").write_text(
        '[ci]\nstore = "faiss:index"\n\n[ci.probe-scale]\nexpect = "l2"\n', encoding="utf-8"
    )
    assert _bash(run_ci["run"], project, env).returncode == 1


def test_the_pre_commit_hook_entry_runs_ci_and_names_a_config_typo(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "indexcheck-ci" and hook["pass_filenames"] is False
    project = _project(tmp_path)
    env = _env(INDEXCHECK_CACHE_DIR=str(tmp_path))
    entry = shlex.split(hook["entry"])
    assert _bash(shlex.join(entry), project, env).returncode == 0
    _project(tmp_path, 'expcet = "dot"')
    done = _bash(shlex.join(entry), project, env)
    assert done.returncode == 2
    assert "did you mean expect?" in done.stderr
