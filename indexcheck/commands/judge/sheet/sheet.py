"""The evidence sheet: an append-only record of judged claims that a person can audit and replay.

Layout under the sheet folder (each file is created once, never rewritten)::

    runs/RUN_ID/run.json          judge model, prompt version, indexcheck version, store, time
    runs/RUN_ID/cases.jsonl       the frozen cases: question, answer, passages in returned order
                                  (id, version, rank, score, xxh3 hash), citations
    runs/RUN_ID/claims.jsonl      one row per claim (or claims.parquet), one per claimless answer
    revisions/REV_ID.jsonl        a human revision: a new row naming the row it revises

Question and answer texts can be replaced by their xxh3 hashes (``hashes_only``). Every row
carries ``prev_hash`` and ``row_hash`` (one chain per run: cases, claims, revisions) and
run.json records the chain (:mod:`.chain`); reading is :mod:`.files`, verifying
:mod:`.verify`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...._version import __version__
from ....errors import DataFileError, InputError
from ....inputs.answers import AnswerRow
from ....inputs.corpus import text_hash
from ....output.locks import locked
from ....safety.textsafe import visible
from ..claims import ClaimVerdict, normalize
from ..result import JudgeResult
from . import chain as sc
from .files import NESTED, read_run, revisions, runs
from .pack import export_run
from .verify import require_verified, verify_run, verify_sheet

FORMATS = ("jsonl", "parquet")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id(prefix: str) -> str:
    """A sortable id: UTC time plus 6 random hex digits."""
    return f"{prefix}{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"


def _write_once(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as f:  # "x": an existing file is never rewritten
        f.write(text)


def _jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def check_sheet_dir(folder: Path) -> None:
    """Refuse a sheet path that is a file, before any work."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--sheet {folder} is a file; pass a folder for the evidence sheet")


def _case(row: AnswerRow, hashes_only: bool) -> dict[str, Any]:
    passages = []
    for p in row.contexts:
        item: dict[str, Any] = {"id": p.id, "version": p.version, "rank": p.rank}
        item |= {"score": p.score, "hash": text_hash(p.text)}
        if not hashes_only:
            item["text"] = p.text
        passages.append(item)
    case: dict[str, Any] = {
        "answer_id": row.id,
        "question_hash": text_hash(row.question),
        "answer_hash": text_hash(row.answer),
        "context_hash": text_hash(row.context_sent),
        "passages": passages,
        "sentences": [{"text": s.text, "cited": list(s.cited)} for s in row.sentences],
        "expected": row.expected,
        "in_scope": row.in_scope,
    }
    if not hashes_only:
        case |= {"question": row.question, "answer": row.answer, "context": row.context}
    return case


@dataclass(frozen=True)
class RunMeta:
    """What a run was made with; goes into run.json and every row."""

    judge_model: str
    prompt_version: str
    store_fingerprint: str | None = None
    reviewer: str | None = None
    note: str | None = None


def claim_rows(
    run_id: str, result: JudgeResult, rows: Sequence[AnswerRow], meta: RunMeta, hashes_only: bool
) -> list[dict[str, Any]]:
    """One sheet row per claim, and one per answer without claims (refusal, unjudged)."""
    by_id = {r.id: r for r in rows}
    out: list[dict[str, Any]] = []
    when = _now()
    for a in result.answers:
        row = by_id[a.id]
        passages = {p.id: p for p in row.contexts}
        base: dict[str, Any] = {
            "run_id": run_id,
            "answer_id": a.id,
            "status": a.status.value,
            "question_hash": text_hash(row.question),
            "answer_hash": text_hash(row.answer),
            "judge_model": meta.judge_model,
            "prompt_version": meta.prompt_version,
            "indexcheck_version": __version__,
            "store_fingerprint": meta.store_fingerprint,
            "time": when,
            "reviewer": meta.reviewer,
            "note": meta.note,
            "revises": None,
        }
        if not hashes_only:
            base |= {"question": row.question, "answer": row.answer}
        if not a.claims:
            extra = {"raw_reply": a.raw_reply, "problem": a.problem} if a.raw_reply else {}
            out.append(base | {"row_id": f"{run_id}/{a.id}/-", "claim_id": None} | extra)
            continue
        for i, c in enumerate(a.claims):
            ev = c.evidence or {}
            passage = passages.get(ev.get("passage", ""))
            out.append(
                base
                | {
                    "row_id": f"{run_id}/{a.id}/{i}",
                    "claim_id": i,
                    "claim": c.claim,
                    "cited": c.cited,
                    "evidence_passage": ev.get("passage"),
                    "evidence_version": ev.get("version"),
                    "evidence_rank": ev.get("rank"),
                    "evidence_hash": text_hash(passage.text) if passage else None,
                    "span": c.evidence_span,
                    "span_start": ev.get("start"),
                    "span_end": ev.get("end"),
                    "judge_verdict": c.judge_verdict.value,
                    "verdict": c.verdict.value,
                    "checks": {
                        "span_found": c.span_found,
                        "supported_by": c.supported_by,
                        "numbers_unsupported": c.numbers_unsupported,
                        "numbers_not_in_answer": c.numbers_not_in_answer,
                        "citation_status": c.citation_status.value,
                    },
                    "rationale": c.rationale,
                }
            )
    return out


