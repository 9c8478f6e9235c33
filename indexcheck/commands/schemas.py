"""Every command's ``--json`` result as a JSON Schema, generated from its result dataclass.

:data:`SHAPES` says where a result's JSON form differs from ``asdict`` (a key renamed, left
out or added by its ``to_dict``); :func:`all_schemas` builds one schema per kind of
:data:`indexcheck.output.schemas.KINDS`. ``scripts/write_schemas.py`` writes them into the
package; ``tests/output/test_json_schemas.py`` fails when they differ from the committed
files, and validates real ``--json`` outputs of every command against them.
"""

from __future__ import annotations

from typing import Any

from ..output.schema import SCHEMA_VERSION
from ..output.schemas import DIALECT, Shape, doc_line, schema_id, schema_of, type_schema
from .check_index.result import CheckIndexResult
from .ci.result import CiResult
from .compare_ann.result import AnnResult, FetchRow
from .diagnose.result import DiagnoseResult, QuestionDiagnosis
from .diagnose.system.result import SystemDiagnoseResult
from .diagnose.trace_refusals import RefusalsResult
from .diff_index.result import DiffResult
from .embed import EmbedResult
from .judge.answer_checks import AnswerCheck, AnswerChecksResult
from .judge.result import JudgeResult
from .kit.verdicts import ScaleVerdict
from .probe_scale.convert import Converted
from .probe_scale.result import ScaleResult
from .questions import QuestionSetResult
from .repair.result import RepairResult
from .sweep_threshold.result import QuestionRecord, SweepResult

_INT, _NUM, _BOOL, _STR = ({"type": t} for t in ("integer", "number", "boolean", "string"))

#: how each result's JSON form differs from ``asdict`` of it
SHAPES: dict[type, Shape] = {
    CheckIndexResult: Shape(),
    ScaleResult: Shape(
        dropped=("manifest_facts",),
        renamed={"to_cosine_formula": "to_cosine", "from_cosine_formula": "from_cosine"},
        added={"verdict": type_schema(ScaleVerdict, {}, {})},
    ),
    Converted: Shape(
        dropped=("payload", "manifest", "ok"),
        added={
            "value": _NUM,
            "from": _STR,
            "to": _STR,
            "result": _NUM,
            "normalized": _BOOL,
            "from_higher_is_better": _BOOL,
            "to_higher_is_better": _BOOL,
            "scale_source": _STR,
        },
    ),
    # unfiltered runs leave the filter keys out (they read as before filters existed)
    SweepResult: Shape(dropped=("warnings",), optional=("by_filter",)),
    QuestionRecord: Shape(optional=("filter",)),
    AnnResult: Shape(dropped=("truth",), optional=("filters", "query_filters")),
    FetchRow: Shape(
        optional=(
            "short_result_rate",
            "short_result_rate_interval",
            "short_results",
            "by_selectivity",
        )
    ),  # fmt: skip
    DiagnoseResult: Shape(optional=("answer_checks",)),
    # a run without filters leaves each question's filter out
    QuestionDiagnosis: Shape(optional=("filter",)),
    JudgeResult: Shape(optional=("answer_checks",)),
    CiResult: Shape(dropped=("manifest_facts",), added={"ok": _BOOL}),
    EmbedResult: Shape(dropped=("chunks", "distinct_texts", "written", "ok")),
    AnswerChecksResult: Shape(
        dropped=("manifest_facts",), added={"answers_checked": _INT, "answers_flagged": _INT}
    ),
    AnswerCheck: Shape(added={"ok": _BOOL}),
    RefusalsResult: Shape(added={"rate": {"type": ["number", "null"]}}),
    RepairResult: Shape(added={"ok": _BOOL, "headline": _STR, "full_reindex": _INT}),
}

#: the result type of each kind (diagnose: retrieval, else ``--system``)
RESULTS: dict[str, tuple[type, ...]] = {
    "check-index": (CheckIndexResult,),
    "probe-scale": (ScaleResult,),
    "convert-threshold": (Converted,),
    "sweep-threshold": (SweepResult,),
    "compare-ann": (AnnResult,),
    "diagnose": (DiagnoseResult, SystemDiagnoseResult),
    "judge": (JudgeResult,),
    "diff-index": (DiffResult,),
    "ci": (CiResult,),
    "embed": (EmbedResult,),
    "check-answers": (AnswerChecksResult,),
    "questions-generate": (QuestionSetResult,),
    "traces-refusals": (RefusalsResult,),
    "repair": (RepairResult,),
}

#: what each kind's result is, as the schema's ``description`` (and the docs' list) says
DESCRIPTIONS = {
    "check-index": "check-index: each checked chunk's cosine and status, the findings "
    "(shift, model mismatch, stale or missing vectors...) and the counts.",
    "probe-scale": "probe-scale: the store's score scale (the fitted formula), how it was "
    "found, and its conversions to and from cosine.",
    "convert-threshold": "convert-threshold: a threshold on one score scale expressed on another.",
    "sweep-threshold": "sweep-threshold: per-question records, one row per threshold, the "
    "recommended threshold and the verdict.",
    "compare-ann": "compare-ann: recall and best-chunk miss rate per fetch depth against exact "
    "search, the recommendation, the worst queries.",
    "diagnose": "diagnose: one label per question with its evidence and the metrics exact vs "
    "ANN; with --system, refusal rates per question and the interventions.",
    "judge": "judge: each answer's claims with the judge's and indexcheck's verdicts, the "
    "counts and the supported rate.",
    "diff-index": "diff-index: each chunk whose vector or text changed between two indexes, "
    "the findings and the counts.",
    "ci": "ci: every gate's verdict, each check's full result under results, the baseline "
    "comparison.",
    "embed": "embed: the manifest of the run (what was embedded and written).",
    "check-answers": "check-answers: each answer's URLs, references and numbers found neither "
    "in its context nor in the knowledge base.",
    "questions-generate": "questions generate: the questions kept, every drop per quality gate, "
    "the calls made.",
    "traces-refusals": "traces refusals: the production answers that refused, ready for diagnose.",
    "repair": "repair: how each chunk of the copy got its vector (kept, moved, embedded), what "
    "it cost against a full reindex, what was written, and check-index --all on the copy.",
    "sheet-verify": "sheet verify: each run's verdict (hash chain, rows, revisions, signature) "
    "and the problems that belong to no run.",
    "sheet-diff": "sheet diff: for each answer of two runs, whether their cases are comparable "
    "(else what changed) and the claims whose verdicts differ.",
}

