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