def _claims_bytes(claims: list[dict[str, Any]], prev: str, fmt: str) -> tuple[str, bytes, str, int]:
    """(file name, its bytes, chain head, rows) of the claim rows, chained from ``prev``.

    A Parquet row is chained in the form it is stored in: every column, as a string or null."""
    if fmt != "parquet":
        head = sc.link(claims, prev)
        return "claims.jsonl", _jsonl(claims).encode("utf-8"), head, len(claims)
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = [{k: json.dumps(v) if k in NESTED else v for k, v in r.items()} for r in claims]
    keys = sorted({k for r in flat for k in r} | {"prev_hash", "row_hash"})
    cells = [
        {k: None if r.get(k) is None else str(r[k]) for k in keys if k not in ("prev_hash",)}
        for r in flat
    ]
    head = sc.link(cells, prev)
    buf = io.BytesIO()
    pq.write_table(pa.table({k: [c[k] for c in cells] for k in keys}), buf)
    return "claims.parquet", buf.getvalue(), head, len(cells)


def write_run(
    folder: str | Path,
    result: JudgeResult,
    rows: Sequence[AnswerRow],
    meta: RunMeta,
    *,
    hashes_only: bool = False,
    fmt: str = "jsonl",
    key: bytes | None = None,
) -> tuple[str, list[Path]]:
    """Append one run to the sheet; returns (run id, files written). Nothing old is touched.

    Cases and claim rows form one hash chain from run.json's header; run.json, written last,
    records its head, row counts and each file's sha256, signed (HMAC-SHA256) with ``key``."""
    if fmt not in FORMATS:
        raise InputError(f"sheet format must be one of {', '.join(FORMATS)}, got '{fmt}'")
    root = Path(folder)
    check_sheet_dir(root)
    with locked(root):  # a reader never sees a run folder half written
        return _write_run(root, result, rows, meta, hashes_only, fmt, key)


def _write_run(
    root: Path,
    result: JudgeResult,
    rows: Sequence[AnswerRow],
    meta: RunMeta,
    hashes_only: bool,
    fmt: str,
    key: bytes | None,
) -> tuple[str, list[Path]]:
    run_id = new_id("run-")
    run_dir = root / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    info: dict[str, Any] = {"run_id": run_id, "created": _now()}
    info["indexcheck_version"] = __version__
    info |= {"format": fmt, "hashes_only": hashes_only, **meta.__dict__}
    start = sc.genesis(info)
    cases = [_case(r, hashes_only) for r in rows]
    cases_head = sc.link(cases, start)
    cases_bytes = _jsonl(cases).encode("utf-8")
    claims = claim_rows(run_id, result, rows, meta, hashes_only)
    name, claims_bytes, head, n_claims = _claims_bytes(claims, cases_head, fmt)
    info["chain"] = {
        "algorithm": sc.ALGORITHM,
        "genesis": start,
        "head": head,
        "rows": len(cases) + n_claims,
        "cases": len(cases),
        "claims": n_claims,
        "files": {"cases.jsonl": sc.sha256_hex(cases_bytes), name: sc.sha256_hex(claims_bytes)},
    }
    if key is not None:
        sc.sign_run(info, key)
    files = [run_dir / "cases.jsonl", run_dir / name, run_dir / "run.json"]
    for path, data in zip(files, (cases_bytes, claims_bytes), strict=False):
        with path.open("xb") as f:  # "x": an existing file is never rewritten
            f.write(data)
    # run.json last: a run folder is complete (listed by runs()) only once it exists
    _write_once(files[2], json.dumps(info, indent=2, ensure_ascii=False) + "\n")
    return run_id, [files[2], files[0], files[1]]


