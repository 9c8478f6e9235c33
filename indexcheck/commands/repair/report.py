"""repair's report section and terminal summary: the headline figure, each way a chunk's
vector was obtained (and why it was embedded), the orphans left out, the target's check."""

from __future__ import annotations

from ...output.model import Section, Table, Text
from ...output.registry import register_sections
from .result import RepairResult

#: what each way and reason means, in the words the report uses
MEANING = {
    "kept": "its own stored vector, kept",
    "moved": "its right vector, found stored at another row and moved back",
    "embedded": "its vector existed nowhere in the index: embedded",
    "failed_verification": "the reused vector did not match a fresh embedding: embedded",
    "shift_tail": "the tail of the shift: no row holds its vector",
    "held_nowhere": "no row holds its vector (another model, prefix or a stale text)",
    "text_changed": "its text changed after it was embedded",
    "missing_vector": "the store has no vector for it",
    "dimension_mismatch": "its stored vector has another length",
    "non_finite": "its stored vector holds NaN or infinity",
    "zero_vector": "its stored vector is all zeros",
    "absurd_magnitude": "its stored vector was scaled after embedding",
}
#: rows shown per way in the report
SHOWN = 10
#: the store kinds whose repaired copy can be of their own kind (``--out KIND:DIR``)
SAME_KIND = ("parquet", "jsonl", "faiss", "chroma", "lancedb", "qdrant", "pgvector", "milvus",
             "upstash", "pinecone")  # fmt: skip
#: how ``--out`` names a new store of a kind
OUT_EXAMPLE = {
    "chroma": "chroma:DIR?collection=NAME",
    "lancedb": "lancedb:DIR?table=NAME",
    "qdrant": "qdrant:DIR?collection=NAME",
    "pgvector": "pgvector:DSN?table=NEW",
    "milvus": "milvus:DIR?collection=NAME",
    "upstash": "upstash:URL?namespace=NEW --yes",
    "pinecone": "pinecone:INDEX?namespace=NEW --yes",
}


def _verdict(r: RepairResult) -> str:
    if r.dry_run:
        return "DRY RUN"
    return "PASS" if r.ok else "FAIL"


def _lines(r: RepairResult) -> list[Text]:
    out = [Text(r.headline, badge=_verdict(r), whole=True)]
    sample = "every reused vector" if r.verify_all else f"a seeded sample of {r.verified}"
    out.append(
        Text(
            f"  reading: {r.reading}; {r.texts_embedded} texts sent to the model "
            f"({r.sample_texts} for the check of {sample}, {r.verify_failed} failed it)"
            + (f"; writing would send {r.texts_to_embed} more" if r.dry_run else "")
        )
    )
    for way, count in r.ways.items():
        out.append(Text(f"  {count} {way}: {MEANING.get(way, way)}"))
    for why, count in r.reasons.items():
        if why != "failed_verification":
            out.append(Text(f"    {count} {why}: {MEANING.get(why, why)}"))
    if r.orphans:
        shown = ", ".join(r.orphans[:SHOWN]) + (" ..." if len(r.orphans) > SHOWN else "")
        out.append(Text(f"  {len(r.orphans)} orphan vectors (no chunk) left out: {shown}"))
    if r.target_check is not None:
        c = r.target_check
        style = None if c["ok"] else "error"
        out.append(Text(f"  check-index --all on {c['store']}: {c['summary']}", style=style))
    elif r.target is not None:
        out.append(Text("  not checked (--no-check)", style="warning"))
    if r.dry_run:
        out.append(Text("  dry run: nothing written"))
    elif r.target is not None:
        out.append(Text(f"  written: {', '.join(r.written)}"))
        kind = r.source_kind
        if kind in OUT_EXAMPLE and r.target_kind != kind:
            out.append(Text(f"  a new {kind} store of the copy: --out {OUT_EXAMPLE[kind]}"))
        elif kind not in SAME_KIND and kind is not None:
            out.append(
                Text(
                    f"  a new {kind} collection is not written today: repair writes Parquet, "
                    "FAISS, Chroma, LanceDB, Qdrant, Milvus Lite, pgvector, Upstash or "
                    "Pinecone targets; load vectors.parquet with your indexer's bulk load",
                    style="warning",
                )
            )
    if not r.dry_run and r.cache is None:
        out.append(
            Text(
                "  with the --cache FILE of a check-index --all run of this index, the "
                "embeddings (and the proof) are paid already: add --cache FILE"
            )
        )
    if not r.verify_all and r.reused:
        out.append(
            Text(
                f"  {r.reused - r.verified} reused vectors were not checked one by one; "
                "--verify all checks each (at the cost of embedding them)"
            )
        )
    out += [Text(p, style="error") for p in r.problems]
    return out


def repair_sections(r: RepairResult) -> list[Section]:
    """The report section (the lines, then the chunks not kept, a few per way) and the
    terminal summary (the lines)."""
    report = Section("repair: a corrected copy", _verdict(r), list(_lines(r)))
    rows = []
    per_way: dict[str, int] = {}
    for row in r.rows:
        n = per_way[row["way"]] = per_way.get(row["way"], 0) + 1
        if n <= SHOWN:
            how = row.get("reason") or (f"from {row['from_id']}" if "from_id" in row else "")
            rows.append([row["id"], row["position"], row["way"], how])
    if rows:
        caption = f"chunks not kept as stored, {SHOWN} per way at most"
        report.blocks.append(Table(["id", "position", "way", "why / from"], rows, caption))
    terminal = Section("", _verdict(r), _lines(r), report=False, terminal=True)
    return [report, terminal]


register_sections(RepairResult, repair_sections)
