"""``--out upstash:URL?namespace=NEW --yes``: a new namespace of the source's Upstash index
(against the loopback emulator), proved by check-index --all on the namespace itself; the
source namespace holds the same rows after, also after a failed write (whose namespace is
deleted); without --yes, or naming the source's namespace or one that exists, exit 2
before any work."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import OutputError
from tests.builders import upstash as up_builder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import CountingEmbedder, write_chunks

HASH32 = "py:indexcheck.testing:HASH32"
N = 160


def _index(spec: str) -> Any:
    from upstash_vector import Index

    return Index(
        url=spec.split(":", 1)[1].split("?", 1)[0], token=up_builder.shared_emulator().token
    )


def _dump(spec: str, namespace: str = "docs") -> str:
    rows = _index(spec).range(cursor="", limit=1000, include_vectors=True, include_metadata=True,
                              include_data=True, namespace=namespace).vectors  # fmt: skip
    got = sorted((v.id, v.vector, json.dumps(v.metadata, sort_keys=True), v.data) for v in rows)
    return hashlib.sha256(repr(got).encode()).hexdigest()


@pytest.fixture
def source(tmp_path: Path) -> tuple[str, Path]:
    c = repeat_corpus(N, 20)
    vectors = seed_bug_vectors(c.texts, hash_embed(32))
    spec = up_builder.build(tmp_path, c.ids, vectors, c.texts, namespace="docs")
    return spec, write_chunks(tmp_path / "chunks.jsonl", c.ids, c.texts)


def _url(spec: str) -> str:
    return spec.split(":", 1)[1].split("?", 1)[0]


def test_a_new_namespace_is_written_with_yes_and_proved_on_itself(
    source: tuple[str, Path],
) -> None:
    spec, chunks = source
    before = _dump(spec)
    r = api.repair(spec, out=f"upstash:{_url(spec)}?namespace=fixed", chunks=chunks,
                   embedder=CountingEmbedder(32), yes=True)  # fmt: skip
    assert r.ok, r.problems
    assert r.reading == "skip_repeat" and r.target_kind == "upstash"
    assert r.target_check is not None and r.target_check["checked"] == N
    assert r.target_check["store"] == f"upstash:{_url(spec)}?namespace=fixed"
    assert _dump(spec) == before


@pytest.mark.parametrize(("extra", "namespace", "says"), [
    ([], "fixed", "add --yes"),
    (["--yes"], "docs", "source namespace"),
    (["--yes"], "", "needs ?namespace="),
    (["--yes"], "taken", "already exists"),
])  # fmt: skip
def test_without_yes_or_at_the_source_or_an_existing_namespace_exit_2_before_any_work(
    source: tuple[str, Path], extra: list[str], namespace: str, says: str
) -> None:
    spec, chunks = source
    _index(spec).upsert([{"id": "x", "vector": [1.0] * 32}], namespace="taken")
    out = f"upstash:{_url(spec)}?namespace={namespace}"
    r = CliRunner().invoke(cli, ["repair", "--store", spec, "--chunks", str(chunks),
                                 "--embedder", HASH32, *extra, "--out", out])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert says in " ".join(r.output.split()) and "Traceback" not in r.output
    assert "fixed" not in _index(spec).list_namespaces()


def test_a_failed_write_deletes_the_namespace_and_leaves_the_source(
    source: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexcheck.commands.repair.targets.upstash import UpstashWriter

    spec, chunks = source
    before = _dump(spec)
    real = UpstashWriter.write

    def dies(self: UpstashWriter, batch: Any) -> None:
        real(self, batch)  # the rows are in the new namespace...
        raise OSError(104, "Connection reset by peer")  # ...then the network goes

    monkeypatch.setattr(UpstashWriter, "write", dies)
    with pytest.raises(OutputError, match="nothing was left"):
        api.repair(spec, out=f"upstash:{_url(spec)}?namespace=fixed", chunks=chunks,
                   embedder=CountingEmbedder(32), yes=True)  # fmt: skip
    assert "fixed" not in _index(spec).list_namespaces()
    assert _dump(spec) == before
