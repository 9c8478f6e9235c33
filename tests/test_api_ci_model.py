"""The face functions the ``ci`` and ``model`` commands call: reading a ``[ci]`` config and a
baseline, writing ci's JUnit file and report, and the default model's status."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from indexcheck import api
from indexcheck.errors import DataFileError
from tests.commands.ci.test_gates import make_kb, write_config


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_kb(tmp_path_factory.mktemp("kb"))


def test_a_ci_run_from_paths_writes_junit_and_report(kb: dict[str, Path], tmp_path: Path) -> None:
    """A config path, then a baseline path (the first run's JSON): the run compares with it,
    and its JUnit file and report are written through the face."""
    path = write_config(kb, check_index="", compare_ann="")
    config = api.read_ci_config(path)
    assert config.store.startswith("faiss:") and config.diagnose is not None
    first = api.run_ci(path)
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps(first.to_dict()))
    assert api.read_baseline(base)["_path"] == str(base)
    again = api.run_ci(config, base)
    assert again.ok and again.baseline is not None and again.baseline["path"] == str(base)
    assert again.manifest["command"] == "ci"
    api.write_ci_junit(again, tmp_path / "junit.xml")
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    files = api.write_ci_report(again, tmp_path / "report")
    assert {p.name for p in files} >= {"report.html", "report.md"}


def test_a_missing_config_or_baseline_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(DataFileError):
        api.read_ci_config(tmp_path / "nope.toml")
    with pytest.raises(DataFileError):
        api.read_baseline(tmp_path / "nope.json")


def test_model_status_names_each_pinned_file() -> None:
    rows = api.model_status()
    assert rows and all({"package", "file", "ok"} <= set(r) for r in rows)


def test_install_model_with_the_files_verified_does_nothing() -> None:
    if not all(r["ok"] for r in api.model_status()):
        pytest.skip("the model files are not installed here")
    said: list[str] = []
    outcome = api.install_model(said.append)
    assert outcome.already and outcome.error is None and said == []
