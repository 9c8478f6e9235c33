"""Which chunks a sampled check-index looks at: targeted ones, then a seeded random rest.

A positional-cache bug starts at the chunk right after a repeated text, so every such
chunk is checked, always. The rest of the sample is drawn uniformly from the other chunks,
and at least half of ``--sample`` stays random (so many repeats make the sample larger than
asked, never less random); only that random part supports a bound on the fault rate
(:func:`indexcheck.core.stats.fault_rate_upper`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .stats import sample_size_for


def choose_sample(
    n: int,
    sample: int | None,
    seed: int,
    dup_of: dict[int, int],
    max_fault_rate: float | None = None,
) -> tuple[list[int], set[int]]:
    """(sorted positions to check, the targeted ones among them) out of ``n`` chunks.

    ``sample`` is the total; ``max_fault_rate`` instead sizes the random part so that
    finding no fault bounds the rate under it at 95% (about 3 / rate chunks).
    """
    rng = np.random.default_rng(seed)
    after = sorted({p + 1 for p in dup_of if p + 1 < n})
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
            raise InputError(
                f"--sample {sample} is larger than the corpus ({n} chunks); "
                f"use --sample {n} or --all"
            )
        targeted = after
        random_part = max(sample - len(after), sample - sample // 2)
        sample = min(n, len(after) + random_part)
    rest = np.setdiff1d(np.arange(n), np.asarray(targeted, dtype=np.int64))
    drawn = rng.choice(rest, size=sample - len(targeted), replace=False)
    return sorted({*targeted, *(int(p) for p in drawn)}), set(targeted)
