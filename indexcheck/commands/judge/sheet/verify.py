"""``sheet verify``: does each run still hold what was written? Its chain, counts, file hashes,
frozen passages and revisions, and with a key its signatures; :func:`verify_pack` does the same
for an exported audit pack against its manifest.

:func:`verify_run` names the first problem; ``sheet export``, ``sheet diff`` and ``sheet
revise`` call :func:`require_verified` first and refuse (exit 1) a run that does not verify.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ....errors import DataFileError, SheetNotVerifiedError
from ....inputs.corpus import text_hash
from ....safety.textsafe import visible
from . import chain as sc
from .files import RunFiles, load_run, load_run_dir, pack_extracts, read_jsonl, revision_files, runs


class Signature(StrEnum):
    """What verifying said of a run's signature."""

    VALID = "signature valid"  # checked against INDEXCHECK_SHEET_KEY
    NOT_CHECKED = "signature not checked"  # signed, but verified without the key
    UNSIGNED = "unsigned"


@dataclass
class RunCheck:
    """What verifying one run found: ``problem`` is None when it verified."""

    run_id: str
    problem: str | None = None
    rows: int = 0
    head: str | None = None
    signature: Signature = Signature.UNSIGNED
    revisions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "verified": self.ok,
            "problem": self.problem,
            "rows": self.rows,
            "revisions": len(self.revisions),
            "head": self.head,
            "last_hash": self.last_hash if self.ok else None,
            "signature": self.signature.value,
        }

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def last_hash(self) -> str | None:
        """The chain's end: the last revision's hash, else the run's head."""
        return str(self.revisions[-1][1]["row_hash"]) if self.revisions else self.head


def _chain_problem(f: RunFiles) -> tuple[str | None, str | None]:
    """(the first problem of the run's own files, the head reached)."""
    chain = f.info.get("chain")
    if not isinstance(chain, dict) or not isinstance(chain.get("files"), dict):
        return (
            "run.json has no hash chain (written before indexcheck chained its sheets, or "
            "the chain was removed); it cannot be verified",
            None,
        )
    if sc.genesis(f.info) != chain.get("genesis"):
        return (
            "run.json was edited after the run was written (its judge model, prompt version "
            "or another field no longer matches the chain's genesis)",
            None,
        )
    problem, head = sc.first_break(f.case_rows, str(chain["genesis"]))
    if problem:
        return problem, None
    if len(f.case_rows) != chain.get("cases"):
        return (
            f"cases.jsonl holds {len(f.case_rows)} cases, run.json records {chain.get('cases')}",
            None,
        )
    problem, head = sc.first_break(f.claim_rows, head)
    if problem:
        return problem, None
    n, want = len(f.claim_rows), chain.get("claims")
    if isinstance(want, int) and n > want:
        where = f.claim_rows[want][0]
        return (
            f"{where} was appended after the run was written ({n} rows, run.json records {want})",
            None,
        )
    if n != want or head != chain.get("head"):
        return (
            f"{f.claims_file} holds {n} rows, run.json records {want}: rows were dropped "
            f"after its last row", None
        )  # fmt: skip
    for name, digest in chain["files"].items():
        path = f.run_dir / str(name)
        if not path.is_file() or sc.sha256_hex(path.read_bytes()) != digest:
            return (
                f"{name} was changed after it was written (its sha256 differs from run.json's)",
                None,
            )
    for where, case in f.case_rows:
        for p in case["passages"]:
            if isinstance(p.get("text"), str) and text_hash(p["text"]) != p["hash"]:
                return (
                    f"{where}: passage {visible(str(p['id']))} no longer matches its frozen hash",
                    None,
                )
    return None, head


def _revision_chain(
    check: RunCheck, claim_ids: set[str], found: list[tuple[str, dict[str, Any]]], key: bytes | None
) -> str | None:
    """Order the run's revisions by their links from the run's head; the first problem."""
    by_prev: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, row in found:
        if "prev_hash" not in row:
            return f"{where} carries no chain hashes (not written by this indexcheck)"
        by_prev.setdefault(str(row["prev_hash"]), []).append((where, row))
    cur = check.head
    while cur in by_prev:
        step = by_prev.pop(cur)
        if len(step) > 1:
            return (
                f"{step[0][0]} and {step[1][0]} both follow the same row (written at the same "
                "time, or one was forged)"
            )
        where, row = step[0]
        if row.get("row_hash") != sc.row_hash(row):
            return f"{where} does not match its own hash: it was edited by hand"
        if row.get("revises") not in claim_ids:
            return f"{where} revises a row the run does not hold"
        if key is not None:
            if "mac" not in row:
                return f"{where} is not signed, but {sc.KEY_ENV} is set (written without the key)"
            want = sc.mac(key, str(row["row_hash"]).encode())
            if not hmac.compare_digest(str(row["mac"]), want):
                return f"{where} does not match its signature: forged, or signed with another key"
        check.revisions.append((where, row))
        cur = str(row["row_hash"])
    for rest in by_prev.values():
        return (
            f"{rest[0][0]} does not extend run {check.run_id}'s chain: a revision before it was "
            "dropped, or it was forged"
        )
    return None


