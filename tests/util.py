"""Small helpers shared by test modules."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``: proof that nothing was written."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
