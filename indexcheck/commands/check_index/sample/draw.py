"""Which chunks a sampled check-index looks at: targeted ones, then a seeded random rest.

A positional-cache bug starts at the chunk right after a repeated text, so such chunks are
checked, always: the chunk after each of the first ``TARGETS_PER_TEXT`` copies of every
repeated text (one text repeated a million times targets three chunks, not a million; the
cap's cost is reported as ``targets_dropped``). The rest of the sample is drawn uniformly
from the other chunks, and at least half of ``--sample`` stays random (so many repeats
make the sample larger than asked, never less random); only that random part supports a
bound on the fault rate (:func:`indexcheck.commands.kit.stats.fault_rate_upper`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....errors import InputError, SampleTooLargeError
from ...kit.stats import sample_size_for

#: repeats of one text whose following chunk is targeted (the first ones in build order)
TARGETS_PER_TEXT = 3


@dataclass(frozen=True)
class SamplePlan:
    positions: list[int]  # sorted positions to check
    targeted: set[int]  # the targeted ones among them
    dropped: int  # chunks after a repeat left out by the per-text cap


def targets_after_repeats(n: int, dup_of: dict[int, int]) -> tuple[list[int], int]:
    """(sorted positions right after a repeat, capped at ``TARGETS_PER_TEXT`` per text;
    how many positions the cap dropped)."""
    seen: dict[int, int] = {}
    keep: list[int] = []
    wanted = 0
    for p, first in dup_of.items():  # corpus order; each repeat's p + 1 is distinct
        if p + 1 >= n:
            continue
        wanted += 1
        k = seen.get(first, 0)
        if k < TARGETS_PER_TEXT:
            seen[first] = k + 1
            keep.append(p + 1)
    return sorted(keep), wanted - len(keep)


def plan_sample(
    n: int,
    sample: int | None,
    seed: int,
    dup_of: dict[int, int],
    max_fault_rate: float | None = None,
) -> SamplePlan:
    """The positions to check out of ``n`` chunks, the targeted ones, and the dropped count.

    ``sample`` is the total; ``max_fault_rate`` instead sizes the random part so that
    finding no fault bounds the rate under it at 95% (about 3 / rate chunks).
    """
    rng = np.random.default_rng(seed)
    after, dropped = targets_after_repeats(n, dup_of)
    if max_fault_rate is not None:
        if not 0 < max_fault_rate < 1:
            raise InputError("--max-fault-rate must be between 0 and 1, e.g. 0.01")
        random_part = sample_size_for(max_fault_rate)
        targeted = after
        sample = random_part + len(targeted)
        if sample > n:
            raise InputError(
                f"--max-fault-rate {max_fault_rate:g} needs {sample} chunks but the corpus "
                f"has {n}; use --all"
            )
    else:
        assert sample is not None
        if sample < 1:
            raise InputError("--sample must be at least 1")
        if sample > n:
            raise SampleTooLargeError(
                f"--sample {sample} is larger than the corpus ({n} chunks); "
                f"use --sample {n} or --all",
                n,
            )
        targeted = after
        random_part = max(sample - len(after), sample - sample // 2)
        sample = min(n, len(after) + random_part)
    rest = np.setdiff1d(np.arange(n), np.asarray(targeted, dtype=np.int64))
    drawn = rng.choice(rest, size=sample - len(targeted), replace=False)
    chosen = sorted({*targeted, *(int(p) for p in drawn)})
    return SamplePlan(chosen, set(targeted), dropped)
