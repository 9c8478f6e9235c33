"""A ci gate row: one declared limit against what a check measured.

``judge`` decides it: PASS when ``value op limit`` holds; BLOCK when it fails or nothing
was measured; INSUFFICIENT_EVIDENCE when a rate was measured on too few questions, unless
its 95% interval cannot reach the limit (hit@4 = 0.000 [0, 0.149] against ``>= 0.9``):
more questions cannot save that rate, so it is BLOCK.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..kit.verdicts import Verdict
from .config import BLOCK, INSUFFICIENT, OPS, PASS
from .toml_table import Limit


@dataclass
class GateRow:
    """One declared limit and what was measured: ``value op limit`` decides PASS/BLOCK."""

    check: str
    metric: str
    value: float | str | None
    limit: float | str | None
    op: str
    verdict: Verdict
    detail: str = ""


def can_reach(lim: Limit, low: float | None, high: float | None) -> bool:
    """Whether some value in the interval [low, high] meets ``op limit`` (an open end
    reaches anything)."""
    lo = -math.inf if low is None or math.isnan(low) else low
    hi = math.inf if high is None or math.isnan(high) else high
    if lim.op in (">=", ">"):
        return bool(OPS[lim.op](hi, lim.value))
    if lim.op in ("<=", "<"):
        return bool(OPS[lim.op](lo, lim.value))
    return lo <= lim.value <= hi  # ==


def judge(
    check: str,
    lim: Limit,
    value: float | int | None,
    n: int | None = None,
    min_n: int = 0,
    interval: tuple[float | None, float | None] | None = None,
) -> GateRow:
    """PASS when ``value op limit`` holds; BLOCK when it fails or nothing was measured;
    INSUFFICIENT_EVIDENCE when the rate was measured on fewer than ``min_n`` (n given),
    except BLOCK when its 95% ``interval`` (low, high) holds no value that meets the limit."""
    row = GateRow(check, lim.metric, value, lim.value, lim.op, PASS)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        row.verdict, row.detail = BLOCK, "nothing was measured"
    elif n is not None and n < min_n and interval is not None and not can_reach(lim, *interval):
        row.verdict = BLOCK
        lo, hi = interval
        row.detail = (
            f"{fmt(value)} [{fmt(lo)}, {fmt(hi)}] on {n} (fewer than min-questions {min_n}): "
            f"even the 95% interval cannot reach {lim.op} {lim.value:g}"
        )
    elif n is not None and n < min_n:
        row.verdict = INSUFFICIENT
        row.detail = f"measured on {n}, fewer than min-questions {min_n}"
    elif not OPS[lim.op](float(value), lim.value):
        row.verdict = BLOCK
        row.detail = f"{fmt(value)} is not {lim.op} {lim.value:g}"
    if n is not None and not row.detail:
        row.detail = f"n={n}"
    return row


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


__all__ = ["GateRow", "can_reach", "fmt", "judge"]
