"""Test-only index writers, one module per backend.

Each module ``tests/builders/<backend>.py`` exposes::

    def build(root: pathlib.Path, ids: list[str], vectors: np.ndarray,
              texts: list[str] | None, metric: str = "cosine", **kw) -> str

which writes a fresh index holding exactly those rows (vectors float32 (n, d), stored
as given, not re-normalised) under ``root`` (or in a server started by the tests) and
returns the indexcheck store spec that opens it. ``metric`` is one of the metrics the
backend offers (e.g. "cosine", "l2", "ip"). Writers live here, never in indexcheck/.
"""
