"""``--sweep PARAM=V1,V2,...``: parse it and rewrite a store spec per value.

Local helper until ``indexcheck.stores.with_params`` and each store's ``sweepable`` tuple
land (issue 10, items 1-2); the core's sweep takes opened stores and never sees a spec.
"""

from __future__ import annotations

from urllib.parse import urlencode

from ..errors import InputError, SpecError
from ..stores.base import StoreSpec

#: Spec parameters that set a backend's search effort, by scheme (for --sweep).
SWEEPABLE: dict[str, tuple[str, ...]] = {
    "faiss": ("efSearch", "nprobe"),
    "langchain-faiss": ("efSearch", "nprobe"),
    "lancedb": ("nprobes", "refine_factor", "ef"),
    "pgvector": ("ef_search", "probes"),
}


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


def with_param(spec: str, key: str, value: int) -> str:
    """``spec`` with the search parameter ``key`` set to ``value`` (checked per backend)."""
    parsed = StoreSpec.parse(spec)
    allowed = SWEEPABLE.get(parsed.scheme, ())
    if key not in allowed:
        hint = (
            f"{parsed.scheme} accepts: {', '.join(allowed)}"
            if allowed
            else "only faiss, lancedb and pgvector specs take a search parameter"
        )
        raise SpecError(f"--sweep {key}: {parsed.scheme} has no search parameter {key}; {hint}")
    params = {**parsed.params, key: str(value)}
    return f"{parsed.scheme}:{parsed.location}?{urlencode(params)}"


__all__ = ["SWEEPABLE", "parse_sweep", "with_param"]
