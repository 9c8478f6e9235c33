"""glibc's allocator, tuned for the command line's process: large blocks reused, not mapped
afresh.

The streamed commands decode a store in blocks of a few MB, one thread ahead of the one that
frees them. glibc serves such a block by ``mmap`` until a freed one raises its threshold, and
trims a heap's free top past twice that threshold; which happens depends on the order of
frees, so a run could map and fault in every block again (figures on docs/performance.md).
:func:`tune` fixes both thresholds with ``mallopt`` (blocks under 32 MB from the heap, which
keeps up to 256 MB free at its top), as ``MALLOC_MMAP_THRESHOLD_`` and
``MALLOC_TRIM_THRESHOLD_`` would at start-up. The CLI calls it once, for its own process; the
library never does (the host owns its allocator). Nothing is done off glibc, or when the user
set one of glibc's malloc variables or a ``glibc.malloc.*`` tunable (theirs wins).
"""

from __future__ import annotations

import os
import platform
from typing import Any

#: mallopt's parameter numbers (glibc malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: blocks under this come from the heap (the most glibc's own dynamic threshold reaches on
#: 64-bit)
MMAP_THRESHOLD = 32 << 20
#: free memory a heap keeps at its top before it is given back
TRIM_THRESHOLD = 256 << 20
#: glibc's own variables: when the user set one, the allocator is theirs
USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def _libc() -> Any:
    """glibc, or None on another C library."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def tune(environ: Any = None, libc: Any = None) -> bool:
    """Set the two thresholds for this process; False when left as they were."""
    env = os.environ if environ is None else environ
    if any(v in env for v in USER_VARIABLES) or "glibc.malloc." in env.get("GLIBC_TUNABLES", ""):
        return False
    lib = _libc() if libc is None else libc
    if lib is None:
        return False
    done = lib.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return bool(lib.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and done)


__all__ = ["tune"]
