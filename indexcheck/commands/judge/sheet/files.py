"""Reading the evidence sheet's files: runs, their frozen cases and claim rows, revisions.

A file that cannot be read as the sheet writes it (not UTF-8, not JSON, a line lacking its
keys) is a DataFileError naming the file and line (exit 2). Whether what was read is what was
written is :mod:`indexcheck.commands.judge.sheet.verify`'s question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....errors import DataFileError
from ....inputs.rowfiles import arrow_errors
from ....safety.textsafe import visible

NESTED = ("cited", "checks")
DAMAGED = "the sheet was edited by hand or is damaged; sheet files are written once, never edited"
CASE_KEYS = ("answer_id", "question_hash", "answer_hash", "passages")
_PASSAGE_KEYS = ("id", "rank", "hash")
CLAIM_KEYS = ("row_id", "answer_id", "status")
REVISION_KEYS = ("row_id", "revises", "verdict")
#: what every run.json written by the sheet holds
RUN_KEYS = ("run_id", "created", "indexcheck_version", "judge_model", "prompt_version")
_INT_COLUMNS = ("claim_id", "evidence_rank", "span_start", "span_end")


def read_jsonl(path: Path, required: Sequence[str] = ()) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of each non-blank line of one sheet file; a missing, non-UTF-8,
    non-JSON or incomplete line is a DataFileError naming the file and line (exit 2)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"cannot read sheet file {path}: {exc.strerror}; {DAMAGED}") from None
    rows = []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{path} line {lineno}"
        try:
            row = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise DataFileError(f"{where} is not valid UTF-8 text; {DAMAGED}") from None
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{where} is not valid JSON ({exc.msg}); {DAMAGED}") from None
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise DataFileError(f"{where} has no '{missing[0]}'; {DAMAGED}")
        rows.append((lineno, row))
    return rows


def _check_cases(path: Path, cases: list[dict[str, Any]]) -> None:
    for n, case in enumerate(cases, 1):
        passages = case["passages"]
        if not isinstance(passages, list) or not all(
            isinstance(p, dict) and all(k in p for k in _PASSAGE_KEYS) for p in passages
        ):
            raise DataFileError(
                f"{path} case {n}: 'passages' must be a list of {{id, rank, hash}}; {DAMAGED}"
            )


def runs(folder: str | Path) -> list[str]:
    """Ids of the complete runs in the sheet (a folder with its run.json), oldest first."""
    base = Path(folder) / "runs"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "run.json").is_file())


@dataclass
class RunFiles:
    """One run as read: run.json, cases and claims parsed, and the rows of each in the form
    their hashes were computed over, each with the place that names it."""

    run_dir: Path
    info: dict[str, Any]
    cases: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    claims_file: str
    case_rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    claim_rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def load_run(folder: str | Path, run_id: str) -> RunFiles:
    """Read one run; DataFileError (exit 2) if the run is unknown or a file is damaged."""
    run_dir = Path(folder) / "runs" / run_id
    plain = run_id not in ("", ".", "..") and Path(run_id).name == run_id
    if not plain or not (run_dir / "run.json").is_file():
        known = ", ".join(runs(folder)[-5:]) or "none"
        raise DataFileError(f"no run '{visible(run_id)}' in sheet {folder}; runs: {known}")
    return load_run_dir(run_dir, run_id)


def load_run_dir(run_dir: Path, run_id: str) -> RunFiles:
    """Read the run ``run_id`` from the folder holding its files (a sheet's run folder or an
    exported audit pack); DataFileError (exit 2) if a file is missing or damaged."""
    try:
        info = json.loads((run_dir / "run.json").read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        info = None
    if not isinstance(info, dict):
        raise DataFileError(f"{run_dir / 'run.json'} is not a JSON object; {DAMAGED}")
    missing = [k for k in RUN_KEYS if k not in info]
    if missing or info.get("run_id") != run_id:
        what = f"lacks {', '.join(missing)}" if missing else "names another run"
        raise DataFileError(f"{run_dir / 'run.json'} {what}; {DAMAGED}")
    numbered = read_jsonl(run_dir / "cases.jsonl", CASE_KEYS)
    cases = [row for _, row in numbered]
    _check_cases(run_dir / "cases.jsonl", cases)
    case_rows = [
        (f"cases.jsonl line {n} (answer {visible(str(r.get('answer_id')))})", r)
        for n, r in numbered
    ]
    if (run_dir / "claims.parquet").is_file():
        import pyarrow.parquet as pq

        name = "claims.parquet"
        try:
            raw = pq.read_table(run_dir / name).to_pylist()
        except arrow_errors() as exc:  # pyarrow raises several types for bad files
            raise DataFileError(f"cannot read {run_dir / name}: {exc}") from None
        claims = [{k: json.loads(v) if k in NESTED and v else v for k, v in r.items()} for r in raw]
        for r in claims:
            for k in _INT_COLUMNS:
                if r.get(k) is not None:
                    r[k] = int(r[k])
        claim_rows = [
            (f"{name} row {n} (row {visible(str(r.get('row_id')))})", r)
            for n, r in enumerate(raw, 1)
        ]
    else:
        name = "claims.jsonl"
        numbered = read_jsonl(run_dir / name, CLAIM_KEYS)
        claims = [row for _, row in numbered]
        claim_rows = [
            (f"{name} line {n} (row {visible(str(r.get('row_id')))})", r) for n, r in numbered
        ]
    if any(k not in r for r in claims for k in CLAIM_KEYS):
        raise DataFileError(f"{run_dir / name} lacks {CLAIM_KEYS}; {DAMAGED}")
    return RunFiles(run_dir, info, cases, claims, name, case_rows, claim_rows)


def read_run(
    folder: str | Path, run_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(run.json, cases, claim rows) of one run; DataFileError if the run is unknown."""
    f = load_run(folder, run_id)
    return f.info, f.cases, f.claims


def revision_files(folder: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(file name, row) of every revision, by file name (one row per file)."""
    base = Path(folder) / "revisions"
    if not base.is_dir():
        return []
    return [
        (f"revisions/{p.name}", row)
        for p in sorted(base.glob("*.jsonl"))
        for _, row in read_jsonl(p, REVISION_KEYS)
    ]


def revisions(folder: str | Path) -> list[dict[str, Any]]:
    """Every revision row, by file name (see sheet_verify for their chain order)."""
    return [row for _, row in revision_files(folder)]


def _jsonl(rows: Sequence[dict[str, Any]]) -> bytes:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    return text.encode("utf-8")


def pack_extracts(
    cases: list[dict[str, Any]], claims: list[dict[str, Any]], revised: list[dict[str, Any]]
) -> dict[str, bytes]:
    """The audit pack's readable files, derived from a verified run: retrieval, answers,
    claims as JSONL and the revisions in chain order."""
    passage_keys = ("id", "version", "rank", "score", "hash")
    answer_keys = ("answer_id", "question", "answer", "question_hash", "answer_hash", "sentences")
    retrieval = [
        {"answer_id": c["answer_id"], "passages": [{k: p.get(k) for k in passage_keys}
                                                   for p in c["passages"]]}
        for c in cases
    ]  # fmt: skip
    return {
        "retrieval.jsonl": _jsonl(retrieval),
        "answers.jsonl": _jsonl([{k: c.get(k) for k in answer_keys} for c in cases]),
        "claims.jsonl": _jsonl(claims),
        "revisions.jsonl": _jsonl(revised),
    }
