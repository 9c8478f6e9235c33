"""A reusable contract test for VectorStore implementations (read-only Protocol)."""

from __future__ import annotations

import numpy as np

from indexcheck.stores.base import VectorStore


def check_store_contract(store: VectorStore, ids: list[str], vectors: np.ndarray) -> None:
    """Assert the Protocol on a store built from ``ids`` and float32 ``vectors`` (n, d)."""
    n, d = vectors.shape
    info = store.info()
    assert info.count == n
    assert info.dimension == d
    fp1 = store.fingerprint()
    assert isinstance(fp1, str) and fp1

    # fetch returns rows in the order asked, and flags unknown ids
    ask = [ids[3], "no-such-id", ids[0]]
    got = store.fetch(ask)
    assert got.ids == ask
    assert got.vectors.dtype == np.float32 and got.vectors.shape == (3, d)
    assert got.found.tolist() == [True, False, True]
    assert got.dims.tolist() == [d, 0, d]
    np.testing.assert_allclose(got.vectors[0], vectors[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.vectors[2], vectors[0], rtol=1e-5, atol=1e-5)

    # iter_vectors visits each id once, with its vector
    seen: dict[str, np.ndarray] = {}
    for b in store.iter_vectors(batch=7):
        assert b.vectors.dtype == np.float32 and b.vectors.shape == (len(b.ids), d)
        for i, vid in enumerate(b.ids):
            assert vid not in seen
            seen[vid] = b.vectors[i]
    assert set(seen) == set(ids)
    pos = {v: i for i, v in enumerate(ids)}
    for vid, vec in seen.items():
        np.testing.assert_allclose(vec, vectors[pos[vid]], rtol=1e-5, atol=1e-5)

    # query returns (D float32 (q, k), I object (q, k)); a stored vector finds itself
    D, I = store.query(vectors[:5], 3)
    assert D.shape == (5, 3) and D.dtype == np.float32
    assert I.shape == (5, 3)
    for qi in range(5):
        assert ids[qi] in list(I[qi])
    if store.has_exact:
        D2, I2 = store.exact_query(vectors[:5], 3)
        assert [I2[qi, 0] for qi in range(5)] == ids[:5]

    # read-only: nothing changed
    assert store.info().count == n
    assert store.fingerprint() == fp1
