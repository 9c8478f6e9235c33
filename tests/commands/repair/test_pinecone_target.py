"""``--out pinecone:INDEX?namespace=NEW&host=... --yes``: a new namespace of the source's
Pinecone index (against the loopback emulator), proved by check-index --all on the
namespace itself and searchable by LangChain's PineconeVectorStore; the source namespace
holds the same rows after, also after a failed write (whose namespace is deleted); without
--yes, at the source's namespace or one that holds vectors, exit 2 before any work."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import OutputError
from tests.builders import pinecone as builder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import CountingEmbedder, write_chunks
from tests.emulators.pinecone_emulator import PineconeEmulator

KEY = "pcsk_repair_key"
HASH32 = "py:indexcheck.testing:HASH32"
N = 160


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, Path]]:
    monkeypatch.setenv("PINECONE_API_KEY", KEY)
    c = repeat_corpus(N, 20)
    metas = [{"text": t, "package": d} for t, d in zip(c.texts, c.doc_of, strict=True)]
    with PineconeEmulator(api_key=KEY, exact=True) as emu:
        vectors = seed_bug_vectors(c.texts, hash_embed(32))
        builder.upsert(emu, "docs", c.ids, vectors, metas, namespace="prod")
        yield emu, builder.spec(emu, "docs", "prod"), write_chunks(
            tmp_path / "chunks.jsonl", c.ids, c.texts)  # fmt: skip


def _dump(emu: Any, namespace: str) -> str:
    rows = emu.indexes["docs"].namespaces[namespace].rows
    got = sorted((k, v[0].tobytes(), repr(v[1])) for k, v in rows.items())
    return hashlib.sha256(repr(got).encode()).hexdigest()


def _out(emu: Any, namespace: str) -> str:
    return f"pinecone:docs?namespace={namespace}&host={emu.base_url}"


def test_a_new_namespace_is_written_with_yes_proved_and_searched_by_langchain(
    source: tuple[Any, str, Path],
) -> None:
    from langchain_pinecone import PineconeVectorStore

    from tests.builders.repeat_corpus import buggy_langchain_embeddings

    emu, spec, chunks = source
    before = _dump(emu, "prod")
    r = api.repair(spec, out=_out(emu, "fixed"), chunks=chunks, embedder=CountingEmbedder(32),
                   yes=True)  # fmt: skip
    assert r.ok, r.problems
    assert r.reading == "skip_repeat" and r.target_kind == "pinecone"
    assert r.target_check is not None and r.target_check["checked"] == N
    assert _dump(emu, "prod") == before
    c = repeat_corpus(N, 20)
    store = PineconeVectorStore(embedding=buggy_langchain_embeddings(hash_embed(32)),
                                host=emu.host("docs"), namespace="fixed",
                                pinecone_api_key=KEY)  # fmt: skip
    hit = store.similarity_search(c.texts[-1], k=1)[0]  # the shift's tail, held nowhere before
    assert hit.page_content == c.texts[-1] and hit.metadata["package"] == c.doc_of[-1]


@pytest.mark.parametrize(("extra", "namespace", "says"), [
    ([], "fixed", "add --yes"),
    (["--yes"], "prod", "source namespace"),
    (["--yes"], "taken", "already exists"),
])  # fmt: skip
def test_without_yes_or_at_the_source_or_a_used_namespace_exit_2_before_any_work(
    source: tuple[Any, str, Path], extra: list[str], namespace: str, says: str
) -> None:
    import numpy as np

    emu, spec, chunks = source
    builder.upsert(emu, "docs", ["x"], np.ones((1, 32), np.float32), namespace="taken")
    out = _out(emu, namespace)
    r = CliRunner().invoke(cli, ["repair", "--store", spec, "--chunks", str(chunks),
                                 "--embedder", HASH32, *extra, "--out", out])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert says in " ".join(r.output.split()) and "Traceback" not in r.output
    assert "fixed" not in emu.indexes["docs"].namespaces


def test_a_failed_write_deletes_the_namespace_and_leaves_the_source(
    source: tuple[Any, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexcheck.commands.repair.targets.pinecone import PineconeWriter

    emu, spec, chunks = source
    before = _dump(emu, "prod")
    real = PineconeWriter.write

    def dies(self: PineconeWriter, batch: Any) -> None:
        real(self, batch)  # the rows are in the new namespace...
        raise OSError(104, "Connection reset by peer")  # ...then the network goes

    monkeypatch.setattr(PineconeWriter, "write", dies)
    with pytest.raises(OutputError, match="nothing was left"):
        api.repair(spec, out=_out(emu, "fixed"), chunks=chunks, embedder=CountingEmbedder(32),
                   yes=True)  # fmt: skip
    assert "fixed" not in emu.indexes["docs"].namespaces
    assert _dump(emu, "prod") == before
