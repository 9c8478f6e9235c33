"""check-index's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import Any

from ...output.model import WORST_ROWS, Code, Plot, Section, Table, Text, fmt, ok_verdict
from ...output.registry import Payload, register, section
from ...output.summary_kit import SHOWN_ROWS, _f4, summary
from ..kit.verdicts import Status
from .prefix import is_root
from .result import CheckIndexResult


def _check_index(r: Payload, verdict: str | None) -> list[Section]:
    said = (
        f"{r['checked']} chunks checked ({r['mode']}); minimum cosine "
        f"{fmt(r['min_cosine'])}, median {fmt(r['median_cosine'])}, "
        f"{r['below_threshold']} under {r['threshold']:g}."
    )
    sec = section("check-index: stored vectors vs fresh embeddings", r, verdict, Text(said))
    rows = [c for c in r["chunks"] if c["cosine"] is not None]
    if rows:
        title = (
            f"check-index {verdict or ok_verdict(r['ok'])}: {r['counts'].get('ok', 0)}/"
            f"{r['checked']} chunks at >= {r['threshold']:g}"
        )
        data = {
            "cosines": [c["cosine"] for c in rows],
            "threshold": float(r["threshold"]),
            "title": title,
        }
        if all(c.get("position") is not None for c in rows):
            data["positions"] = [c["position"] for c in rows]
        sec.blocks.append(
            Plot("cosine-histogram", data, "check-index-cosines", "histogram of cosines")
        )
    if r["findings"]:
        sec.blocks.append(
            Table(
                ["finding", "severity", "message"],
                [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
            )
        )
    for f in r["findings"]:
        stretches = f["details"].get("stretches") if f["kind"] == "shift" else None
        if stretches:
            sec.blocks.append(_stretches(f["details"]))
    worst = sorted(
        r["chunks"],
        key=lambda c: (c["status"] == Status.OK, -1 if c["cosine"] is None else c["cosine"]),
    )[:WORST_ROWS]
    cols = ["position", "id", "cosine", "status", "holds_vector_of", "offset"]
    cols += [k for k in ("ref_doc_id", "text") if any(c.get(k) for c in worst)]
    names = {"holds_vector_of": "holds vector of", "ref_doc_id": "document"}
    rows = [[c[k] for k in cols] for c in worst]
    sec.blocks.append(
        Table([names.get(k, k) for k in cols], rows, "worst chunks (lowest cosine first)")
    )
    return [sec]


def _stretches(d: Payload) -> Code:
    """The root shift finding's stretches, collapsed (``<details>``): one line each."""
    lines = [f"{'start':>8} {'end':>8} {'offset':>7} {'chunks':>7}  trigger (repeat)"]
    for s in d["stretches"]:
        trig = "-" if s["trigger_id"] is None else f"{s['trigger_id']} ({s['trigger_position']})"
        lines.append(f"{s['start']:>8} {s['end']:>8} {s['offset']:>+7d} {s['chunks']:>7}  {trig}")
    shown, total = len(d["stretches"]), d.get("stretches_total", len(d["stretches"]))
    if total > shown:
        lines.append(f"... {total - shown} more stretches (first {shown} listed)")
    return Code(
        f"the shift's {total} stretches (position, offset, the repeat behind each)",
        "\n".join(lines),
    )


def check_index_summary(result: CheckIndexResult) -> list[Section]:
    """The root finding first (one positional shift told as one story), what is wrong
    (first 20 chunks), the other findings, and a one-line verdict with its cost."""
    sec = summary(ok_verdict(result.ok))
    roots = [
        f for f in result.findings if (f.kind == "shift" and "model" in f.details) or is_root(f)
    ]
    for f in roots:
        sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    bad = [c for c in result.chunks if c.status != Status.OK]
    docs = any(c.ref_doc_id for c in bad[:SHOWN_ROWS])  # e.g. LlamaIndex's node -> document
    if bad:
        sec.blocks.append(
            Table(
                [
                    "position",
                    "id",
                    *(["document"] if docs else []),
                    "cosine",
                    "status",
                    "holds vector of",
                    "offset",
                ],
                [
                    [
                        str(c.position),
                        c.id,
                        *([c.ref_doc_id or ""] if docs else []),
                        _f4(c.cosine),
                        str(c.status),
                        c.holds_vector_of or "",
                        "" if c.offset is None else f"{c.offset:+d}",
                    ]
                    for c in bad[:SHOWN_ROWS]
                ],
                f"chunks under {result.threshold:g} or without a usable vector",
                right=("position", "offset"),
            )
        )
        if len(bad) > SHOWN_ROWS:
            sec.blocks.append(Text(f"... and {len(bad) - SHOWN_ROWS} more (see --json)"))
    for f in result.findings:
        if f not in roots:
            sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    m: dict[str, Any] = result.manifest.get("embedding", {})
    if result.chunks_truncated:  # say which rows the JSON holds, and where the rest are
        n_bad = sum(c.status != Status.OK for c in result.chunks)
        kept = f"only the {n_bad} rows that are not ok" if n_bad else "none, every chunk is ok"
        rows = result.manifest.get("rows")
        rest = f"every row is in {rows}" if rows else "--rows FILE writes every row"
        sec.blocks.append(Text(f"chunks in the JSON: {kept} (over 100,000 checked); {rest}"))
    if result.targets_dropped:
        sec.blocks.append(
            Text(
                f"targeted sampling: {result.targets_dropped} chunks after a repeated text "
                "left out (the chunk after the first 3 copies of each text is checked)"
            )
        )
    bound = ""
    if result.fault_rate_upper_95 is not None and result.ok:
        bound = f"; fault rate < {100 * result.fault_rate_upper_95:.1f}% (95%, random rows)"
    extra = ""
    if result.diagnosis_embeddings:
        extra = f" ({result.diagnosis_embeddings} texts to explain low chunks"
        if result.shift_model_embeddings:
            extra += f", {result.shift_model_embeddings} of them for the shift model"
        extra += ")"
    sec.blocks.append(
        Text(
            f"{_verdict_count(result)}; min {_f4(result.min_cosine)}, median "
            f"{_f4(result.median_cosine)}; {m.get('requests', 0)} embedding requests{extra}, "
            f"{m.get('tokens', 0)} tokens, {result.manifest.get('wall_seconds', 0):.1f}s{bound}",
            badge=ok_verdict(result.ok),
        )
    )
    return [sec]


def _verdict_count(result: CheckIndexResult) -> str:
    """What the verdict counts, said as it is: the chunks that pass when all pass, the
    chunks that fail otherwise ("198 of 204 sampled chunks fail", not "6/204")."""
    noun = {"sample": "sampled chunks", "all": "chunks", "ids": "chunks checked by id"}.get(
        result.mode, "chunks"
    )
    ok = result.counts.get(Status.OK, 0)
    t = f"{result.threshold:g}"
    if ok == result.checked:
        return f"{ok}/{result.checked} chunks ({result.mode}) at cosine >= {t}"
    failed = result.checked - ok
    return (
        f"{failed} of {result.checked} {noun} below cosine {t} or without a usable vector "
        f"({ok} pass)"
    )


register(
    "check-index",
    _check_index,
    {"chunks", "findings", "threshold"},
    check_index_summary,
    result=CheckIndexResult,
)
