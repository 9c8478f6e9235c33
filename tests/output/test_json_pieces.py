"""json_pieces.iter_json gives json.dumps's text byte for byte (indent, ensure_ascii either
way, the CLI's numpy default), on nested and flat containers of every scalar, and refuses
what json refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from indexcheck.output.json_pieces import iter_json


def _default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON: {type(o).__name__}")


def _random(rng: np.random.Generator, depth: int) -> Any:
    kind = int(rng.integers(0, 12 if depth < 4 else 8))
    scalars: list[Any] = [
        None, True, False, 0, -7, 2**70, 1.5, -0.0, 1e-320, 1e308, math.nan, math.inf,
        -math.inf, "", "caf\u00e9 \u3000\n\t\"q\" \\", "\x00\x1f", "\U0001f600", "ascii",
        np.float32(0.1), np.int64(3), np.bool_(True), np.float64(2.5),
    ]  # fmt: skip
    if kind < 8:
        return scalars[int(rng.integers(0, len(scalars)))]
    n = int(rng.integers(0, 5))
    if kind == 8:
        return [_random(rng, depth + 1) for _ in range(n)]
    if kind == 9:
        return tuple(_random(rng, depth + 1) for _ in range(n))
    if kind == 10:
        keys: list[Any] = ["a", "b\u00e9", 1, 2.5, True, None, "z", -3]
        return {keys[int(rng.integers(0, len(keys)))]: _random(rng, depth + 1) for _ in range(n)}
    return np.arange(n, dtype=np.float32) / 3


@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("indent", [2, 0, 4])
def test_the_text_is_json_dumps_text(ensure_ascii: bool, indent: int) -> None:
    rng = np.random.default_rng(indent * 2 + ensure_ascii)
    for _ in range(600):
        data = {"rows": [_random(rng, 1) for _ in range(int(rng.integers(0, 6)))],
                "x": _random(rng, 0)}  # fmt: skip
        want = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, default=_default)
        got = "".join(iter_json(data, indent=indent, ensure_ascii=ensure_ascii, default=_default))
        assert got == want


def test_a_result_of_flat_rows_is_json_dumps_text() -> None:
    rows = [{"id": f"n{i}", "old_id": None, "status": "model_change", "cosine": i / 7,
             "holds_vector_of": None} for i in range(2000)]  # fmt: skip
    data = {"ok": False, "chunks": rows, "counts": {"model_change": 2000}, "empty": [], "e": {}}
    want = json.dumps(data, indent=2, ensure_ascii=False, default=_default)
    assert "".join(iter_json(data, indent=2, ensure_ascii=False, default=_default)) == want


def test_what_json_refuses_is_refused() -> None:
    with pytest.raises(TypeError):
        "".join(iter_json({(1, 2): 3}, indent=2, default=_default))
    with pytest.raises(TypeError):
        "".join(iter_json({"a": object()}, indent=2, default=_default))
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        "".join(iter_json(loop, indent=2, default=_default))


def test_long_containers_of_scalars_are_written_a_slice_at_a_time() -> None:
    """A list of 800,000 ids (a finding's chunk ids) is not one string: its pieces hold at
    most SLICE items (the CLI's peak RSS grew 57 bytes a chunk when it was), and the text
    across slice boundaries is json's."""
    from indexcheck.output import json_pieces

    rng = np.random.default_rng(5)
    long_list = [f"id-{i}" if i % 3 else (None if i % 2 else i / 3) for i in range(3 * 1024 + 7)]
    long_dict = {f"k{i}": float(rng.standard_normal()) for i in range(2 * 1024 + 1)}
    for data in ({"ids": long_list, "m": long_dict}, long_list, long_dict, [1] * 1024):
        want = json.dumps(data, indent=2, ensure_ascii=False, default=_default)
        pieces = list(iter_json(data, indent=2, ensure_ascii=False, default=_default))
        assert "".join(pieces) == want
    pieces = list(iter_json(long_list, indent=2, default=_default))
    assert len(pieces) == 5 and max(p.count(",\n") for p in pieces) <= json_pieces.SLICE


@pytest.mark.parametrize("indent", [0, 2, 4])
@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_rows_written_by_the_c_encoder_are_json_dumps_text(indent: int, ensure_ascii: bool) -> None:
    """A list of flat dicts goes a slice at a time through json's C encoder and has its row
    boundaries re-indented: braces, commas and escaped newlines inside the strings, every
    scalar, keys of every type, and the slice boundaries give json's text."""
    import enum

    from indexcheck.output import json_pieces

    class Status(enum.StrEnum):  # as the results' statuses are
        MOVED = "vector_changed"

    class Rank(enum.IntEnum):
        TOP = 1

    tricky = ["},\n{", "}, {", '"}', "\u2028\u2029", "caf\u00e9", "\\", "", "{}", "a\r\nb"]
    values: list[Any] = [*tricky, None, True, False, 0, -1, 2**70, 0.1, -0.0, math.nan, math.inf,
                         Status.MOVED, Rank.TOP, np.float64(0.3)]  # fmt: skip
    rows: list[Any] = []
    for i in range(2 * json_pieces.SLICE + 3):
        keys: list[Any] = ["id", "v", i % 5, 2.5, True, None, "}\n{"]
        rows.append({k: values[(i * 7 + j) % len(values)] for j, k in enumerate(keys[: 1 + i % 7])})
    for data in ({"chunks": rows, "n": 1}, rows, [rows[:3], {"r": rows[3:5]}], tuple(rows[:2])):
        want = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, default=_default)
        pieces = list(iter_json(data, indent=indent, ensure_ascii=ensure_ascii, default=_default))
        assert "".join(pieces) == want
    pieces = list(iter_json(rows, indent=2, default=_default))
    assert len(pieces) == 4  # three slices and the closing bracket
