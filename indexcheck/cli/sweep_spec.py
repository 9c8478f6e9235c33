"""``--sweep PARAM=V1,V2,...``: parse it into ``(PARAM, [V1, V2, ...])`` for
:func:`indexcheck.api.compare_ann`.

Each store declares what can be swept (``sweepable``); the spec is rewritten per value below
the api, by :func:`indexcheck.stores.sweep_spec` (:func:`indexcheck.stores.opening.swept_opener`
opens it). The core's sweep takes opened stores and never sees a spec.
"""

from __future__ import annotations

from ..errors import InputError


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


__all__ = ["parse_sweep"]
