"""The audit pack of one sheet run (``sheet export``): the run's frozen files copied byte for
byte, readable extracts, and manifest.json with the sha256 of every file and the chain's head.

A pack is written only for a run that verifies;
:func:`indexcheck.commands.judge.sheet.verify.verify_pack`
checks a pack later (``sheet verify --pack DIR``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...._version import __version__
from ....errors import InputError
from . import chain as sc
from .files import load_run, pack_extracts
from .verify import require_verified


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def export_run(
    folder: str | Path, run_id: str, out: str | Path, key: bytes | None = None
) -> list[Path]:
    """The audit pack of one run: frozen cases, raw retrieval, answers, claim rows (with their
    revisions) and manifest.json holding the sha256 of every file and the chain's head.

    The run must verify first (SheetNotVerifiedError, exit 1): a pack never certifies a
    forgery. run.json, cases.jsonl and the claims file are copied byte for byte (a Parquet
    run's pack holds claims.parquet as well as claims.jsonl); the other files are extracts
    of them (:func:`~indexcheck.commands.judge.sheet.files.pack_extracts`), which ``verify --pack``
    recomputes. The manifest is signed with ``key``."""
    loaded = load_run(folder, run_id)
    info, cases, claims = loaded.info, loaded.cases, loaded.claims
    dest = Path(out)
    if dest.exists() and any(dest.iterdir()):
        raise InputError(f"--out {dest} is not empty; pass a new folder for the audit pack")
    check = require_verified(folder, run_id, key, "export")
    src = loaded.run_dir
    files: dict[str, bytes] = {
        "run.json": (src / "run.json").read_bytes(),
        "cases.jsonl": (src / "cases.jsonl").read_bytes(),
        **pack_extracts(cases, claims, [r for _, r in check.revisions]),
    }
    files[loaded.claims_file] = (src / loaded.claims_file).read_bytes()
    written = []
    for name, data in files.items():
        dest.mkdir(parents=True, exist_ok=True)
        with (dest / name).open("xb") as f:
            f.write(data)
        written.append(dest / name)
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "exported": _now(),
        "indexcheck_version": __version__,
        "files": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in written},
        "chain": {
            "verified": True,
            "head": info["chain"]["head"],
            "rows": info["chain"]["rows"],
            "revisions": len(check.revisions),
            "last_hash": check.last_hash,
            "run_signature": check.signature,
        },
    }
    if key is not None:
        sc.sign_run(manifest, key)
    with (dest / "manifest.json").open("x", encoding="utf-8") as f:
        f.write(json.dumps(manifest, indent=2) + "\n")
    return [*written, dest / "manifest.json"]


__all__ = ["export_run"]
