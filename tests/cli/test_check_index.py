"""check-index through the CLI: exit codes, one-line errors, JSON fields, reports, read-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.util import tree_digest

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_clean_index_passes_with_exit_0(small_kb: dict[str, Path]) -> None:
    code, out, err = run(
        "check-index",
        "--store",
        f"faiss:{small_kb['good']}",
        "--chunks",
        str(small_kb["chunks"]),
        "--all",
        *EMB,
    )
    assert code == 0, err
    assert "PASS 120/120 chunks (all)" in out
    assert "duplicate_text" in out  # the repeats are still reported


def test_shifted_index_fails_with_exit_1_and_full_json(small_kb: dict[str, Path], tmp_path) -> None:
    before = tree_digest(small_kb["buggy"])
    out_json = tmp_path / "r.json"
    code, out, err = run(
        "check-index",
        "--store",
        f"faiss:{small_kb['buggy']}",
        "--chunks",
        str(small_kb["chunks"]),
        "--sample",
        "10",
        "--seed",
        "3",
        "--json",
        str(out_json),
        "--report",
        str(tmp_path / "rep"),
        *EMB,
    )
    assert code == 1, err
    assert "FAIL" in out and "shift" in out
    data = json.loads(out_json.read_text())
    for key in (
        "ok",
        "checked",
        "threshold",
        "min_cosine",
        "median_cosine",
        "below_threshold",
        "chunks",
        "findings",
        "manifest",
    ):
        assert key in data
    assert data["ok"] is False and data["checked"] == 10 and data["threshold"] == 0.999
    shift = next(f for f in data["findings"] if f["kind"] == "shift")
    assert shift["details"]["start_id"] == "note1#sec-034"
    assert shift["details"]["preceding_duplicate"]["id"] == "note1#sec-033"
    row = next(c for c in data["chunks"] if c["status"] == "shift")
    assert set(row) >= {"id", "cosine", "status", "holds_vector_of"}
    m = data["manifest"]
    assert m["version"] and m["seed"] == 3 and m["index_fingerprint"]
    assert m["store"]["backend"] == "faiss" and m["embedder"]["model_id"] == "hash:32"
    assert m["embedding"]["requests"] >= 1 and m["embedding"]["tokens"] > 0
    assert m["wall_seconds"] >= 0
    assert (tmp_path / "rep" / "check-index.md").is_file()
    assert (tmp_path / "rep" / "check-index-cosines.png").stat().st_size > 1000
    assert tree_digest(small_kb["buggy"]) == before  # read-only


def test_json_to_stdout_is_pure_json(small_kb: dict[str, Path]) -> None:
    code, out, _ = run(
        "check-index",
        "--store",
        f"faiss:{small_kb['good']}",
        "--chunks",
        str(small_kb["chunks"]),
        "--json",
        "-",
        *EMB,
    )
    assert code == 0
    assert json.loads(out)["ok"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chunks", "nope.jsonl"], "chunks file nope.jsonl does not exist"),
        (["--store", "nosuchdb:x"], "unknown store 'nosuchdb'"),
        (["--store", "noscheme"], "has no scheme"),
        (["--embedder", "openai:x"], "unknown embedder 'openai:x'"),
        (["--sample", "500"], "--sample 500 is larger than the corpus (120 chunks)"),
        (["--embedder", "py:indexcheck.testing:NOPE"], "has no attribute 'NOPE'"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    small_kb: dict[str, Path], args: list[str], message: str
) -> None:
    base = {
        "--store": f"faiss:{small_kb['good']}",
        "--chunks": str(small_kb["chunks"]),
        "--embedder": EMB[1],
    }
    extra = dict(zip(args[::2], args[1::2], strict=True))
    merged = [x for k, v in {**base, **extra}.items() for x in (k, v)]
    code, out, err = run("check-index", *merged)
    assert code == 2, (out, err)
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_wrong_dimension_exits_2(small_kb: dict[str, Path], tmp_path) -> None:
    code, _, err = run(
        "check-index",
        "--store",
        f"faiss:{small_kb['good']}",
        "--chunks",
        str(small_kb["chunks"]),
        "--embedder",
        "minilm",
    )
    assert code == 2
    assert "store holds 32-d vectors but minilm:all-MiniLM-L6-v2-int8 gives 384-d" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"key": "a", "text": "x"}\n', "no column 'id' in chunks.jsonl (columns: key, text)"),
        ('{"id": "a", "body": "x"}\n', "no column 'text'"),
        ("", "holds no chunks"),
        ("not json\n", "is not valid JSON"),
    ],
)
def test_bad_chunk_files_exit_2(small_kb: dict[str, Path], tmp_path, content, message) -> None:
    bad = tmp_path / "chunks.jsonl"
    bad.write_text(content)
    code, _, err = run(
        "check-index", "--store", f"faiss:{small_kb['good']}", "--chunks", str(bad), *EMB
    )
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_csv_chunks_with_renamed_columns(small_kb: dict[str, Path], tmp_path) -> None:
    rows = [json.loads(x) for x in small_kb["chunks"].read_text().splitlines()]
    csv = tmp_path / "c.csv"
    import pandas as pd

    pd.DataFrame({"chunk_id": [r["id"] for r in rows], "body": [r["text"] for r in rows]}).to_csv(
        csv, index=False
    )
    code, out, err = run(
        "check-index",
        "--store",
        f"faiss:{small_kb['good']}",
        "--chunks",
        str(csv),
        "--id-column",
        "chunk_id",
        "--text-column",
        "body",
        "--all",
        *EMB,
    )
    assert code == 0, err


def test_langchain_pickle_needs_trust_flag(small_kb: dict[str, Path], tmp_path) -> None:
    folder = tmp_path / "lc"
    folder.mkdir()
    (folder / "index.faiss").write_bytes((small_kb["good"] / "index.faiss").read_bytes())
    (folder / "index.pkl").write_bytes(b"not read")
    code, _, err = run("check-index", "--store", f"faiss:{folder}", *EMB)
    assert code == 2 and "--trust-pickle" in err


def test_config_file_supplies_defaults(small_kb: dict[str, Path], tmp_path) -> None:
    cfg = tmp_path / "indexcheck.toml"
    cfg.write_text(
        f'[defaults]\nstore = "faiss:{small_kb["good"]}"\nembedder = "{EMB[1]}"\n'
        f'[check-index]\nchunks = "{small_kb["chunks"]}"\nsample = 7\n'
    )
    r = CliRunner().invoke(cli, ["--config", str(cfg), "check-index", "--json", "-"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["checked"] == 7


@pytest.mark.parametrize(
    "spec",
    [
        "upstash:http://127.0.0.1:9?retries=0&timeout=2",
        "pgvector:postgresql://u:secret-pw@127.0.0.1:9/db?table=t",
    ],
)
def test_unreachable_store_exits_3_with_one_line(small_kb, monkeypatch, spec: str) -> None:
    monkeypatch.setenv("UPSTASH_VECTOR_REST_TOKEN", "secret-token")
    code, out, err = run("check-index", "--store", spec, "--chunks", str(small_kb["chunks"]), *EMB)
    assert code == 3, (out, err)
    lines = err.strip().splitlines()
    # one error line; a password inside the spec adds one warning line before it (issue 12)
    warnings = [x for x in lines if x.startswith("warning:")]
    assert len(lines) - len(warnings) == 1 and "Traceback" not in err
    assert len(warnings) == (1 if "secret-pw" in spec else 0)
    assert all("PGPASSWORD" in w for w in warnings)
    assert "127.0.0.1:9" in err
    assert "secret" not in err
