"""``repair --engine ray``: the check sample, the vectors that exist nowhere and the proof are
embedded on Ray workers, with the same copy and plan as the local engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.files.store import write_vectors_file
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import target_rows

pytestmark = pytest.mark.slow


def test_a_repair_on_ray_equals_the_local_one(
    ray_cluster: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from indexcheck.engines import RayEngine

    c = repeat_corpus(200, 20)
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    used: list[str] = []
    real = RayEngine.embed_blocks

    def spy(self: Any, embedder: Any, blocks: Any) -> Any:
        used.append("ray")
        return real(self, embedder, blocks)

    monkeypatch.setattr(RayEngine, "embed_blocks", spy)
    got = {}
    for engine in ("local", "ray"):
        out, report = tmp_path / engine, tmp_path / f"{engine}.json"
        r = CliRunner().invoke(cli, ["repair", "--store", f"parquet:{src}", "--embedder",
                                     "py:indexcheck.testing:HASH32", "--engine", engine,
                                     "--out", str(out), "--json", str(report)])  # fmt: skip
        assert r.exit_code == 0, r.output
        doc = json.loads(report.read_text())
        got[engine] = (doc["ways"], doc["reasons"], doc["texts_embedded"], target_rows(out))
    assert len(used) >= 3  # the sample, the fresh vectors, the proof
    local, ray = got["local"], got["ray"]
    assert local[:3] == ray[:3]
    assert local[3]["ids"] == ray[3]["ids"]
    assert (local[3]["vectors"] == ray[3]["vectors"]).all()
