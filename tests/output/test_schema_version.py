"""Every --json result opens with ``schema_version``: a finished run's and a failed run's."""

from __future__ import annotations

import json
from pathlib import Path

from indexcheck.output.files import failure
from indexcheck.output.present import write_json
from indexcheck.output.schema import SCHEMA_VERSION


def test_a_written_result_opens_with_the_schema_version(tmp_path: Path) -> None:
    write_json(tmp_path / "r.json", {"ok": True, "checked": 3})
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert list(data) == ["schema_version", "ok", "checked"]
    assert data["schema_version"] == SCHEMA_VERSION == 2


def test_a_failed_run_carries_it_too() -> None:
    assert failure("check-index", "the store is down", 3)["schema_version"] == SCHEMA_VERSION
