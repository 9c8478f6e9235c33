"""Which runtime runs the default model faster here: measured once, cached per machine.

OpenVINO is not faster everywhere (docs/performance.md has both outcomes). So ``auto`` times
both runtimes on a fixed workload (short sentences and 256-token paragraphs, best of two) the
first time the model is opened and keeps the one faster on paragraphs (what check-index
re-embeds; short sentences break a tie). One runtime for every batch: a text's vector must
not depend on the other texts of its batch (bf16 and fp32 differ in the 4th decimal). The
choice and the rates are cached in ``$INDEXCHECK_CACHE_DIR/minilm-runtime.json`` under a key
made of the CPU model, its flags, the two libraries' versions and the thread count; a changed
library or CPU measures again. ``INDEXCHECK_MINILM_RUNTIME`` skips all of this.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ...output.cachedir import cache_root

Runner = Callable[[dict[str, np.ndarray]], np.ndarray]
CACHE_FILE = "minilm-runtime.json"
_WORDS = (
    "the library renews loans online and holds printed books for members who ask at the "
    "desk during opening hours while children study quietly in the reading room upstairs"
).split()


def available_cores() -> int:
    """Cores this process may use: CPU affinity, capped by a cgroup CPU quota (v2 or v1)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


def _cgroup_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs allowed by the cgroup (quota / period), or None when unlimited or unknown."""
    with contextlib.suppress(OSError, ValueError):
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    with contextlib.suppress(OSError, ValueError):
        q = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        p = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if q <= 0 else q / p
    return None


def cpu_model() -> str:
    """The CPU's model name and a short hash of its feature flags (same name, other flags
    is another machine for this purpose)."""
    name, flags = platform.processor() or platform.machine(), ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name in ("", platform.machine()):
                name = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value.strip()
    return f"{name} [{hashlib.sha256(flags.encode()).hexdigest()[:8]}]"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def cache_key(threads: int) -> str:
    return (
        f"{cpu_model()}|onnxruntime {_version('onnxruntime')}|openvino {_version('openvino')}"
        f"|threads {threads}"
    )


def _cache_path() -> Path:
    return cache_root() / CACHE_FILE


def cached(threads: int) -> dict[str, Any] | None:
    """The cached calibration for this machine, libraries and thread count, if any."""
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = data.get(cache_key(threads)) if isinstance(data, dict) else None
    return entry if isinstance(entry, dict) and "runtime" in entry else None


def forget(threads: int) -> None:
    """Drop this machine's cached choice, so the next model opening measures again."""
    path = _cache_path()
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.pop(cache_key(threads), None) is not None:
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _store(threads: int, entry: dict[str, Any]) -> None:
    path = _cache_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[cache_key(threads)] = entry
    with contextlib.suppress(OSError):  # a read-only cache folder only costs a re-measure
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        tmp.replace(path)


def _workload(tokenizer: Any) -> dict[str, tuple[int, dict[str, np.ndarray]]]:
    """Two padded batches: 32 short sentences (8-12 words) and 4 paragraphs of 256 tokens."""
    from .encoding import encoding_feeds

    rng = np.random.default_rng(0)
    short = [" ".join(rng.choice(_WORDS, size=int(rng.integers(8, 13)))) + "." for _ in range(32)]
    para = [" ".join(rng.choice(_WORDS, size=300)) + "." for _ in range(4)]
    return {
        "short": (len(short), encoding_feeds(tokenizer.encode_batch(short))),
        "paragraph": (len(para), encoding_feeds(tokenizer.encode_batch(para))),
    }


def measure(run: Runner, work: dict[str, tuple[int, dict[str, np.ndarray]]]) -> dict[str, float]:
    """Texts per second of ``run`` on each batch of the workload, best of two timings."""
    rates = {}
    for name, (n, feeds) in work.items():
        run(feeds)  # warm-up: first-inference allocations and kernel selection
        best = math.inf
        for _ in range(2):
            t0 = time.perf_counter()
            run(feeds)
            best = min(best, time.perf_counter() - t0)
        rates[name] = round(n / best, 1)
    return rates


def choose(
    builders: dict[str, Callable[[], tuple[Runner, str]]], tokenizer: Any, threads: int
) -> tuple[Runner, str, dict[str, Any]]:
    """Build the cached choice, or time every runtime on short and on paragraph-length
    batches and keep the one faster on paragraphs (short sentences break a tie).

    Returns (runner, runtime label, the calibration entry with ``runtime``, ``short`` and
    ``long`` (builder names), ``rates`` by runtime label, ``measured_at`` and ``source``
    ``cache`` or ``measured``).
    """
    entry = cached(threads)
    if entry is not None and {entry.get("short"), entry.get("long")} <= set(builders):
        run, label = _assemble(builders, entry["short"], entry["long"])
        return run, label, {**entry, "source": "cache"}
    work = _workload(tokenizer)
    t0 = time.perf_counter()
    built: dict[str, tuple[Runner, str]] = {}
    rates: dict[str, dict[str, float]] = {}
    for name, build in builders.items():
        built[name] = build()
        rates[name] = measure(built[name][0], work)
    best = max(rates, key=lambda k: (rates[k]["paragraph"], rates[k]["short"]))
    short = long = best
    run, label = _assemble(builders, short, long, built)
    entry = {
        "runtime": label,
        "short": short,
        "long": long,
        "rates": {built[k][1]: v for k, v in rates.items()},
        "threads": threads,
        "key": cache_key(threads),
        "calibration_seconds": round(time.perf_counter() - t0, 2),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _store(threads, entry)
    return run, label, {**entry, "source": "measured"}


def _assemble(
    builders: dict[str, Callable[[], tuple[Runner, str]]],
    short: str,
    long: str,
    built: dict[str, tuple[Runner, str]] | None = None,
) -> tuple[Runner, str]:
    have = dict(built or {})
    for name in {short, long} - set(have):
        have[name] = builders[name]()
    return have[long]
