"""api.check_index builds one CheckIndexSettings: a chunks path is read with its columns
(block by block with ``stream``, else in memory), a template string is parsed at the face,
and the manifest names the chunks file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexcheck import api
from indexcheck.commands.check_index import CheckIndexSettings
from indexcheck.errors import InputError
from indexcheck.inputs.embed_text import EmbedTemplate
from indexcheck.testing import HashEmbedder, MemoryStore


def _world(tmp_path: Path) -> tuple[MemoryStore, Path]:
    ids, texts = [f"c{i}" for i in range(20)], [f"text number {i}" for i in range(20)]
    chunks = tmp_path / "chunks.jsonl"
    rows = (json.dumps({"cid": i, "body": t}) for i, t in zip(ids, texts, strict=True))
    chunks.write_text("\n".join(rows) + "\n")
    return MemoryStore(ids, HashEmbedder(32).embed(texts), texts), chunks


def test_a_template_string_is_parsed_once_at_the_face() -> None:
    settings = CheckIndexSettings(template="{id}: {text}")
    assert isinstance(settings.template, EmbedTemplate)
    with pytest.raises(InputError):
        CheckIndexSettings(template="{nope}")


@pytest.mark.parametrize("stream", [False, True])
def test_a_chunks_path_is_read_with_its_columns(tmp_path: Path, stream: bool) -> None:
    store, chunks = _world(tmp_path)
    r = api.check_index(
        store, chunks, HashEmbedder(32), sample=None, stream=stream, seed=3,
        id_column="cid", text_column="body",
    )  # fmt: skip
    assert r.ok and r.checked == 20
    assert r.manifest["chunks"] == str(chunks) and r.manifest["seed"] == 3
