"""Pinecone's filtered search through the emulator, which evaluates Pinecone's documented
filter language itself (tests/emulators/pinecone_filter.py): 200 seeded random portable
filters return exactly numpy's rows and top-k, and what Pinecone cannot express is refused
by operator before any request."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from indexcheck.errors import FilterError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import open_store
from tests.builders import pinecone as builder
from tests.emulators.pinecone_emulator import PineconeEmulator
from tests.emulators.pinecone_filter import matches
from tests.stores.seeded_filters import D, K, N, random_filter, seeded_rows

pytest.importorskip("pinecone")

KEY = "pcsk_filter_key"


@pytest.fixture(scope="module")
def store() -> Iterator[Any]:
    ids, vecs, metas = seeded_rows()
    with PineconeEmulator(api_key=KEY, exact=True) as emu:
        builder.upsert(emu, "docs", ids, vecs, metas)
        mp = pytest.MonkeyPatch()
        mp.setenv("PINECONE_API_KEY", KEY)
        with open_store(builder.spec(emu, "docs")) as s:
            s.info()  # the one-time describe, so a test alone sees only its own requests
            yield s, emu
        mp.undo()


def test_200_seeded_filters_return_numpys_rows_and_top_k(store: Any) -> None:
    s, emu = store
    ids, vecs, metas = seeded_rows()
    rng = random.Random(5)
    queries = np.random.default_rng(9).standard_normal((10, D)).astype(np.float32)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    nonempty = 0
    for n in range(200):
        flt = random_filter(rng)
        mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["pinecone"])
        # the emulator's own reading of Pinecone's language agrees with indexcheck's truth
        assert mask.tolist() == [matches(flt, m) for m in metas], flt
        q = queries[n % 10]
        cos = unit @ (q / np.linalg.norm(q))
        rows = [i for i in np.argsort(-cos, kind="stable") if mask[i]]
        want = [ids[i] for i in rows[:K]]
        D_, I = s.query(q[None], K, filter=flt)
        got = [i for i in I[0] if i is not None]
        assert got == want, flt
        np.testing.assert_allclose(D_[0, : len(want)], cos[rows[:K]], rtol=1e-5, atol=1e-5)
        nonempty += bool(want)
    assert nonempty > 150
    sent = [r.body["filter"] for r in emu.requests if r.path == "/query" and r.body.get("filter")]
    assert len(sent) == 200 and all("$and" in f or "$or" in f or len(f) == 1 for f in sent)


def test_a_missing_field_matches_no_comparison(store: Any) -> None:
    s, _ = store
    ids, _, metas = seeded_rows()
    q = np.ones((1, D), np.float32)
    _, I = s.query(q, N, filter={"lang": {"$ne": "en"}})
    got = {i for i in I[0] if i is not None}
    assert got == {ids[i] for i, m in enumerate(metas) if m.get("lang") == "de"}


@pytest.mark.parametrize(
    ("flt", "op"),
    [
        ({"meta.lang": "en"}, "'$eq' on 'meta.lang'"),
        ({"draft": {"$in": [True]}}, "'$in' on 'draft'"),
    ],
)
def test_what_pinecone_cannot_express_is_refused_by_operator(
    store: Any, flt: dict[str, Any], op: str
) -> None:
    s, emu = store
    before = len(emu.requests)
    with pytest.raises(FilterError, match=re.escape(op)) as err:
        s.query(np.ones((1, D), np.float32), K, filter=flt)
    assert err.value.exit_code == 2 and len(emu.requests) == before
