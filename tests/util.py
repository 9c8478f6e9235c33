"""Small helpers shared by test modules."""

from __future__ import annotations

import hashlib
import signal
from pathlib import Path

import numpy as np


def tree_digest(folder: Path, *, mtimes: bool = False, dirs: bool = False) -> dict[str, object]:
    """sha256 of every file under ``folder``: proof that nothing was written.

    ``mtimes`` adds each file's mtime_ns (a rewrite with the same bytes shows too);
    ``dirs`` lists folders as well (a created folder shows too).
    """
    out: dict[str, object] = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_dir():
            if dirs:
                out[rel] = ("dir", 0) if mtimes else "dir"
            continue
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        out[rel] = (digest, p.stat().st_mtime_ns) if mtimes else digest
    return out


def documented_score(score: str, x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """A documented score formula of rows x (n, d) against q (d,), computed in float64
    independently of indexcheck's own catalogue."""
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    dot = x64 @ q64
    cos = dot / (np.linalg.norm(x64, axis=1) * np.linalg.norm(q64))
    l2sq = ((x64 - q64) ** 2).sum(axis=1)
    table = {
        "cos": cos,
        "1-cos": 1 - cos,
        "dot": dot,
        "1-dot": 1 - dot,
        "-dot": -dot,
        "l2^2": l2sq,
        "l2": np.sqrt(l2sq),
        "(1+cos)/2": (1 + cos) / 2,
    }
    return table[score]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


#: what the CLI's last-resort handler prints for an exception nothing mapped; bad-input rows
#: assert it is absent (tests/test_bad_input.py proves an unmapped error prints it)
CATCH_ALL = "could not finish: "


def assert_one_error_line(exit_code: int, out: str, err: str, code: int, says: str) -> None:
    """The bad-input contract: exit ``code``, one ``error:`` line that says ``says``, no
    traceback, never the catch-all."""
    lines = err.strip().splitlines()
    assert exit_code == code, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert says in err, err
    assert "Traceback" not in out + err
    assert CATCH_ALL not in err  # the catch-all count is 0


def signals_as_at_a_terminal() -> None:
    """``preexec_fn`` for a child that is sent Ctrl-C or a hang-up: SIGINT and SIGHUP back to
    their defaults, as at a terminal. A run started by ``nohup`` or as a background job of a
    script inherits them ignored, and the child then rightly ignores them too."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
