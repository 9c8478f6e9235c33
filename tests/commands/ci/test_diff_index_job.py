"""``[ci.diff-index]``: the configured store (the new index) diffed against ``old``, gated
like the other checks (ok: PASS, a fault: BLOCK), in the JSON, the report and JUnit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from indexcheck.commands.ci import BLOCK, PASS, CiConfig, run_ci
from indexcheck.errors import InputError
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, MemoryStore
from tests.commands.ci.test_gates import junit, make_kb, run, write_config

NO_OTHER = {"check_index": "", "probe_scale": "", "compare_ann": "", "diagnose": ""}


@pytest.fixture(autouse=True)
def _quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")


@pytest.fixture
def kb(tmp_path: Path) -> dict[str, Path]:
    return make_kb(tmp_path)


def diff_config(kb: dict[str, Path], store: str, body: str = "", **tables: str) -> Path:
    old = f'old = "faiss:{kb["good"]}"\n'
    return write_config(kb, store, **{**NO_OTHER, "diff_index": old + body, **tables})


def test_an_unchanged_rebuild_passes_and_a_shifted_one_blocks(kb: dict[str, Path]) -> None:
    out, j = kb["root"] / "ci.json", kb["root"] / "junit.xml"
    code, stdout, _ = run(
        "ci", "--config", str(diff_config(kb, "good")), "--json", str(out), "--junit", str(j)
    )
    assert code == 0, stdout
    data = json.loads(out.read_text())
    assert data["checks"] == {"diff-index": PASS} and data["verdict"] == PASS
    assert data["results"]["diff-index"]["counts"]["unchanged"] == 60
    sub_manifest = data["results"]["diff-index"]["manifest"]
    assert sub_manifest["command"] == "diff-index"
    assert sub_manifest["old_store"]["spec"] == f"faiss:{kb['good']}"
    _, cases = junit(j)
    assert [c.get("classname") for c in cases] == ["indexcheck.ci.diff-index"]
    assert cases[0].get("name") == "error_findings == 0" and cases[0].find("failure") is None

    report = kb["root"] / "report"
    code, stdout, _ = run(
        "ci", "--config", str(diff_config(kb, "regressed")), "--json", str(out),
        "--junit", str(j), "--report", str(report),
    )  # fmt: skip
    assert code == 1, stdout
    data = json.loads(out.read_text())
    assert data["checks"] == {"diff-index": BLOCK}
    gate = data["gates"][0]
    assert gate["check"] == "diff-index" and gate["verdict"] == BLOCK
    assert "shift" in gate["detail"]
    shifted = [c for c in data["results"]["diff-index"]["chunks"] if c["status"] == "shift"]
    assert len(shifted) == 60 - 26 and shifted[0]["holds_vector_of"]
    suite, cases = junit(j)
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == BLOCK
    assert suite.get("failures") == "1"
    html = next(report.glob("*.html")).read_text()
    assert "diff-index: the new index against the old one" in html
    assert "BLOCK" in stdout and "diff-index" in stdout


def test_new_texts_are_re_embedded_with_the_ci_embedder(kb: dict[str, Path]) -> None:
    ids = [f"doc{i // 20}#s{i:02d}" for i in range(60)]
    texts = [f"Chunk {i} states fact {i} about topic {i % 7}." for i in range(60)]
    texts[25] = texts[3]
    added = ["A fact added in this release.", "Another added fact."]
    vecs = HashEmbedder(32).embed([*texts, *added])
    vecs[61] = vecs[60]  # the second added text holds the first one's vector
    write_faiss_folder(kb["root"] / "grown", [*ids, "new0", "new1"], vecs, [*texts, *added])
    kb["grown"] = kb["root"] / "grown"
    chunks = kb["root"] / "grown.jsonl"
    rows = zip([*ids, "new0", "new1"], [*texts, *added], strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    out = kb["root"] / "ci.json"
    cfg = diff_config(kb, "grown", f'chunks-new = "{chunks}"\nsample-new = 0\n')
    code, stdout, _ = run("ci", "--config", str(cfg), "--json", str(out))
    assert code == 0, stdout  # listed, not re-embedded: nothing to prove wrong
    assert json.loads(out.read_text())["results"]["diff-index"]["new_texts"] is None
    cfg = diff_config(kb, "grown", f'chunks-new = "{chunks}"\nsample-new = "all"\n')
    code, stdout, _ = run("ci", "--config", str(cfg), "--json", str(out))
    assert code == 1, stdout
    sub = json.loads(out.read_text())["results"]["diff-index"]
    assert sub["new_texts"]["checked"] == 2
    by = {c["id"]: c for c in sub["chunks"]}
    assert by["new1"]["checked"] == "shift" and by["new0"]["checked"] == "ok"


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('chunks-old = "x.jsonl"', "old"),
        ('old = "x"\nsample-new = -1', "sample-new"),
        ('old = "x"\nsample-new = "some"', "sample-new"),
        ('old = "x"\nmin-cosine = 2', "min-cosine"),
        ('old = "x"\nlimits = ["hit_at_4 >= 1"]', "limits"),
        ('old = "x"\nolder = "y"', "older"),
    ],
)
def test_bad_diff_index_table_is_exit_2_naming_the_key(
    kb: dict[str, Path], body: str, key: str
) -> None:
    cfg = write_config(kb, **{**NO_OTHER, "diff_index": body})
    code, stdout, stderr = run("ci", "--config", str(cfg))
    assert code == 2
    assert f"ci.diff-index.{key}" in stdout + stderr


def test_a_diff_index_table_without_old_says_what_old_is(kb: dict[str, Path]) -> None:
    cfg = write_config(kb, **{**NO_OTHER, "diff_index": 'chunks-old = "x.jsonl"'})
    code, stdout, stderr = run("ci", "--config", str(cfg))
    assert code == 2
    assert "ci.diff-index.old is required: the spec of the index in production to diff " in stderr


def test_the_core_opens_no_store_and_the_api_opens_the_old_one(kb: dict[str, Path]) -> None:
    from indexcheck import api

    cfg = CiConfig.from_toml(diff_config(kb, "regressed", 'limits = ["compared >= 60"]'))
    assert cfg.diff_index is not None and cfg.diff_index.old == f"faiss:{kb['good']}"
    ids, vecs = [f"c{i}" for i in range(4)], np.eye(4, dtype=np.float32)
    with pytest.raises(InputError, match="old_store"):
        run_ci(cfg, store=MemoryStore(ids, vecs, ids))
    result = api.run_ci(cfg)
    assert result.checks == {"diff-index": PASS}  # 60 compared: the declared limit holds
    assert result.results["diff-index"]["ok"] is False
    assert result.manifest["command"] == "ci"
