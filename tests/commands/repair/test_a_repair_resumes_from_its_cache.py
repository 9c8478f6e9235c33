"""``--cache``: a repair run again (after a kill, or into another folder) sends nothing
the first run already paid for (only the cache's own audit of a few hits)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.files.store import write_vectors_file
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors


def test_a_second_repair_with_the_same_cache_sends_no_text(tmp_path: Path) -> None:
    c = repeat_corpus(160, 20)
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    sent = []
    for name in ("first", "second"):
        r = CliRunner().invoke(cli, [
            "repair", "--store", f"parquet:{src}", "--embedder", "py:indexcheck.testing:HASH32",
            "--cache", str(tmp_path / "cache.sqlite"), "--out", str(tmp_path / name),
            "--json", str(tmp_path / f"{name}.json"), "--no-check",
        ])  # fmt: skip
        assert r.exit_code == 1, r.output  # --no-check: written, not proved
        doc = json.loads((tmp_path / f"{name}.json").read_text())
        audit = doc["manifest"].get("cache_audit", {}).get("texts", 0)
        sent.append(doc["manifest"]["embedding"]["texts"] - audit)
        assert (tmp_path / name / "vectors.parquet").is_file()
    assert sent[0] > 0 and sent[1] == 0


def test_the_cache_of_a_check_index_all_run_makes_the_repair_and_its_proof_free(
    tmp_path: Path,
) -> None:
    c = repeat_corpus(160, 20)
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    common = ["--store", f"parquet:{src}", "--embedder", "py:indexcheck.testing:HASH32"]
    plain = CliRunner().invoke(cli, ["repair", *common, "--out", str(tmp_path / "plain")])
    assert plain.exit_code == 0, plain.output
    assert "--cache" in plain.output  # a run without --cache says what would make it free
    cache = str(tmp_path / "cache.sqlite")
    checked = CliRunner().invoke(cli, ["check-index", *common, "--all", "--cache", cache])
    assert checked.exit_code == 1, checked.output  # the shifted index fails its check
    out = ["--out", str(tmp_path / "fixed"), "--json", str(tmp_path / "r.json")]
    r = CliRunner().invoke(cli, ["repair", *common, "--cache", cache, *out])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    audit = doc["manifest"].get("cache_audit", {}).get("texts", 0)
    assert doc["manifest"]["embedding"]["texts"] - audit == 0  # the cache audit only
    assert doc["target_check"]["texts_embedded"] == 0
