"""diagnose's rows show each question's filter (in the JSON, the report and the terminal),
and a FILTERED_OUT detail never cuts the metadata before the field the filter tests."""

from __future__ import annotations

import json
from pathlib import Path

import indexcheck.commands.reports  # noqa: F401  (registers the renderers)
from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.commands.diagnose.report import diagnose_summary
from indexcheck.inputs.questions import load_questions
from indexcheck.output.model import Text
from indexcheck.output.present import write_report
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.builders import parquet_metadata

N = 60
#: long metadata whose keys sort before the tested one: a 120-character cut loses it
LONG = {f"a_note_{j}": "x" * 30 for j in range(6)}


def test_the_filter_and_the_tested_field_are_shown(tmp_path: Path) -> None:
    texts = [f"note {i} about {['kidney', 'lung'][i % 2]} care plan {i}" for i in range(N)]
    meta = [{**LONG, "profile": ["ckd", "copd"][i % 2]} for i in range(N)]
    meta[4] = {**LONG, "profile": "copd"}  # the metadata bug: c4 is a kidney chunk
    path = parquet_metadata.build(tmp_path / "kb.parquet", texts, meta)
    qfile = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": texts[i], "expected": [f"c{i}"], "filter": {"profile": "ckd"}}
        for i in (0, 2, 4)
    ] + [{"id": "free", "question": texts[1], "expected": ["c1"]}]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open_store(f"parquet:{path}?metric=cosine") as store:
        result = diagnose(
            DiagnoseSettings(k=4, fetch=10), store, HashEmbedder(32), load_questions(qfile), None
        )
    by = {q["id"]: q for q in result.to_dict()["questions"]}
    assert by["q4"]["label"] == "FILTERED_OUT"
    assert '"profile": "copd"' in by["q4"]["detail"]  # the tested field, never cut off
    assert by["q0"]["filter"] == '{"profile":{"$eq":"ckd"}}' and by["free"]["filter"] is None
    lines = [b.text for s in diagnose_summary(result) for b in s.blocks if isinstance(b, Text)]
    assert any(
        line.startswith("  q4: FILTERED_OUT")
        and line.endswith('(filter {"profile":{"$eq":"ckd"}})')
        for line in lines
    )
    # write_report returns [NAME.html, NAME.md, *plots]
    md = write_report(result, tmp_path / "rep", "diagnose")[1].read_text()
    assert "| detail | filter |" in md
