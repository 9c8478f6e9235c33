"""check-index --all reads a ``parquet:`` store in its own order and builds no id map.

The map's build holds about 24 bytes a row while it sorts (the key, the row and the
argsort): at 800,000 chunks that alone was 18 MB of the 30 bytes a chunk the RSS test of
:mod:`.test_streamed_memory` allows, and 240 MB at 10 million. The store is now
opened without lookups for a check of every chunk; the few ids the foreign-id probe fetches
are found by one pass over the id column (a later lookup builds the map), and a repeated id
is still refused (exit 2), as the map refused it, before any chunk is embedded: from the id
column streamed into DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import indexcheck.api as api
from indexcheck.cli.app import cli
from indexcheck.errors import DataFileError
from indexcheck.output.cachedir import cache_root
from indexcheck.stores import StoreOptions, open_store
from tests.fast_hooks import FAST16

N = 600
FAST = "py:tests.fast_hooks:FAST16"


def _write(folder: Path, ids: list[str], texts: list[str], group: int = 100) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    vec = FAST16.embed(texts).astype(np.float32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 16)
    table = pa.Table.from_arrays([pa.array(ids), arr, pa.array(texts)], ["id", "vector", "text"])
    pq.write_table(table, folder / "vectors.parquet", row_group_size=group)
    pq.write_table(pa.table({"id": ids[:N], "text": texts[:N]}), folder / "chunks.parquet")
    return f"parquet:{folder / 'vectors.parquet'}"


def _chunks(n: int = N) -> tuple[list[str], list[str]]:
    return [f"c{i:05d}" for i in range(n)], [f"text {i} about {i % 37}" for i in range(n)]


def _maps() -> list[Path]:
    return sorted((cache_root() / "idmap").glob("*/meta.json"))


def test_check_all_builds_no_id_map(tmp_path: Path) -> None:
    spec = _write(tmp_path, *_chunks())
    before = _maps()
    result = api.check_index(
        spec, tmp_path / "chunks.parquet", FAST, sample=None, stream=True, block=128
    )
    assert result.ok and result.checked == N
    assert _maps() == before  # no map was built (nor saved) for the check


@pytest.mark.parametrize("twice", [450, N + 3])  # a chunk's id, an orphan's id
def test_a_repeated_id_is_refused_without_the_map_before_any_embedding(
    tmp_path: Path, twice: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks' ids are unique and the store repeats one at a row the foreign-id probe
    does not fetch: the refusal comes from the store's id column, before the first chunk is
    embedded (it came after every chunk was embedded, and paid for, from the scan)."""
    from indexcheck.commands.check_index.stream import check as streamed
    from indexcheck.commands.check_index.stream import scratch as stream_store

    monkeypatch.setattr(stream_store, "ID_ROWS", 64)  # several batches of the id column

    def embedded(*a: object, **k: object) -> None:
        raise AssertionError("a chunk was embedded before the refusal")

    monkeypatch.setattr(streamed, "_embed_pass", embedded)
    ids, texts = _chunks(N + 10)  # ten orphans after the chunks
    store_ids = list(ids)
    store_ids[twice] = ids[5] if twice < N else ids[N]
    spec = _write(tmp_path, store_ids, texts)
    chunks = tmp_path / "chunks.parquet"
    pq.write_table(pa.table({"id": ids[:N], "text": texts[:N]}), chunks)  # unique ids
    with pytest.raises(DataFileError, match="vectors.parquet has duplicate ids"):
        api.check_index(spec, chunks, FAST, sample=None, stream=True, block=128)
    args = ["check-index", "--all", "--store", spec, "--chunks", str(chunks),
            "--embedder", FAST]  # fmt: skip
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2, out.output
    assert "has duplicate ids; each id must appear once" in out.output


def test_a_few_ids_are_fetched_by_a_pass_as_the_map_fetches_them(tmp_path: Path) -> None:
    ids, texts = _chunks()
    ids[7] = "7"  # ids of every shape the keys see
    spec = _write(tmp_path, ids, texts, group=64)
    lazy = open_store(spec, StoreOptions(lookups=False))  # first: no map cached yet
    asked = [ids[599], "absent", ids[0], ids[7], ids[599], ids[300]]
    got = lazy.fetch(asked)
    want = open_store(spec).fetch(asked)
    assert got.ids == want.ids and (got.found == want.found).all()
    assert np.array_equal(got.vectors, want.vectors) and (got.dims == want.dims).all()
    assert got.texts == want.texts
    assert not lazy.ids_checked  # answered without building the map
    again = lazy.fetch(asked)  # a second lookup: the map, not another pass
    assert (
        lazy.ids_checked and again.ids == want.ids and np.array_equal(again.vectors, want.vectors)
    )


def test_a_repeated_id_fetched_by_a_pass_is_refused(tmp_path: Path) -> None:
    ids, texts = _chunks()
    ids[450] = ids[12]
    spec = _write(tmp_path, ids, texts)
    lazy = open_store(spec, StoreOptions(lookups=False))
    assert lazy.fetch([ids[13]]).found.all()
    with pytest.raises(DataFileError, match="duplicate ids"):
        lazy.fetch([ids[12]])


def test_ids_whose_keys_collide_are_compared_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every id keyed alike (a collision of the 64-bit keys, planted): the ids themselves
    decide, so a store of unique ids passes and one repeating an id is refused."""
    from indexcheck.commands.check_index.stream.scratch import refuse_repeated_ids
    from indexcheck.stores.files import id_map

    monkeypatch.setattr(id_map, "arrow_id_keys", lambda col: np.zeros(len(col), np.uint64))
    ids, texts = _chunks()
    unique = open_store(_write(tmp_path / "u", ids, texts), StoreOptions(lookups=False))
    refuse_repeated_ids(unique, str(tmp_path))
    ids[300] = ids[299]
    twice = open_store(_write(tmp_path / "t", ids, texts), StoreOptions(lookups=False))
    with pytest.raises(DataFileError, match="duplicate ids"):
        refuse_repeated_ids(twice, str(tmp_path))
