"""The Weaviate emulator keeps the conventions the store relies on, seen through the official
client: certainty for cosine only, the cursor alone, typed filter values, IsNull only with
null state indexed, the 10,000-result limit, per-object batch errors and the API key."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("weaviate")

from weaviate.classes.data import DataObject  # noqa: E402
from weaviate.classes.query import Filter, MetadataQuery  # noqa: E402
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateQueryError  # noqa: E402

from tests.builders import weaviate as builder  # noqa: E402
from tests.emulators.weaviate_emulator import WeaviateEmulator  # noqa: E402

IDS = [str(uuid.UUID(int=i + 1)) for i in range(6)]


@pytest.fixture
def coll() -> Iterator[tuple[WeaviateEmulator, Any]]:
    with WeaviateEmulator() as emu:
        vecs = np.eye(6, 4, dtype=np.float32) + 0.1
        builder.collection(emu, "Dot", IDS, vecs, [{"year": 2000 + i} for i in range(6)],
                           distance="dot")  # fmt: skip
        with builder.client(emu) as c:
            yield emu, c.collections.use("Dot")


def test_certainty_is_for_cosine_only(coll: tuple[WeaviateEmulator, Any]) -> None:
    _, c = coll
    with pytest.raises(WeaviateQueryError, match="certainty when vector index is configured"):
        c.query.near_vector([1.0, 0, 0, 0], certainty=0.5)
    got = c.query.near_vector([1.0, 0, 0, 0], limit=2, return_metadata=MetadataQuery(distance=True))
    assert got.objects[0].metadata.distance == pytest.approx(-1.1)  # -dot


def test_the_cursor_takes_no_filter_and_lists_in_uuid_order(
    coll: tuple[WeaviateEmulator, Any],
) -> None:
    _, c = coll
    with pytest.raises(WeaviateQueryError, match="after"):
        c.query.fetch_objects(after=IDS[0], filters=Filter.by_property("year").equal(2001.0))
    got = c.query.fetch_objects(after=IDS[1], limit=3)
    assert [str(o.uuid) for o in got.objects] == IDS[2:5]


def test_filter_values_must_match_the_property_type(coll: tuple[WeaviateEmulator, Any]) -> None:
    _, c = coll  # auto-schema made "year" a number: valueInt is refused, valueNumber matches
    with pytest.raises(WeaviateQueryError, match='use "valueNumber"'):
        c.query.fetch_objects(filters=Filter.by_property("year").equal(2001))
    got = c.query.fetch_objects(filters=Filter.by_property("year").equal(2001.0))
    assert [str(o.uuid) for o in got.objects] == [IDS[1]]
    with pytest.raises(WeaviateQueryError, match="indexNullState"):
        c.query.fetch_objects(filters=Filter.by_property("year").is_none(True))


def test_limits_batch_errors_and_the_key() -> None:
    with WeaviateEmulator(api_key="k") as emu:
        builder.collection(emu, "Docs", IDS[:2], np.eye(2, 4, dtype=np.float32))
        with builder.client(emu) as c:
            docs = c.collections.use("Docs")
            with pytest.raises(WeaviateQueryError, match="maximum results"):
                docs.query.near_vector([1.0, 0, 0, 0], limit=10001)
            ok = DataObject(properties={}, vector=[0.0, 0.0, 1.0, 0.0])
            res = docs.data.insert_many([ok, DataObject(properties={}, vector=[1.0, 2.0])])
            assert list(res.errors) == [1] and "vector with length 2" in res.errors[1].message
            emu.api_key = "rotated"  # the client's key is refused from now on
            with pytest.raises(UnexpectedStatusCodeError, match="401"):
                docs.config.get()
