"""The evidence sheet: an append-only record of judged claims that a person can audit and replay.

Layout under the sheet folder (each file is created once, never rewritten)::

    runs/RUN_ID/run.json          judge model, prompt version, indexcheck version, store, time
    runs/RUN_ID/cases.jsonl       the frozen cases: question, answer, passages in returned order
                                  (id, version, rank, score, xxh3 hash), citations
    runs/RUN_ID/claims.jsonl      one row per claim (or claims.parquet), one per claimless answer
    revisions/REV_ID.jsonl        a human revision: a new row naming the row it revises

Question and answer texts can be replaced by their xxh3 hashes (``hashes_only``).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..corpus import text_hash
from ..errors import DataFileError, InputError
from ..textsafe import visible
from ..version import __version__
from .answers import AnswerRow
from .claim_checks import Verdict, normalize
from .judge import JudgeResult

FORMATS = ("jsonl", "parquet")
_NESTED = ("cited", "checks")


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


_DAMAGED = "the sheet was edited by hand or is damaged; sheet files are written once, never edited"
_CASE_KEYS = ("answer_id", "question_hash", "answer_hash", "passages")
_PASSAGE_KEYS = ("id", "rank", "hash")
_CLAIM_KEYS = ("row_id", "answer_id", "status")
_REVISION_KEYS = ("row_id", "revises", "verdict")


def _read_jsonl(path: Path, required: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The rows of one sheet file; a missing, non-UTF-8, non-JSON or incomplete line is a
    DataFileError naming the file and line (exit 2), never a crash."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"cannot read sheet file {path}: {exc.strerror}; {_DAMAGED}") from None
    rows = []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{path} line {lineno}"
        try:
            row = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise DataFileError(f"{where} is not valid UTF-8 text; {_DAMAGED}") from None
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{where} is not valid JSON ({exc.msg}); {_DAMAGED}") from None
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise DataFileError(f"{where} has no '{missing[0]}'; {_DAMAGED}")
        rows.append(row)
    return rows


def _check_cases(path: Path, cases: list[dict[str, Any]]) -> None:
    for n, case in enumerate(cases, 1):
        passages = case["passages"]
        if not isinstance(passages, list) or not all(
            isinstance(p, dict) and all(k in p for k in _PASSAGE_KEYS) for p in passages
        ):
            raise DataFileError(
                f"{path} case {n}: 'passages' must be a list of {{id, rank, hash}}; {_DAMAGED}"
            )


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


def write_run(
    folder: str | Path,
    result: JudgeResult,
    rows: Sequence[AnswerRow],
    meta: RunMeta,
    *,
    hashes_only: bool = False,
    fmt: str = "jsonl",
) -> tuple[str, list[Path]]:
    """Append one run to the sheet; returns (run id, files written). Nothing old is touched."""
    if fmt not in FORMATS:
        raise InputError(f"sheet format must be one of {', '.join(FORMATS)}, got '{fmt}'")
    root = Path(folder)
    check_sheet_dir(root)
    run_id = new_id("run-")
    run_dir = root / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    info: dict[str, Any] = {"run_id": run_id, "created": _now()}
    info["indexcheck_version"] = __version__
    info |= {"format": fmt, "hashes_only": hashes_only, **meta.__dict__}
    claims = claim_rows(run_id, result, rows, meta, hashes_only)
    files = [run_dir / "run.json", run_dir / "cases.jsonl"]
    _write_once(files[0], json.dumps(info, indent=2, ensure_ascii=False) + "\n")
    _write_once(files[1], _jsonl([_case(r, hashes_only) for r in rows]))
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        flat = [{k: json.dumps(v) if k in _NESTED else v for k, v in r.items()} for r in claims]
        keys = sorted({k for r in flat for k in r})
        table = pa.table({k: [None if r.get(k) is None else str(r[k]) for r in flat] for k in keys})
        path = run_dir / "claims.parquet"
        with path.open("xb") as f:
            pq.write_table(table, f)
        files.append(path)
    else:
        files.append(run_dir / "claims.jsonl")
        _write_once(files[-1], _jsonl(claims))
    return run_id, files


#: what every run.json written by :func:`write_run` holds
_RUN_KEYS = ("run_id", "created", "indexcheck_version", "judge_model", "prompt_version")


def runs(folder: str | Path) -> list[str]:
    """Ids of the complete runs in the sheet (a folder with its run.json), oldest first."""
    base = Path(folder) / "runs"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "run.json").is_file())


def read_run(
    folder: str | Path, run_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(run.json, cases, claim rows) of one run; DataFileError if the run is unknown."""
    run_dir = Path(folder) / "runs" / run_id
    plain = run_id not in ("", ".", "..") and Path(run_id).name == run_id
    if not plain or not (run_dir / "run.json").is_file():
        known = ", ".join(runs(folder)[-5:]) or "none"
        raise DataFileError(f"no run '{visible(run_id)}' in sheet {folder}; runs: {known}")
    try:
        info = json.loads((run_dir / "run.json").read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        info = None
    if not isinstance(info, dict):
        raise DataFileError(f"{run_dir / 'run.json'} is not a JSON object; {_DAMAGED}")
    missing = [k for k in _RUN_KEYS if k not in info]
    if missing or info.get("run_id") != run_id:
        what = f"lacks {', '.join(missing)}" if missing else "names another run"
        raise DataFileError(f"{run_dir / 'run.json'} {what}; {_DAMAGED}")
    cases = _read_jsonl(run_dir / "cases.jsonl", _CASE_KEYS)
    _check_cases(run_dir / "cases.jsonl", cases)
    if (run_dir / "claims.parquet").is_file():
        import pyarrow.parquet as pq

        try:
            raw = pq.read_table(run_dir / "claims.parquet").to_pylist()
        except Exception as exc:  # pyarrow raises several types for unreadable files
            raise DataFileError(f"cannot read {run_dir / 'claims.parquet'}: {exc}") from None
        claims = [
            {k: json.loads(v) if k in _NESTED and v else v for k, v in r.items()} for r in raw
        ]
        for r in claims:
            for k in ("claim_id", "evidence_rank", "span_start", "span_end"):
                if r.get(k) is not None:
                    r[k] = int(r[k])
    else:
        claims = _read_jsonl(run_dir / "claims.jsonl", _CLAIM_KEYS)
    if any(k not in r for r in claims for k in _CLAIM_KEYS):
        raise DataFileError(f"{run_dir / 'claims.parquet'} lacks {_CLAIM_KEYS}; {_DAMAGED}")
    return info, cases, claims


def revisions(folder: str | Path) -> list[dict[str, Any]]:
    """Every revision row, oldest first."""
    base = Path(folder) / "revisions"
    if not base.is_dir():
        return []
    return [r for p in sorted(base.glob("*.jsonl")) for r in _read_jsonl(p, _REVISION_KEYS)]


def revise(
    folder: str | Path, row_id: str, verdict: str, reviewer: str, note: str | None = None
) -> dict[str, Any]:
    """A human revision of one row's verdict: a new row that names the row it revises."""
    try:
        new = Verdict(verdict.strip().upper())
    except ValueError:
        allowed = ", ".join(v.value for v in Verdict)
        raise InputError(f"--verdict '{verdict}' is not one of {allowed}") from None
    run_id = row_id.split("/", 1)[0]
    _, _, claims = read_run(folder, run_id)
    target = next((r for r in claims if r["row_id"] == row_id), None)
    if target is None or target.get("claim_id") is None:
        raise DataFileError(
            f"no claim row '{visible(row_id)}' in run {visible(run_id)}; row ids look like "
            "RUN/ANSWER/N"
        )
    earlier = [r for r in revisions(folder) if r["revises"] == row_id]
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
    _write_once(Path(folder) / "revisions" / f"{rev_id}.jsonl", _jsonl([row]))
    return row


def diff_runs(folder: str | Path, run_a: str, run_b: str) -> dict[str, Any]:
    """Compare two runs claim by claim where the cases are compatible; otherwise name what
    changed: question, passage version, prompt, judge model or retrieval."""
    info_a, cases_a, claims_a = read_run(folder, run_a)
    info_b, cases_b, claims_b = read_run(folder, run_b)
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


def export_run(folder: str | Path, run_id: str, out: str | Path) -> list[Path]:
    """The audit pack of one run: frozen cases, raw retrieval, answers, claim rows (with their
    revisions) and manifest.json holding the sha256 of every file."""
    info, cases, claims = read_run(folder, run_id)
    dest = Path(out)
    if dest.exists() and any(dest.iterdir()):
        raise InputError(f"--out {dest} is not empty; pass a new folder for the audit pack")
    dest.mkdir(parents=True, exist_ok=True)
    retrieval = [
        {
            "answer_id": c["answer_id"],
            "passages": [
                {k: p.get(k) for k in ("id", "version", "rank", "score", "hash")}
                for p in c["passages"]
            ],
        }
        for c in cases
    ]
    answers = [
        {
            k: c.get(k)
            for k in (
                "answer_id",
                "question",
                "answer",
                "question_hash",
                "answer_hash",
                "sentences",
            )
        }
        for c in cases
    ]
    row_ids = {r["row_id"] for r in claims}
    files = {
        "run.json": json.dumps(info, indent=2, ensure_ascii=False) + "\n",
        "cases.jsonl": _jsonl(cases),
        "retrieval.jsonl": _jsonl(retrieval),
        "answers.jsonl": _jsonl(answers),
        "claims.jsonl": _jsonl(claims),
        "revisions.jsonl": _jsonl([r for r in revisions(folder) if r["revises"] in row_ids]),
    }
    written = []
    for name, text in files.items():
        _write_once(dest / name, text)
        written.append(dest / name)
    manifest = {
        "run_id": run_id,
        "exported": _now(),
        "indexcheck_version": __version__,
        "files": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in written},
    }
    _write_once(dest / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return [*written, dest / "manifest.json"]
