"""A store that answers a fetch with fewer rows than ids asked stops the run (exit 3) with
the same words wherever vectors are fetched by id: check-index's stored vectors and the
exact ground truth's lookup go through one batched fetch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from indexcheck.commands.check_index.sample.vectors import StoredVectors
from indexcheck.commands.kit.fetching import fetch_batches
from indexcheck.commands.kit.ground_truth import Lookup
from indexcheck.errors import IncompleteResultError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores.protocol import Fetched
from indexcheck.testing import MemoryStore

IDS = ["a", "b", "c"]


class ShortStore(MemoryStore):
    """Drops the last row of every fetch answer of more than one id."""

    def fetch(self, ids: Sequence[str]) -> Fetched:
        got = super().fetch(ids)
        if len(ids) < 2:
            return got
        return Fetched(got.ids[:-1], got.vectors[:-1], got.found[:-1], got.dims[:-1], None)


def _store(cls: type[MemoryStore] = ShortStore) -> MemoryStore:
    return cls(IDS, np.eye(3, dtype=np.float32), texts=IDS)


def test_check_index_stored_vectors_refuse_a_short_answer() -> None:
    stored = StoredVectors(_store(), corpus_from_pairs(IDS, IDS))
    with pytest.raises(IncompleteResultError) as info:
        stored.fetch([0, 1, 2])
    assert str(info.value) == "memory:3 returned 2 vectors for 3 ids"
    assert info.value.exit_code == 3


def test_the_ground_truth_lookup_refuses_a_short_answer() -> None:
    lookup = Lookup(_store(), 3, "cos")
    with pytest.raises(IncompleteResultError) as info:
        lookup.ensure(IDS)
    assert str(info.value) == (
        "memory:3 returned 2 vectors for 3 ids; rerun, and report it if it persists"
    )


def test_batches_cover_every_id_in_order() -> None:
    got = list(fetch_batches(_store(MemoryStore), ["c", "a", "b"], 2))
    assert [(start, part) for start, part, _ in got] == [(0, ["c", "a"]), (2, ["b"])]
    assert got[0][2].found.tolist() == [True, True]
