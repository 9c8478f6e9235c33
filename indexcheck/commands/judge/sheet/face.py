"""The evidence sheet's operations as the face gives them (``sheet verify``, ``revise``,
``diff``, ``export``): each reads INDEXCHECK_SHEET_KEY, does its work and returns a
:class:`SheetOutcome` whose lines quote the sheet's data already escaped."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import InputError
from ....output.locks import locked
from ....safety.textsafe import escape_rich as escape
from ....safety.textsafe import visible

Warn = Callable[[str], None]


@dataclass(frozen=True)
class SheetOutcome:
    """A sheet operation's verdict, its JSON form (``data``) and the lines it prints:
    plain text for verify, revise and export (control characters shown), rich markup with
    every id and claim escaped for diff."""

    ok: bool
    data: dict[str, Any]
    lines: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return self.data


def env_key(warn: Warn | None = None) -> bytes | None:
    """INDEXCHECK_SHEET_KEY, validated (InputError naming the variable, never the value);
    a stripped-whitespace warning through ``warn``."""
    from .chain import sheet_key

    key, warning = sheet_key()
    if warning and warn is not None:
        warn(warning)
    return key


def verify_sheet(
    sheet: str | Path | None = None,
    *,
    pack: str | Path | None = None,
    run_ids: Sequence[str] | None = None,
    warn: Warn | None = None,
) -> SheetOutcome:
    """Verify an evidence sheet's runs (``run_ids``, default all) or an audit ``pack``
    (``sheet verify``): hash chains, row counts, file hashes, frozen passages, revisions and,
    with INDEXCHECK_SHEET_KEY, signatures. ``ok``: verified; ``lines``: the summary."""
    from .verify import SheetCheck, Signature, verify_pack
    from .verify import verify_sheet as verify_runs

    if (sheet is None) == (pack is None):
        raise InputError("sheet verify needs --sheet DIR or --pack DIR (one of them)")
    key = env_key(warn)
    if pack is not None:
        if run_ids:
            raise InputError("sheet verify --pack takes no RUN_ID: a pack holds one run")
        result = SheetCheck([verify_pack(pack, key)], [])
    else:
        assert sheet is not None
        with locked(sheet, shared=True):  # no revision or run half written meanwhile
            result = verify_runs(sheet, key, list(run_ids or ()) or None)
    lines = []
    for r in result.runs:
        if r.problem:
            lines.append(f"{r.run_id}: NOT VERIFIED: {r.problem}")
        else:
            lines.append(
                f"{r.run_id}: verified ({r.rows} rows, {len(r.revisions)} revisions, chain "
                f"head {str(r.head)[:16]}, {r.signature.value})"
            )
    lines += [f"NOT VERIFIED: {problem}" for problem in result.problems]
    if any(r.signature is Signature.NOT_CHECKED for r in result.runs):
        lines.append("signed runs: signature not checked; set INDEXCHECK_SHEET_KEY to check them")
    what = "pack" if pack is not None else "sheet"
    bad = sum(not r.ok for r in result.runs) + len(result.problems)
    if bad:
        lines.append(f"{what} NOT VERIFIED: {bad} problem(s) in {len(result.runs)} run(s)")
    else:
        lines.append(f"{what} verified: {len(result.runs)} run(s)")
    return SheetOutcome(not bad, result.to_dict(), tuple(visible(line) for line in lines))


def revise_sheet(
    sheet: str | Path,
    row_id: str,
    verdict: str,
    reviewer: str,
    note: str | None = None,
    *,
    warn: Warn | None = None,
) -> SheetOutcome:
    """Record a human revision of ``row_id``'s verdict as a new row (``sheet revise``);
    ``data`` is the row. A run that does not verify is refused (exit 1)."""
    from .sheet import revise as write_revision

    row = write_revision(sheet, row_id, verdict, reviewer, note, key=env_key(warn))
    line = (
        f"{row['row_id']} revises {row['revises']}: {row['previous_verdict']} -> {row['verdict']}"
    )
    return SheetOutcome(True, row, (visible(line),))


def diff_sheet(
    sheet: str | Path, run_a: str, run_b: str, *, warn: Warn | None = None
) -> SheetOutcome:
    """Compare two runs of a sheet claim by claim where their cases are compatible
    (``sheet diff``; both must verify); ``ok`` when no claim verdict differs."""
    from .sheet import diff_runs

    d = diff_runs(sheet, run_a, run_b, key=env_key(warn))
    lines, changed = [], 0
    for a in d["answers"]:
        if not a["compatible"]:
            changed_what = escape(", ".join(a["changed"]))
            lines.append(f"{escape(a['answer_id'])}: not comparable, changed {changed_what}")
            continue
        for c in a["claims"]:
            changed += 1
            lines.append(
                f"{escape(a['answer_id'])}: {escape(c['claim'])}: "
                f"{escape(c['a'])} -> {escape(c['b'])}"
            )
    lines.append(f"{changed} claim verdicts differ")
    return SheetOutcome(changed == 0, d, tuple(lines))


def export_sheet(
    sheet: str | Path, run_id: str, out: str | Path, *, warn: Warn | None = None
) -> SheetOutcome:
    """Write ``run_id``'s audit pack into the new folder ``out`` (``sheet export``): a run
    that does not verify is refused (exit 1); ``lines`` give each file's sha256."""
    from .pack import export_run

    files = export_run(sheet, run_id, out, key=env_key(warn))
    manifest = json.loads(files[-1].read_text(encoding="utf-8"))
    lines = tuple(visible(f"{digest}  {name}") for name, digest in manifest["files"].items())
    return SheetOutcome(True, {"files": [str(p) for p in files]}, lines)


__all__ = ["SheetOutcome", "diff_sheet", "env_key", "export_sheet", "revise_sheet", "verify_sheet"]
