"""``--sweep PARAM=V1,V2,...``: parse it and rewrite a store spec per value.

Each store declares what can be swept (``sweepable``); the spec is rewritten by
:func:`indexcheck.stores.sweep_spec`. The core's sweep takes opened stores and never sees a spec.
"""

from __future__ import annotations

from ..errors import InputError
from ..stores import sweep_spec


def parse_sweep(text: str) -> tuple[str, list[int]]:
    """``efSearch=16,32,64`` -> ("efSearch", [16, 32, 64])."""
    key, sep, values = text.partition("=")
    try:
        nums = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        nums = []
    if not sep or not key.strip() or not nums or min(nums) < 1:
        raise InputError(
            f"--sweep '{text}' must be PARAM=V1,V2,... with positive integers, "
            "e.g. --sweep efSearch=16,32,64 or --sweep nprobe=1,4,16"
        )
    return key.strip(), nums


with_param = sweep_spec


__all__ = ["parse_sweep", "with_param"]