def revise(
    folder: str | Path,
    row_id: str,
    verdict: str,
    reviewer: str,
    note: str | None = None,
    key: bytes | None = None,
) -> dict[str, Any]:
    """A human revision of one row's verdict: a new row that names the row it revises and
    extends the run's hash chain (signed with ``key``). A run that does not verify is
    refused (SheetNotVerifiedError, exit 1)."""
    try:
        new = ClaimVerdict(verdict.strip().upper())
    except ValueError:
        allowed = ", ".join(v.value for v in ClaimVerdict)
        raise InputError(f"--verdict '{verdict}' is not one of {allowed}") from None
    with locked(folder):  # the chain's end read and extended by one writer at a time
        return _revise(folder, row_id, new, reviewer, note, key)


def _revise(
    folder: str | Path,
    row_id: str,
    new: ClaimVerdict,
    reviewer: str,
    note: str | None,
    key: bytes | None,
) -> dict[str, Any]:
    run_id = row_id.split("/", 1)[0]
    _, _, claims = read_run(folder, run_id)
    target = next((r for r in claims if r["row_id"] == row_id), None)
    if target is None or target.get("claim_id") is None:
        raise DataFileError(
            f"no claim row '{visible(row_id)}' in run {visible(run_id)}; row ids look like "
            "RUN/ANSWER/N"
        )
    check = require_verified(folder, run_id, key, "revise")
    earlier = [r for _, r in check.revisions if r["revises"] == row_id]
    rev_id = new_id("rev-")
    row = {
        "row_id": rev_id,
        "revises": row_id,
        "run_id": run_id,
        "answer_id": target["answer_id"],
        "claim_id": target["claim_id"],
        "claim": target.get("claim"),
        "previous_verdict": earlier[-1]["verdict"] if earlier else target["verdict"],
        "verdict": new.value,
        "reviewer": reviewer,
        "note": note,
        "time": _now(),
        "indexcheck_version": __version__,
    }
    sc.link([row], str(check.last_hash))
    if key is not None:
        row["mac"] = sc.mac(key, str(row["row_hash"]).encode())
    _write_once(Path(folder) / "revisions" / f"{rev_id}.jsonl", _jsonl([row]))
    return row


def diff_runs(
    folder: str | Path, run_a: str, run_b: str, key: bytes | None = None
) -> dict[str, Any]:
    """Compare two runs claim by claim where the cases are compatible; otherwise name what
    changed: question, passage version, prompt, judge model or retrieval. Both runs must
    verify first (SheetNotVerifiedError, exit 1)."""
    info_a, cases_a, claims_a = read_run(folder, run_a)
    info_b, cases_b, claims_b = read_run(folder, run_b)
    for rid in dict.fromkeys((run_a, run_b)):
        require_verified(folder, rid, key, "diff")
    run_level = [
        dim
        for dim, key in (("prompt", "prompt_version"), ("judge model", "judge_model"))
        if info_a.get(key) != info_b.get(key)
    ]
    by_a = {c["answer_id"]: c for c in cases_a}
    by_b = {c["answer_id"]: c for c in cases_b}
    answers: list[dict[str, Any]] = []
    for aid in sorted(set(by_a) | set(by_b)):
        ca, cb = by_a.get(aid), by_b.get(aid)
        if ca is None or cb is None:
            answers.append(
                {
                    "answer_id": aid,
                    "compatible": False,
                    "changed": ["only in " + (run_a if cb is None else run_b)],
                }
            )
            continue
        changed = list(run_level)
        if ca["question_hash"] != cb["question_hash"]:
            changed.append("question")
        ids_a = [(p["id"], p["rank"]) for p in ca["passages"]]
        ids_b = [(p["id"], p["rank"]) for p in cb["passages"]]
        if ids_a != ids_b:
            changed.append("retrieval")
        elif [p["hash"] for p in ca["passages"]] != [p["hash"] for p in cb["passages"]]:
            changed.append("passage version")
        if ca["answer_hash"] != cb["answer_hash"]:
            changed.append("answer")
        entry: dict[str, Any] = {"answer_id": aid, "compatible": not changed, "changed": changed}
        if not changed:
            va = {
                normalize(r.get("claim") or ""): r.get("verdict") or r["status"]
                for r in claims_a
                if r["answer_id"] == aid
            }
            vb = {
                normalize(r.get("claim") or ""): r.get("verdict") or r["status"]
                for r in claims_b
                if r["answer_id"] == aid
            }
            entry["claims"] = [
                {"claim": k, "a": va.get(k), "b": vb.get(k)}
                for k in sorted(set(va) | set(vb))
                if va.get(k) != vb.get(k)
            ]
        answers.append(entry)
    return {"run_a": run_a, "run_b": run_b, "run_level_changes": run_level, "answers": answers}


__all__ = [
    "RunMeta",
    "check_sheet_dir",
    "diff_runs",
    "export_run",
    "read_run",
    "revise",
    "revisions",
    "runs",
    "verify_run",
    "verify_sheet",
    "write_run",
]
