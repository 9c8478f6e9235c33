"""check-index's per-chunk rows and findings: what a shift run, a model mismatch, a stale
or missing vector, an orphan and a repeated text are reported as (shared by the sampled and
the streamed check)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..corpus import Corpus
from .shift_chains import blame_stretches, describe_chain, shift_chains
from .text_differs import ADVICE, LowCosineVerdict
from .verdicts import Status


@dataclass
class ChunkCheck:
    """One checked chunk: its cosine (None when there is no comparable vector) and status."""

    id: str
    position: int
    cosine: float | None
    status: Status
    holds_vector_of: str | None = None
    offset: int | None = None
    stored_dimension: int | None = None
    #: sampled rows: True when chosen as the chunk after a repeated text, False when random
    targeted: bool | None = None
    #: a shifted chunk whose own vector was found stored under this other id (sampled
    #: checks on stores with no build order, where whose vector it holds is not searched)
    vector_held_by: str | None = None


@dataclass
class Finding:
    """A fault (severity ``error``) or a warning, with the chunks it concerns."""

    kind: str
    severity: str
    message: str
    chunk_ids: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def excerpt(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def run_finding(
    run: list[ChunkCheck],
    start: int,
    corpus: Corpus,
    dup_of: dict[int, int],
    order: str = "chunks file order",
) -> Finding:
    """The shift finding of one run whose first shifted position is ``start``.

    The repeat blamed is the ``|offset|``-th repeat in build order (``blame_stretches``:
    every repeat moves a positional cache one step), else the last repeat before the run.
    ``order`` says where the positions come from (``details.order``)."""
    offset = run[0].offset
    assert offset is not None
    (stretch,) = blame_stretches([(start, run[-1].position, offset)], dup_of)
    trigger = stretch.repeat_position
    if trigger is None:
        dups = [q for q in sorted(dup_of) if q < start]
        trigger = dups[-1] if dups else None
    details: dict[str, Any] = {
        "offset": offset,
        "start_id": corpus.ids[start],
        "start_position": start,
        "checked_in_run": len(run),
        "order": order,
    }
    where = "before" if offset < 0 else "after"
    msg = (
        f"offset {offset:+d}: from '{corpus.ids[start]}' (position {start}) on, chunks "
        f"hold the vector of the chunk {abs(offset)} position(s) {where} them "
        f"({len(run)} checked chunk(s) in this run)"
    )
    if trigger is not None:
        details["preceding_duplicate"] = {
            "id": corpus.ids[trigger],
            "position": trigger,
            "duplicate_of": corpus.ids[dup_of[trigger]],
            "text": excerpt(corpus.texts[trigger]),
        }
        where_rep = "starts after" if trigger < start else "includes"
        msg += (
            f"; it {where_rep} '{corpus.ids[trigger]}', whose text repeats "
            f"'{corpus.ids[dup_of[trigger]]}': a cache filled by position skips a repeat "
            "without advancing"
        )
    return Finding("shift", "error", msg, [c.id for c in run], details)


CHAIN_ORDER = "holds_vector_of chains"


def chain_findings(
    checks: list[ChunkCheck], corpus: Corpus, all_mode: bool = True
) -> list[Finding]:
    """Shift findings where the rows have no build order: one per ``holds_vector_of``
    chain (``shift_chains``), naming the repeated text at each break. Positions are no
    build order here, so each shifted chunk's ``offset`` is cleared (None). A sample holds
    fragments of chains only: it gets one finding for all its shifted chunks instead."""
    for c in checks:
        if c.status == "shift":
            c.offset = None
    holds = {c.id: c.holds_vector_of for c in checks if c.status == "shift" and c.holds_vector_of}
    moved = [c for c in checks if c.status == "shift" and not c.holds_vector_of]
    if moved or (holds and not all_mode):
        return [_sampled_shift_finding(checks, corpus)]
    if not holds:
        return []
    groups: dict[int, list[str]] = {}
    for p, first in corpus.duplicate_of().items():
        groups.setdefault(first, [corpus.ids[first]]).append(corpus.ids[p])
    chains = shift_chains(holds, groups.values())
    text_of = {cid: corpus.texts[corpus.position[cid]] for g in groups.values() for cid in g}
    findings = []
    for chain in chains.chains:
        msg, details = describe_chain(chain, text_of)
        details["order"] = CHAIN_ORDER
        findings.append(Finding("shift", "error", msg, list(chain.ids), details))
    return findings


def _sampled_shift_finding(checks: list[ChunkCheck], corpus: Corpus) -> Finding:
    """One finding for the shifted chunks of a sample on a store with no build order."""
    shifted = [c for c in checks if c.status == "shift"]
    repeats = sorted({corpus.ids[p] for p in corpus.duplicate_of()})
    details: dict[str, Any] = {"order": CHAIN_ORDER, "shifted_in_sample": len(shifted)}
    if repeats:
        details["repeated_texts"] = repeats[:20]
    msg = (
        f"{len(shifted)} of {len(checks)} sampled chunks hold another chunk's vector (their own "
        "vectors are stored under other ids): vectors were attached by position, e.g. by a "
        "cache that skips a repeated text without advancing. The store keeps no build order, "
        "so a sample cannot name the stretches: run with --all (streamed, resumable) to get "
        "one finding per holds_vector_of chain and the repeat that starts it"
    )
    return Finding("shift", "error", msg, [c.id for c in shifted], details)


def other_findings(
    checks: list[ChunkCheck],
    corpus: Corpus,
    store_ids: set[str] | None,
    store_count: int,
    all_mode: bool,
    from_store: bool,
) -> list[Finding]:
    findings: list[Finding] = []
    messages = {
        "model_mismatch": "stored vectors match no chunk's fresh embedding: the index was "
        "built with another model than the embedder; re-embed or pass the right --embedder",
        "embedded_text_differs": ADVICE[LowCosineVerdict.EMBEDDED_TEXT_DIFFERS],
        "stale_vector": "stored vector differs from its text's embedding and matches no "
        "other chunk: the text changed after it was embedded; re-embed these chunks",
        "missing_vector": "no stored vector for these chunk ids; index them",
        "dimension_mismatch": "stored vectors of the wrong length; re-embed these chunks",
        "non_finite": "stored vectors contain NaN or infinity; re-embed these chunks",
        "zero_vector": "stored vectors are all zeros; re-embed these chunks",
    }
    for kind, msg in messages.items():
        ids = [c.id for c in checks if c.status == kind]
        if ids:
            findings.append(Finding(kind, "error", f"{len(ids)} chunk(s): {msg}", ids))
    if store_ids is not None and not from_store:
        orphans = sorted(store_ids - set(corpus.ids))
        if orphans:
            findings.append(
                Finding(
                    "orphan_vector",
                    "error",
                    f"{len(orphans)} vector(s) in the index have no chunk: delete them or "
                    "add their chunks",
                    orphans,
                )
            )
    elif not all_mode and not from_store and store_count != len(corpus):
        diff = store_count - len(corpus)
        kind = "orphan_vector" if diff > 0 else "missing_vector"
        findings.append(
            Finding(
                kind,
                "error",
                f"the index holds {store_count} vectors for {len(corpus)} chunks "
                f"({abs(diff)} {'more' if diff > 0 else 'fewer'}); run with --all to list them",
                [],
                {"store_count": store_count, "chunks": len(corpus)},
            )
        )
    dup_of = corpus.duplicate_of()
    if dup_of:
        groups: dict[int, list[str]] = {}
        for p, first in dup_of.items():
            groups.setdefault(first, [corpus.ids[first]]).append(corpus.ids[p])
        findings.append(
            Finding(
                "duplicate_text",
                "warning",
                f"{len(dup_of)} chunk(s) repeat an earlier chunk's text; a cache keyed by "
                "position misaligns every vector after the first repeat",
                [i for g in groups.values() for i in g[1:]],
                {
                    "groups": [
                        {"ids": g, "text": excerpt(corpus.texts[corpus.position[g[0]]])}
                        for g in groups.values()
                    ]
                },
            )
        )
    return findings


def truncated_finding(ids: list[str], embedder_id: str) -> Finding | None:
    """A warning naming the chunks longer than the embedder reads: their vectors stand for a
    prefix of the text only, whatever the index holds."""
    if not ids:
        return None
    return Finding(
        "truncated_text",
        "warning",
        f"{len(ids)} chunk(s) are longer than {embedder_id} reads; only their beginning was "
        "embedded and compared (split them into smaller chunks to cover the rest)",
        ids,
    )
