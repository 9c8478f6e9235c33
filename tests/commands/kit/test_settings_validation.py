"""Every command's settings are validated in one place when the face builds them: a number
of the wrong type, NaN or out of range is InputError (exit 2) in one sentence naming the
keyword, before any work; and the command line's option ranges are the settings' own."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest

import indexcheck
from indexcheck.cli.app import cli
from indexcheck.cli.option_types import FiniteFloat
from indexcheck.commands.check_index.settings import CheckIndexSettings
from indexcheck.commands.compare_ann.settings import CompareAnnSettings
from indexcheck.commands.diagnose.settings import DiagnoseSettings
from indexcheck.commands.diff_index.settings import DiffIndexSettings
from indexcheck.commands.judge.settings import JudgeSettings
from indexcheck.commands.kit.settings import Bound
from indexcheck.commands.probe_scale.settings import ProbeScaleSettings
from indexcheck.commands.questions.settings import GenerateQuestionsSettings
from indexcheck.commands.sweep_threshold.settings import SweepThresholdSettings
from indexcheck.errors import InputError

#: each command's settings, and its options named otherwise than the field
SETTINGS: dict[str, tuple[type, dict[str, str]]] = {
    "check-index": (CheckIndexSettings, {"block_size": "block"}),
    "compare-ann": (CompareAnnSettings, {}),
    "diagnose": (DiagnoseSettings, {}),
    "diff-index": (DiffIndexSettings, {}),
    "judge": (JudgeSettings, {}),
    "probe-scale": (ProbeScaleSettings, {}),
    "questions generate": (GenerateQuestionsSettings, {}),
    "sweep-threshold": (SweepThresholdSettings, {}),
}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (lambda: CheckIndexSettings(sample=0), "sample must be at least 1, got 0"),
        (lambda: CheckIndexSettings(sample=2.5), "sample must be an integer or None, got 2.5"),
        (lambda: CheckIndexSettings(sample=True), "sample must be an integer or None, got True"),
        (lambda: CheckIndexSettings(min_cosine=1.5), "min_cosine must be between -1 and 1"),
        (lambda: CheckIndexSettings(min_cosine=math.nan), "min_cosine must be a finite number"),
        (lambda: CheckIndexSettings(max_fault_rate=1.0), "max_fault_rate must be at least 1e-09"),
        (lambda: CheckIndexSettings(stream="yes"), "stream must be True or False, got 'yes'"),
        (lambda: CompareAnnSettings(target=-0.1), "target must be between 0 and 1, got -0.1"),
        (lambda: DiagnoseSettings(threshold=math.inf), "threshold must be a finite number"),
        (lambda: DiagnoseSettings(runs=0), "runs must be between 1 and 1000, got 0"),
        (lambda: SweepThresholdSettings(None, "q.jsonl", recall_target=1.5), "recall_target must"),
        (lambda: ProbeScaleSettings(store="faiss:x", probes=49), "probes must be between 1 and 48"),
        (lambda: GenerateQuestionsSettings(None, "py:g", dedupe=0.0), "dedupe must be above 0"),
        (lambda: JudgeSettings(None, "py:j", retries=11), "retries must be between 0 and 10"),
    ],
)  # fmt: skip
def test_a_bad_number_is_one_sentence_naming_the_keyword(settings: Any, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        settings()


def test_the_face_refuses_before_any_work(tmp_path: Path) -> None:
    """Nothing is opened: the store and the chunks do not even exist."""
    with pytest.raises(InputError, match="min_cosine must be between -1 and 1, got 2.5"):
        indexcheck.check_index(f"faiss:{tmp_path / 'absent'}", tmp_path / "absent.jsonl",
                               min_cosine=2.5)  # fmt: skip
    with pytest.raises(InputError, match="recall_target"):
        indexcheck.sweep_threshold(f"faiss:{tmp_path / 'absent'}", tmp_path / "q.jsonl",
                                   recall_target=2.0)  # fmt: skip


def test_numpy_numbers_are_numbers() -> None:
    s = CheckIndexSettings(sample=np.int64(5), min_cosine=np.float32(0.5), stream=np.bool_(True))
    assert s.sample == 5
    with pytest.raises(InputError, match="sample must be an integer or None, got np.True_"):
        CheckIndexSettings(sample=np.bool_(True))


def test_the_defaults_are_valid() -> None:
    CheckIndexSettings()
    CompareAnnSettings()
    DiagnoseSettings()
    DiffIndexSettings()


def _cli_bound(kind: Any) -> Bound | None:
    if isinstance(kind, FiniteFloat):
        return Bound(kind.min, kind.max, kind.min_open, kind.max_open)
    if isinstance(kind, click.IntRange | click.FloatRange):
        return Bound(kind.min, kind.max, kind.min_open, kind.max_open)
    return None


def _command(name: str) -> click.Command:
    cmd: Any = cli
    for part in name.split():
        cmd = cmd.commands[part]
    return cmd  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_the_command_line_ranges_are_the_settings_ranges(name: str) -> None:
    """A range is declared on the settings field; the option of the same name declares the
    same one, so a shell user and a Python caller are refused alike."""
    settings, aliases = SETTINGS[name]
    fields = {f.name: f for f in dataclasses.fields(settings)}
    compared = 0
    for param in _command(name).params:
        got = _cli_bound(param.type)
        field = fields.get(aliases.get(param.name or "", param.name or ""))
        if got is None or field is None:
            continue
        want = field.metadata.get("bound")
        if got == Bound() and want is None:
            continue  # a finite number, no range, on both sides
        assert want == got, f"{name} {param.name}: settings {want}, command line {got}"
        compared += 1
    assert compared >= 1