def verify_run(
    folder: str | Path,
    run_id: str,
    key: bytes | None = None,
    all_revisions: list[tuple[str, dict[str, Any]]] | None = None,
) -> RunCheck:
    """Verify one run (its revisions included); DataFileError when a file cannot be read."""
    f = load_run(folder, run_id)
    check = RunCheck(run_id, rows=len(f.case_rows) + len(f.claim_rows))
    check.problem, check.head = _chain_problem(f)
    if check.problem:
        return check
    if all_revisions is None:
        all_revisions = revision_files(folder)
    mine = [(w, r) for w, r in all_revisions if r.get("run_id") == run_id]
    claim_ids = {str(r["row_id"]) for r in f.claims}
    check.problem = _revision_chain(check, claim_ids, mine, key)
    if check.problem:
        return check
    signed = isinstance(f.info.get("signature"), dict)
    if key is not None:
        check.problem = sc.check_signature(f.info, key, "run.json")
        check.signature = Signature.VALID
    elif signed:
        check.signature = Signature.NOT_CHECKED
    return check


@dataclass
class SheetCheck:
    runs: list[RunCheck]
    problems: list[str]  # revisions that belong to no run

    @property
    def ok(self) -> bool:
        return not self.problems and all(r.ok for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "runs": [r.to_dict() for r in self.runs],
            "problems": self.problems,
        }


def verify_sheet(
    folder: str | Path, key: bytes | None = None, run_ids: list[str] | None = None
) -> SheetCheck:
    """Verify the named runs (default: every run); a damaged file is that run's problem."""
    try:
        found = revision_files(folder)
    except DataFileError as exc:
        return SheetCheck([], [str(exc)])
    names = run_ids or runs(folder)
    if run_ids:
        for rid in run_ids:
            load_run(folder, rid)  # an unknown run is bad input (exit 2)
    checks = []
    for rid in names:
        try:
            checks.append(verify_run(folder, rid, key, found))
        except DataFileError as exc:
            checks.append(RunCheck(rid, problem=str(exc)))
    known = set(runs(folder))
    orphans = [f"{w} revises a row of run '{visible(str(r.get('run_id')))}', which the sheet "
               "does not hold" for w, r in found if r.get("run_id") not in known]  # fmt: skip
    return SheetCheck(checks, orphans if not run_ids else [])


def verify_pack(pack: str | Path, key: bytes | None = None) -> RunCheck:
    """Verify an audit pack written by ``sheet export``: every file against manifest.json,
    the run's chain, counts and revisions as in the sheet, and with ``key`` the signatures of
    run.json and the manifest. DataFileError (exit 2) when the pack has no readable manifest."""
    import json

    pack = Path(pack)
    try:
        manifest = json.loads((pack / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        manifest = None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise DataFileError(
            f"{pack} holds no readable manifest.json; pass a folder written by `sheet export`"
        )
    check = RunCheck(str(manifest.get("run_id")))
    for name, digest in manifest["files"].items():
        path = pack / str(name)
        if not path.is_file() or sc.sha256_hex(path.read_bytes()) != digest:
            check.problem = f"{name} in the pack does not match its sha256 in manifest.json"
            return check
    extra = sorted(p.name for p in pack.iterdir() if p.name not in manifest["files"])
    if extra != ["manifest.json"]:
        check.problem = f"{[e for e in extra if e != 'manifest.json'][0]} is not in manifest.json"
        return check
    try:
        f = load_run_dir(pack, check.run_id)
        revs = [(f"revisions.jsonl line {n}", r) for n, r in read_jsonl(pack / "revisions.jsonl")]
    except DataFileError as exc:
        check.problem = str(exc)
        return check
    check.rows = len(f.case_rows) + len(f.claim_rows)
    check.problem, check.head = _chain_problem(f)
    if check.problem is None:
        check.problem = _revision_chain(check, {str(r["row_id"]) for r in f.claims}, revs, key)
    if check.problem is None:
        derived = pack_extracts(f.cases, f.claims, [r for _, r in check.revisions])
        for name, data in derived.items():
            if name != f.claims_file and (pack / name).read_bytes() != data:
                check.problem = f"{name} in the pack is not what the run's verified rows give"
                break
    chain = manifest.get("chain") or {}
    if check.problem is None and (
        chain.get("head") != check.head or chain.get("last_hash") != check.last_hash
    ):
        check.problem = "manifest.json names another chain head than the pack's files hold"
    if check.problem is None and key is not None:
        check.problem = sc.check_signature(f.info, key, "run.json") or sc.check_signature(
            manifest, key, "manifest.json"
        )
        check.signature = Signature.VALID
    elif check.problem is None and isinstance(manifest.get("signature"), dict):
        check.signature = Signature.NOT_CHECKED
    return check


def require_verified(folder: str | Path, run_id: str, key: bytes | None, doing: str) -> RunCheck:
    """The run's check, or SheetNotVerifiedError (exit 1) naming its first problem."""
    check = verify_run(folder, run_id, key)
    if check.problem:
        raise SheetNotVerifiedError(
            f"sheet run {visible(run_id)} does not verify: {check.problem}; refusing to "
            f"{doing} it (`indexcheck sheet verify` lists every problem)"
        )
    return check


__all__ = [
    "RunCheck",
    "SheetCheck",
    "Signature",
    "require_verified",
    "verify_pack",
    "verify_run",
    "verify_sheet",
]