#: the checks whose full results ci writes under ``results``
CI_CHECKS = ("check-index", "probe-scale", "compare-ann", "diagnose", "diff-index")


def result_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind``'s ``--json`` result."""
    if kind in _BY_HAND:  # results written as dicts, not dataclasses
        return _BY_HAND[kind]()
    first, *others = RESULTS[kind]
    out = schema_of(kind, first, SHAPES, title=f"indexcheck {kind} result")
    out["description"] = DESCRIPTIONS[kind]
    if others:  # one kind, several result types: any one of them
        keys = ("description", "type", "properties", "required", "additionalProperties")
        body = {k: out.pop(k) for k in keys[1:]}
        body["description"] = doc_line(first)
        defs = out.setdefault("$defs", {})
        defs[first.__name__] = body
        for other in others:
            sub = schema_of(kind, other, SHAPES)
            defs.update(sub.pop("$defs", {}))
            defs[other.__name__] = {k: sub[k] for k in keys if k in sub}
        out.pop("$defs")
        out["oneOf"] = [{"$ref": f"#/$defs/{t.__name__}"} for t in RESULTS[kind]]
        out["$defs"] = dict(sorted(defs.items()))
    if kind == "ci":
        _nest_checks(out)
    return out


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every kind's schema, by kind."""
    from ..output.schemas import KINDS

    return {kind: result_schema(kind) for kind in KINDS}


def _nest_checks(ci: dict[str, Any]) -> None:
    """ci's ``results``: each check's full result, described by that check's own schema."""
    defs = ci["$defs"]
    props = {}
    for kind in CI_CHECKS:  # ci runs diagnose on retrieval only (never --system)
        sub = schema_of(kind, RESULTS[kind][0], SHAPES)
        defs.update(sub.pop("$defs", {}))
        name = "".join(w.title() for w in kind.split("-")) + "Check"
        for key in ("$schema", "$id", "title"):
            sub.pop(key)
        del sub["properties"]["schema_version"], sub["properties"]["report"]
        sub["required"].remove("schema_version")
        defs[name] = sub
        props[kind] = {"$ref": f"#/$defs/{name}"}
    ci["properties"]["results"] = {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
    }
    ci["$defs"] = dict(sorted(defs.items()))


def _failure() -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "$id": schema_id("failure"),
        "title": "indexcheck result of a run that did not finish",
        "description": "Written over --json when a run is refused (exit 2) or cannot "
        "finish (exit 3); error says what went wrong and how to fix it.",
        "type": "object",
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "ok": {"const": False},
            "complete": {"const": False},
            "command": _STR,
            "exit_code": {"type": "integer", "enum": [1, 2, 3]},
            "error": _STR,
        },
        "required": ["schema_version", "ok", "complete", "command", "exit_code", "error"],
        "additionalProperties": False,
    }


def _object(
    kind: str | None, props: dict[str, Any], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A closed object of ``props`` (all required but ``optional``); with ``kind``, the whole
    result: titled, described, with its ``$id`` and ``schema_version`` first."""
    out: dict[str, Any] = {}
    if kind is not None:
        props = {"schema_version": {"const": SCHEMA_VERSION}, **props}
        out = {
            "$schema": DIALECT,
            "$id": schema_id(kind),
            "title": f"indexcheck {kind} result",
            "description": DESCRIPTIONS[kind],
        }
    return {
        **out,
        "type": "object",
        "properties": props,
        "required": [k for k in props if k not in optional],
        "additionalProperties": False,
    }


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_STR_OR_NULL = {"type": ["string", "null"]}


def _sheet_verify() -> dict[str, Any]:
    from .judge.sheet.verify import Signature

    run = _object(
        None,
        {
            "run_id": _STR,
            "verified": _BOOL,
            "problem": _STR_OR_NULL,
            "rows": _INT,
            "revisions": _INT,
            "head": _STR_OR_NULL,
            "last_hash": _STR_OR_NULL,
            "signature": {"enum": [s.value for s in Signature]},
        },
    )
    return _object("sheet-verify", {"ok": _BOOL, "runs": _array(run), "problems": _array(_STR)})


def _sheet_diff() -> dict[str, Any]:
    claim = _object(None, {"claim": _STR, "a": _STR_OR_NULL, "b": _STR_OR_NULL})
    answer = _object(
        None,
        {"answer_id": _STR, "compatible": _BOOL, "changed": _array(_STR), "claims": _array(claim)},
        optional=("claims",),  # only where the cases are comparable
    )
    return _object(
        "sheet-diff",
        {
            "run_a": _STR,
            "run_b": _STR,
            "run_level_changes": _array({"enum": ["prompt", "judge model"]}),
            "answers": _array(answer),
        },
    )


_BY_HAND = {"failure": _failure, "sheet-verify": _sheet_verify, "sheet-diff": _sheet_diff}


__all__ = ["CI_CHECKS", "DESCRIPTIONS", "RESULTS", "SHAPES", "all_schemas", "result_schema"]
