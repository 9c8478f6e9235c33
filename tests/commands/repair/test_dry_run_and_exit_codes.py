"""The CLI: exit 0 when the copy passes check-index --all, 1 when it does not, the headline
figure in the terminal, the JSON (with its manifest) and the report; --dry-run plans the
same repair and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import held_nowhere

HASH32 = "py:indexcheck.testing:HASH32"


def _shifted(tmp_path: Path) -> tuple[Path, list[str]]:
    c = repeat_corpus(160, 20)
    path = tmp_path / "index.parquet"
    write_vectors_file(path, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    return path, c.texts


def _repair(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["repair", "--embedder", HASH32, *args])
    return r.exit_code, " ".join(r.output.split())


def test_a_repaired_copy_that_passes_its_check_is_exit_0_with_the_figure_everywhere(
    tmp_path: Path,
) -> None:
    src, texts = _shifted(tmp_path)
    lost = len(held_nowhere(texts))
    out_args = ["--json", str(tmp_path / "r.json"), "--report", str(tmp_path / "rep")]
    code, out = _repair("--store", f"parquet:{src}", "--out", str(tmp_path / "fixed"), *out_args)
    headline = (
        f"embedded {lost} of 160 chunks ({160 - lost} reused, a full reindex would embed 160)"
    )
    assert code == 0, out
    assert headline in out and "check-index --all on parquet:" in out
    assert "160 of 160 chunks at cosine >= 0.999" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["headline"] == headline and doc["ok"] is True
    assert doc["manifest"]["command"] == "repair" and doc["manifest"]["seed"] == 0
    assert doc["target_check"]["ok"] is True and doc["target_check"]["checked"] == 160
    report = "".join(p.read_text() for p in (tmp_path / "rep").glob("*.md"))
    assert headline in report


def test_a_copy_that_fails_its_check_is_exit_1_and_says_so(tmp_path: Path) -> None:
    c = repeat_corpus(200, 20)
    vectors = HashEmbedder(32).embed(c.texts)
    other = HashEmbedder(32, model="another-model")
    for p in range(0, 200, 10):  # a partial model change a small sample cannot all see
        vectors[p] = other.embed([c.texts[p]])[0]
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, vectors, c.texts)
    code, out = _repair("--store", f"parquet:{src}", "--out", str(tmp_path / "fixed"),
                        "--verify", "8")  # fmt: skip
    assert code == 1, out
    assert "the repaired copy fails check-index --all" in out and "--verify all" in out
    code, out = _repair("--store", f"parquet:{src}", "--out", str(tmp_path / "again"),
                        "--verify", "all")  # fmt: skip
    assert code == 0, out
    assert "20 failed_verification" in out


def test_a_dry_run_plans_the_same_repair_and_writes_nothing(tmp_path: Path) -> None:
    src, texts = _shifted(tmp_path)
    out = tmp_path / "fixed"
    code, said = _repair("--store", f"parquet:{src}", "--out", str(out), "--dry-run",
                         "--json", str(tmp_path / "dry.json"))  # fmt: skip
    assert code == 0 and not out.exists()
    lost = len(held_nowhere(texts))
    assert f"would embed {lost} of 160 chunks" in said and "nothing written" in said
    dry = json.loads((tmp_path / "dry.json").read_text())
    code, _ = _repair("--store", f"parquet:{src}", "--out", str(out),
                      "--json", str(tmp_path / "real.json"))  # fmt: skip
    real = json.loads((tmp_path / "real.json").read_text())
    for key in ("ways", "reasons", "embedded", "reused", "reading", "sample_texts"):
        assert dry[key] == real[key], key
    assert dry["texts_embedded"] + dry["texts_to_embed"] == real["texts_embedded"]
    assert dry["written"] == [] and dry["target"] is None
