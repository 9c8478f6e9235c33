"""Chroma: the private snapshot a local collection is read from (see chroma.py).

Chroma writes to a persistent directory whenever a client opens it, so a local store
reads a copy: SQLite's online backup from a ``mode=ro`` connection, plus the segment
folders of the asked collection. Split from ``chroma.py`` by job.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from ...errors import InputError

SQLITE_FILE = "chroma.sqlite3"


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _snapshot(src: Path, collection: str) -> tuple[str, int | None]:
    """Copy a PersistentClient directory's SQLite file and the collection's segment folders
    to a new temporary directory without writing ``src``; returns (copy path, last seq id)."""
    db_file = src / SQLITE_FILE
    tmp = tempfile.mkdtemp(prefix="indexcheck-chroma-")
    try:
        posix = db_file.resolve().as_posix()
        uri = "file:" + posix.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        try:
            source = sqlite3.connect(uri + "?mode=ro", uri=True)
            try:
                seg_dirs, seq = _collection_segments(source, collection)
                needed = db_file.stat().st_size + sum(
                    _tree_size(src / s) for s in seg_dirs if (src / s).is_dir()
                )
                free = shutil.disk_usage(tmp).free
                if free < needed + (64 << 20):
                    raise InputError(
                        f"chroma: a read-only snapshot of '{src}' needs {needed >> 20} MB in "
                        f"{tempfile.gettempdir()} but only {free >> 20} MB are free; set "
                        "TMPDIR to a directory on a roomier disk"
                    )
                target = sqlite3.connect(str(Path(tmp) / SQLITE_FILE))
                try:
                    source.backup(target)
                finally:
                    target.close()
            finally:
                source.close()
        except sqlite3.Error as exc:
            raise InputError(
                f"chroma: cannot read '{db_file}' ({exc}); pass the directory a Chroma "
                "PersistentClient wrote, and let any writer finish first"
            ) from exc
        for seg in seg_dirs:
            if (src / seg).is_dir():
                shutil.copytree(src / seg, Path(tmp) / seg)
        return tmp, seq
    except BaseException:
        _remove_tree(tmp)
        raise


def _plain_name(name: str) -> bool:
    return bool(name) and name not in {".", ".."} and "/" not in name and "\\" not in name


def _collection_segments(conn: sqlite3.Connection, collection: str) -> tuple[list[str], int | None]:
    """Segment folder names of every collection named ``collection`` and their last seq id."""
    try:
        rows = conn.execute(
            "SELECT s.id, c.id FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE c.name = ?",
            (collection,),
        ).fetchall()
    except sqlite3.Error:
        # An older or newer schema: copy every folder the database names.
        rows = conn.execute("SELECT id, collection FROM segments").fetchall()
    # Segment ids name folders; keep plain names only, so a crafted database cannot make
    # the copy read or write outside the two directories.
    segs = [str(r[0]) for r in rows if _plain_name(str(r[0]))]
    marks: list[Any] = []
    try:
        for seg in segs:
            marks.append(
                conn.execute(
                    "SELECT MAX(seq_id) FROM max_seq_id WHERE segment_id = ?", (seg,)
                ).fetchone()[0]
            )
        for cid in {str(r[1]) for r in rows}:
            marks.append(
                conn.execute(
                    "SELECT MAX(seq_id) FROM embeddings_queue WHERE topic LIKE ?", (f"%/{cid}",)
                ).fetchone()[0]
            )
    except sqlite3.Error:
        marks = []
    ints = [int(m) for m in marks if isinstance(m, int)]
    seq = max(ints) if ints else None
    return segs, seq
