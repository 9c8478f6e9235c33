"""Results in a notebook: ``to_pandas()`` gives the JSON rows as a DataFrame (and back), and
``_repr_html_()`` is the summary with every id and text escaped: data is never markup."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import indexcheck
from indexcheck import api
from indexcheck.errors import InputError
from indexcheck.output.notebook import frame_records
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32, positional_cache_bug

ROOT = Path(__file__).resolve().parents[2]
EMB = "py:indexcheck.testing:HASH32"


def plain(value: Any) -> Any:
    """As JSON reads it back (enums as strings, tuples as lists)."""
    return json.loads(json.dumps(value, default=str))


@pytest.fixture
def results(small_kb: dict[str, Path], small_kb_questions: Path) -> dict[str, Any]:
    """A result of each command with rows, made through the public face."""
    good, buggy = f"faiss:{small_kb['good']}", f"faiss:{small_kb['buggy']}"
    chunks, questions = small_kb["chunks"], small_kb_questions
    judge_fixture = ROOT / "fixtures" / "judge" / "answers.jsonl"
    return {
        "check_index": indexcheck.check_index(buggy, chunks, EMB, sample=None),
        "probe_scale": indexcheck.probe_scale(good),
        "sweep_threshold": indexcheck.sweep_threshold(good, questions, EMB, k=4, fetch=10),
        "compare_ann": indexcheck.compare_ann(good, k=4, fetch=[4, 10], queries=20),
        "diagnose": indexcheck.diagnose(buggy, questions, chunks, EMB, k=4, fetch=10),
        "diff_index": indexcheck.diff_index(good, buggy, chunks_old=chunks, chunks_new=chunks),
        "judge": indexcheck.judge(
            judge_fixture, "py:tests.judge_hook:fixture_judge", allow_unjudged=True
        ),
        "check_answers": indexcheck.check_answers(judge_fixture, chunks),
    }


def test_every_row_list_round_trips_through_a_data_frame(results: dict[str, Any]) -> None:
    for name, result in results.items():
        assert result.frames, name
        for rows in result.frames:
            frame = result.to_pandas(rows)
            assert len(frame) == len(result.frame_rows(rows)), (name, rows)
            assert plain(frame_records(frame)) == plain(result.frame_rows(rows)), (name, rows)
        assert result.to_pandas().equals(result.to_pandas(result.frames[0]))


def test_the_frames_are_the_json_rows(results: dict[str, Any]) -> None:
    r = results["check_index"]
    frame = r.to_pandas()
    assert list(frame.columns) == list(r.to_dict()["chunks"][0])
    assert len(frame) == r.checked == 120
    assert (frame["status"] == "shift").sum() == r.counts["shift"]
    assert str(frame["cosine"].dtype) == "Float64"  # a missing cosine is <NA>, never 0
    claims = results["judge"].to_pandas()  # judge: one row per claim, with its answer
    assert {"answer_id", "answer_status", "claim", "verdict"} <= set(claims.columns)
    n_claims = sum(len(a["claims"]) for a in results["judge"].to_dict()["answers"])
    assert len(claims) == n_claims > 0
    sweep = results["sweep_threshold"].to_pandas()
    assert len(sweep) == len(results["sweep_threshold"].table)


def test_an_unknown_row_list_is_refused_naming_the_known_ones(results: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="the rows are: chunks, findings"):
        results["check_index"].to_pandas("rows")


def test_without_pandas_the_error_names_the_install(
    results: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(InputError, match="pip install pandas"):
        results["check_index"].to_pandas()


def test_each_result_shows_its_summary_in_a_notebook(results: dict[str, Any]) -> None:
    for name, result in results.items():
        page = result._repr_html_()
        assert page.startswith('<div class="indexcheck">') and page.endswith("</div>"), name
        assert "<h4>" in page, f"{name}: no summary section"
        assert "<script" not in page.lower(), name
    page = results["check_index"]._repr_html_()
    assert "v-FAIL" in page and "shift" in page


MARKUP_ID = "<script>alert('id')</script>"
MARKUP_TEXT = "<script>alert('text')</script> & <img src=x onerror=alert(1)>"


def test_data_in_the_html_summary_is_never_markup(tmp_path: Path) -> None:
    """Ids and texts that are HTML (a chunk text holding <script>) show as text."""
    n = 40
    ids = [f"{MARKUP_ID}#{i:02d}" for i in range(n)]
    texts = [f"{MARKUP_TEXT} fact {i} about subject {i % 7}." for i in range(n)]
    texts[2] = texts[0]  # a repeated text: the positional cache shifts every later chunk
    chunks = tmp_path / "chunks.jsonl"
    rows = zip(ids, texts, strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    fresh = HASH32.embed(texts)
    write_faiss_folder(tmp_path / "buggy", ids, positional_cache_bug(texts, fresh))
    result = api.check_index(f"faiss:{tmp_path / 'buggy'}", chunks, EMB, sample=None)
    assert not result.ok
    page = result._repr_html_()
    assert "&lt;script&gt;alert(&#x27;id&#x27;)&lt;/script&gt;" in page  # the id, shown
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;text&#x27;)&lt;/script&gt; &amp; &lt;img src=x" in page
    frame = result.to_pandas()  # the rows keep the data as it is
    assert frame["id"].str.startswith(MARKUP_ID).all()
    shifted = frame[frame["status"] == "shift"]
    assert not shifted.empty and shifted["text"].str.startswith("<script>alert('text')").all()
