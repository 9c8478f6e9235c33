"""Mixed faults in one index, each repaired its own way and named so: a shift (moved back,
its tail embedded), stale texts (embedded: text_changed), a partial model change (the
reused vector fails its check: embedded), orphans (left out, listed); a clean index is
copied as it is; a reused vector of a near-duplicate text fails its check and is embedded."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexcheck import api
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import (
    CountingEmbedder,
    api_sections,
    file_hashes,
    held_nowhere,
    held_source,
    target_rows,
    write_chunks,
)

ORPHANS = (50, 150, 250)
STALE = (20, 120, 200, 222)
OTHER_MODEL = (90, 130, 170, 210, 240)


def _mixed(tmp_path: Path) -> tuple[Path, Path, list[str], list[str], np.ndarray]:
    """The index as built (seed bug over 303 texts, 5 rows of another model) and the chunks
    as they are now (3 deleted: orphans; 4 edited: stale)."""
    c = repeat_corpus(303, 30)
    stored = seed_bug_vectors(c.texts, hash_embed(32))
    src = held_source(c.texts)
    other = HashEmbedder(32, model="another-model")
    for p in OTHER_MODEL:
        stored[p] = other.embed([c.texts[src[p]]])[0]
    store = tmp_path / "index.parquet"
    write_vectors_file(store, c.ids, stored, c.texts)
    now = list(c.texts)
    for p in STALE:
        now[p] = c.texts[p] + " Updated after the index was built."
    keep = [p for p in range(303) if p not in ORPHANS]
    chunks = write_chunks(tmp_path / "chunks.jsonl", [c.ids[p] for p in keep],
                          [now[p] for p in keep])  # fmt: skip
    return store, chunks, c.ids, c.texts, stored


def test_a_shift_stale_texts_a_partial_model_change_and_orphans_each_their_way(
    tmp_path: Path,
) -> None:
    store, chunks, ids, built, _ = _mixed(tmp_path)
    before = file_hashes(store)
    src = held_source(built)
    # the oracle, from the planted faults alone: a chunk takes its own row when that holds
    # its text's vector, else the first row that does; a row of the other model fails
    rows_of: dict[str, list[int]] = {}
    for p, s in enumerate(src):
        rows_of.setdefault(built[s], []).append(p)
    expect: dict[str, str] = {}
    tail = set(held_nowhere(built))
    for p in range(303):
        if p in ORPHANS:
            continue
        if p in STALE:
            expect[ids[p]] = "embedded:text_changed"
        elif p in tail:
            expect[ids[p]] = "embedded:shift_tail"
        else:
            own = built[src[p]] == built[p]
            chosen = p if own else min(rows_of[built[p]])
            if chosen in OTHER_MODEL:
                expect[ids[p]] = "failed_verification"
            else:
                expect[ids[p]] = "kept" if own else "moved"
    assert {"kept", "moved", "embedded:text_changed", "embedded:shift_tail",
            "failed_verification"} == set(expect.values())  # fmt: skip

    r = api.repair(f"parquet:{store}", out=tmp_path / "fixed", chunks=chunks,
                   embedder=HashEmbedder(32), verify="all")  # fmt: skip

    got = {
        row["id"]: row["way"] + (":" + row["reason"] if "reason" in row else "") for row in r.rows
    }
    got.update({i: "kept" for i in expect if i not in got})
    assert {i: w for i, w in got.items() if w != expect[i]} == {}
    assert r.orphans == [ids[p] for p in ORPHANS]
    assert r.ok, r.problems
    copy = target_rows(tmp_path / "fixed")
    assert copy["ids"] == [ids[p] for p in range(303) if p not in ORPHANS]
    assert file_hashes(store) == before
    summary = "\n".join(t.text for s in api_sections(r) for t in s.blocks if hasattr(t, "text"))
    for words in ("moved", "shift_tail", "text_changed", "failed_verification", "3 orphan"):
        assert words in summary


def test_a_clean_index_with_repeats_is_copied_as_it_is(tmp_path: Path) -> None:
    c = repeat_corpus(240, 30)
    store = tmp_path / "clean.parquet"
    write_vectors_file(store, c.ids, HashEmbedder(32).embed(c.texts), c.texts)
    emb = CountingEmbedder(32)
    r = api.repair(f"parquet:{store}", out=tmp_path / "fixed", embedder=emb, verify=16,
                   check=False)  # fmt: skip
    assert r.reading == "as_built"
    assert r.ways == {"kept": 240} and r.embedded == 0
    assert len(emb.sent) <= 16


def test_a_reused_vector_of_a_near_duplicate_text_fails_its_check_and_is_embedded(
    tmp_path: Path,
) -> None:
    c = repeat_corpus(200, 20)
    vectors = HashEmbedder(32).embed(c.texts)
    planted = 77  # the indexer embedded a near-duplicate of the text it stored
    vectors[planted] = HashEmbedder(32).embed([c.texts[planted] + " "])[0]
    store = tmp_path / "index.parquet"
    write_vectors_file(store, c.ids, vectors, c.texts)
    r = api.repair(f"parquet:{store}", out=tmp_path / "fixed", embedder=HashEmbedder(32),
                   verify="all")  # fmt: skip
    assert r.rows == [{"id": c.ids[planted], "position": planted, "way": "failed_verification"}]
    assert r.verify_failed == 1 and r.embedded == 1 and r.ok
    got = target_rows(tmp_path / "fixed")["vectors"][planted]
    assert np.array_equal(got, HashEmbedder(32).embed([c.texts[planted]])[0])
