"""check-index's per-chunk rows and findings: what a shift run, a model mismatch, a stale
or missing vector, an orphan and a repeated text are reported as (shared by the sampled and
the streamed check)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...inputs.corpus import Corpus
from ..kit.finding import Finding as Finding  # re-exported: the rows and findings of check-index
from ..kit.verdicts import Status
from .shift.chains import blame_stretches, describe_chain, shift_chains
from .shift.kinds import (
    DUPLICATED_ITEM,
    PERMUTED,
    batch_lo,
    fit_kind,
    headline,
    holder,
    kind_details,
    with_blocks,
)
from .shift.model import SKIP_REPEAT, first_copies, fit, story
from .text_differs import ADVICE, LowCosineVerdict


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
    #: rows that are not ok: the document the chunk came from (where the store knows it,
    #: e.g. a LlamaIndex node's ref_doc_id) and the start of its text
    ref_doc_id: str | None = None
    text: str | None = None


#: the duplicate_text warning lists at most this many repeat ids (``details.repeats`` has
#: the count), groups, and ids per group: a text repeated a million times is one line
DUP_IDS_LISTED = 1000
DUP_GROUPS_LISTED = 200
DUP_GROUP_IDS = 20


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
    if trigger is None or trigger > start:  # never name a trigger after the start
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


def story_finding(
    checks: list[ChunkCheck],
    corpus: Corpus,
    dup_of: dict[int, int],
    order: str,
    all_checked: bool,
    observed: tuple[np.ndarray, np.ndarray] | None = None,
    same: np.ndarray | None = None,
    pin: Any = None,
) -> tuple[Finding | None, list[ChunkCheck]]:
    """(the root finding, the shifted chunks it does not explain) when one misalignment
    kind fits the checked chunks: the positional cache (:mod:`.shift.model`) first, then
    a dropped or duplicated item, a misplaced batch or results permuted inside batches
    (:mod:`.shift.kinds`); else (None, every shifted chunk).

    One finding for one bug, its first sentence naming the kind, its start, cause and fix;
    figures and stretches go to ``details``. Among holders that read the same (``same``
    int64 (n,), :func:`.shift.kinds.identity`; default: equal texts) the kind's own
    prediction becomes each row's ``holds_vector_of``. ``observed`` (checked positions,
    held positions or -1), when given, replaces what ``checks`` says (the streamed check
    keeps only the rows that are not ok). ``pin(start, offset, batch=0) -> position`` (a
    sample) finds where a constant offset (or, with ``batch``, a permutation inside the
    batch of ``start + offset``) really starts, before its first checked chunk."""
    shifted = [c for c in checks if c.status == Status.SHIFT and c.offset is not None]
    if not shifted:
        return None, shifted
    if observed is not None:
        checked, held = observed
    else:
        comp = sorted((c for c in checks if c.cosine is not None), key=lambda c: c.position)
        checked = np.asarray([c.position for c in comp], dtype=np.int64)
        held = np.asarray(
            [c.position + c.offset if c.status == Status.SHIFT and c.offset is not None else -1
             for c in comp],
            dtype=np.int64,
        )  # fmt: skip
    n = len(corpus)
    ident = first_copies(n, dup_of) if same is None else same
    got = fit(n, dup_of, checked, held, ident) if dup_of else None
    if got is not None:
        return _by_cache(got, shifted, checks, corpus, dup_of, (order, all_checked), ident)
    kf = fit_kind(ident, checked, held, first_copies(n, dup_of) if dup_of else None)
    if kf is None:
        return None, shifted
    if pin is not None and kf.blocks:  # a sample: each block's true start and end
        pinned = [
            replace(b, start=pin(b.start, b.offset), end=pin(b.end, b.offset, last=True))
            for b in kf.blocks
        ]
        with_blocks(kf, ident, pinned)
    elif pin is not None and kf.batch and kf.source is None:  # the first chunk of its batch
        first = int(kf.explained[0])
        lo = int(batch_lo(first, kf.batch, kf.outer))
        kf.explained = np.unique(np.append(kf.explained, pin(first, -(first - lo), kf.batch)))
    stop = kf.blocks[-1].end + 1 if kf.blocks else n
    if kf.kind == DUPLICATED_ITEM and stop < n and all(b.start - 1 in dup_of for b in kf.blocks):
        # every step of the offset follows a repeated text: a positional cache that skips
        # repeats, restarted with the indexer's next embedding call (not a duplicated item)
        got = fit(n, dup_of, checked, held, ident, stop)
        if got is not None:
            return _by_cache(got, shifted, checks, corpus, dup_of, (order, all_checked), ident)
    d = kind_details(kf, corpus.ids, all_checked, len(checked))
    start = d["start_position"]
    d["order"] = order
    d["start_text"] = _snippet(corpus, start)
    tail_ok = not bool(((checked > kf.explained[-1]) & (held < 0)).any())
    msg = (
        headline(kf, d, corpus.ids[start], tail_ok)
        + ". "
        + _kind_count(d, all_checked, len(checked))
    )
    if kf.blocks and start - 1 in dup_of:  # the item before it is a repeated text
        trig = start - 1
        d["preceding_duplicate"] = {
            "id": corpus.ids[trig],
            "position": trig,
            "duplicate_of": corpus.ids[dup_of[trig]],
            "text": _snippet(corpus, dup_of[trig]),
        }
        msg += (
            f"; it starts right after '{corpus.ids[trig]}' (position {trig}), whose text "
            f"repeats '{corpus.ids[dup_of[trig]]}'"
        )
    explained = set(kf.explained.tolist())
    _prefer(shifted, explained, corpus, lambda p, h: holder(kf, ident, p, h))
    ids = [corpus.ids[p] for p in kf.explained.tolist()]
    return Finding("shift", "error", msg, ids, d), [
        c for c in shifted if c.position not in explained
    ]


def _by_cache(
    got: Any,
    shifted: list[ChunkCheck],
    checks: list[ChunkCheck],
    corpus: Corpus,
    dup_of: dict[int, int],
    told: tuple[str, bool],
    ident: np.ndarray,
) -> tuple[Finding, list[ChunkCheck]]:
    """:func:`story_finding`'s answer when the positional cache ``got`` fits; ``told``:
    (order, all_checked)."""
    src = got.model.source
    found = _cache_story(got, checks, corpus, dup_of, *told)
    explained = set(got.explained.tolist())
    _prefer(
        shifted, explained, corpus, lambda p, h: int(src[p]) if ident[src[p]] == ident[h] else h
    )
    return found, [c for c in shifted if c.position not in explained]


def _kind_count(d: dict[str, Any], all_checked: bool, checked: int) -> str:
    if all_checked:
        return f"{d['chunks_affected']} chunks hold another chunk's vector (rows in --json)"
    if d.get("estimated_share") is not None:
        return (
            f"{d['shifted_checked']} of {checked} checked chunks hold another chunk's vector "
            "(run with --all for every one)"
        )
    return (
        f"{d['chunks_predicted']} chunks predicted ({d['shifted_checked']} of {checked} "
        "checked chunks confirm it; run with --all for every one)"
    )


def _prefer(shifted: list[ChunkCheck], explained: set[int], corpus: Corpus, pick: Any) -> None:
    """Among equally good holders, the kind's prediction (``pick(p, held) -> position``)."""
    for c in shifted:
        if c.position in explained and c.offset is not None:
            h = c.position + c.offset
            q = pick(c.position, h)
            if q != h:
                c.holds_vector_of, c.offset = corpus.ids[q], q - c.position


#: the shift's fix; ``{store}`` becomes the store's spec in :func:`annotate`
REPAIR_ADVICE = (
    "`indexcheck repair --store {store} --out NEW_FOLDER` (with this check's --embedder, "
    "--chunks and --trust-pickle) writes a corrected copy, re-embedding only the vectors that "
    "exist nowhere"
)


def _cache_story(
    got: Any,
    checks: list[ChunkCheck],
    corpus: Corpus,
    dup_of: dict[int, int],
    order: str,
    all_checked: bool,
) -> Finding:
    """The positional cache's root finding (its stretches in ``details.stretches``)."""
    d = story(got, corpus.ids, all_checked)
    start, trig = d["start_position"], d["first_trigger_position"]
    lo, hi = d["offset_range"]
    d["order"] = order
    d["offset"] = d["stretches"][0]["offset"] if d["stretches"] else hi
    d["start_text"] = _snippet(corpus, start)
    d["preceding_duplicate"] = {
        "id": corpus.ids[trig],
        "position": trig,
        "duplicate_of": corpus.ids[dup_of[trig]],
        "text": _snippet(corpus, dup_of[trig]),
    }
    span = f"offset {lo:+d}" if lo == hi else f"offsets {lo:+d} to {hi:+d}"
    if all_checked:
        count = f"{d['chunks_affected']} chunks"
    else:
        count = (
            f"{d['chunks_predicted']} of {len(corpus)} chunks (predicted; "
            f"{d['shifted_checked']} of {len(checks)} checked chunks confirm it)"
        )
    if got.model.kind == SKIP_REPEAT:
        kind = "a positional cache that skips repeats"
        cause = (
            "a text-hash cache served each repeated text without advancing its position into "
            "the fresh embeddings"
        )
        how = "hold the vector of a chunk before them, the lag growing by one at each repeated text"
    else:
        kind = "a positional hand-out of de-duplicated vectors"
        cause = "the de-duplicated texts' vectors were handed out by position"
        how = "hold the vector of a chunk after them, one more at each repeated text"
    where = "after" if trig < start else "at"
    span_on = "on"
    if got.model.stop is not None:
        span_on = (
            f"to position {d['end_position']} (the cache restarts with the next embedding call)"
        )
    msg = (
        f"one positional shift from '{corpus.ids[start]}' (position {start}) {span_on}, by {kind}: "
        f"{cause}; fix the indexer, then {REPAIR_ADVICE}. {count} {how} "
        f"({d['repeats_widening']} repeats, {span}); it starts {where} '{corpus.ids[trig]}' "
        f"(position {trig}), the first repeated text (a copy of '{corpus.ids[dup_of[trig]]}'); "
        f"{d['stretches_total']} stretches in details.stretches"
    )
    ids = [corpus.ids[p] for p in got.explained.tolist()]
    return Finding("shift", "error", msg, ids, d)


#: more unexplained runs than this are one "vectors are permuted" finding, not one each
RUNS_LISTED = 3


def permuted_finding(rows: list[ChunkCheck], corpus: Corpus, order: str, also: bool) -> Finding:
    """The honest fallback: shifted chunks that no single pattern fits, as one finding.
    ``also``: another finding already told the main story (these are left over)."""
    rows = sorted(rows, key=lambda c: c.position)
    start = rows[0].position
    offs = [c.offset for c in rows if c.offset is not None]
    d: dict[str, Any] = {
        "model": PERMUTED if not also else None,
        "start_position": start,
        "start_id": corpus.ids[start],
        "chunks_affected": len(rows),
        "offset_range": [min(offs), max(offs)] if offs else None,
        "order": order,
    }
    if also:
        del d["model"]
    lead = "besides that, " if also else ""
    msg = (
        f"{lead}vectors are permuted: {len(rows)} chunks hold another chunk's vector, no "
        f"single pattern fits (the first at '{corpus.ids[start]}', position {start}); fix: "
        "pair each vector with its chunk by id, not by position, and re-embed them (every "
        "holder in --json)"
    )
    return Finding("shift", "error", msg, [c.id for c in rows], d)


def _snippet(corpus: Corpus, p: int) -> str | None:
    texts = corpus.texts
    try:
        return excerpt(texts[p])
    except (KeyError, IndexError):
        return None


SNIPPET = 60
#: streamed --all: rows that are not ok get a text snippet up to this many
SNIPPET_ROWS = 200


def annotate(
    checks: list[ChunkCheck], texts: Any, store: Any, findings: list[Finding] | None = None
) -> None:
    """Give the rows that are not ok (all of them when ``texts`` answers every position, a
    ``dict`` of positions otherwise) a text snippet and, where the store knows it, the
    document each chunk came from; the root shift finding names its start's document."""
    bad = [c for c in checks if c.status != Status.OK]
    for c in bad:
        try:
            c.text = excerpt(texts[c.position], SNIPPET)
        except (KeyError, IndexError):
            pass
    roots = [f for f in findings or [] if f.kind == "shift" and "model" in f.details]
    spec = str(getattr(store, "spec", None) or "SPEC")
    for f in roots:
        f.message = f.message.replace("--store {store}", f"--store {spec}", 1)
    refs_of = getattr(store, "ref_doc_ids", None)
    if refs_of is None:
        return
    want = [c.id for c in bad]
    want += [f.details["start_id"] for f in roots]
    refs = refs_of(want)
    for c in bad:
        c.ref_doc_id = refs.get(c.id)
    for f in roots:
        ref = refs.get(f.details["start_id"])
        if ref is not None:
            f.details["start_ref_doc_id"] = ref
            pos = f"(position {f.details['start_position']})"
            f.message = f.message.replace(
                pos, f"(position {f.details['start_position']}, document '{ref}')", 1
            )


CHAIN_ORDER = "holds_vector_of chains"


def chain_findings(
    checks: list[ChunkCheck], corpus: Corpus, all_mode: bool = True
) -> list[Finding]:
    """Shift findings where the rows have no build order: one per ``holds_vector_of``
    chain (``shift_chains``), naming the repeated text at each break. Positions are no
    build order here, so each shifted chunk's ``offset`` is cleared (None). A sample holds
    fragments of chains only: it gets one finding for all its shifted chunks instead."""
    for c in checks:
        if c.status == Status.SHIFT:
            c.offset = None
    holds = {
        c.id: c.holds_vector_of for c in checks if c.status == Status.SHIFT and c.holds_vector_of
    }
    moved = [c for c in checks if c.status == Status.SHIFT and not c.holds_vector_of]
    if moved or (holds and not all_mode):
        return [_sampled_shift_finding(checks, corpus)]
    if not holds:
        return []
    groups: dict[int, list[str]] = {}
    for p, first in corpus.duplicate_of().items():
        groups.setdefault(first, [corpus.ids[first]]).append(corpus.ids[p])
    chains = shift_chains(holds, groups.values())
    text_of = {cid: corpus.texts[corpus.position[cid]] for g in groups.values() for cid in g}
    if len(chains.chains) > RUNS_LISTED:
        return [_chains_finding(list(chains.chains), text_of)]
    findings = []
    for chain in chains.chains:
        msg, details = describe_chain(chain, text_of)
        details["order"] = CHAIN_ORDER
        findings.append(Finding("shift", "error", msg, list(chain.ids), details))
    return findings


#: chains listed in the details of the one finding that stands for many
CHAINS_LISTED = 200


def _chains_finding(chains: list[Any], text_of: dict[str, str]) -> Finding:
    """One finding for many ``holds_vector_of`` chains: without a build order no single
    pattern can be named, and one story per chain would bury the first lines."""
    chains.sort(key=lambda ch: -len(ch.ids))
    ids = [cid for ch in chains for cid in ch.ids]
    first = chains[0].ids
    walk = " -> ".join(f"'{c}'" for c in first[:4]) + (" -> …" if len(first) > 4 else "")
    listed = [describe_chain(ch, text_of)[1] for ch in chains[:CHAINS_LISTED]]
    msg = (
        f"vectors are permuted: {len(ids)} chunks hold another chunk's vector, along "
        f"{len(chains)} holds_vector_of chains; the store keeps no build order, so no single "
        "pattern can be named from it: rerun with --chunks listing the chunks in build order "
        f"to name the bug, where it starts and its fix (the longest chain: {walk}; every "
        "chain in details.chains)"
    )
    details: dict[str, Any] = {"order": CHAIN_ORDER, "chains_total": len(chains)}
    details["chains"] = listed
    return Finding("shift", "error", msg, ids, details)


def _sampled_shift_finding(checks: list[ChunkCheck], corpus: Corpus) -> Finding:
    """One finding for the shifted chunks of a sample on a store with no build order."""
    shifted = [c for c in checks if c.status == Status.SHIFT]
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
        "absurd_magnitude": "stored vectors have an absurd length (outside 1e-30..1e30): "
        "something scaled them after embedding; re-embed these chunks",
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
        listed = [i for g in groups.values() for i in g[1:DUP_IDS_LISTED]][:DUP_IDS_LISTED]
        findings.append(
            Finding(
                "duplicate_text",
                "warning",
                f"{len(dup_of)} chunk(s) repeat an earlier chunk's text; a cache keyed by "
                "position misaligns every vector after the first repeat",
                listed,
                {
                    "repeats": len(dup_of),
                    "texts": len(groups),
                    "groups": [
                        {
                            "ids": g[:DUP_GROUP_IDS],
                            "copies": len(g),
                            "text": excerpt(corpus.texts[corpus.position[g[0]]]),
                        }
                        for g in list(groups.values())[:DUP_GROUPS_LISTED]
                    ],
                },
            )
        )
    return findings


def as_risk_note(findings: list[Finding]) -> None:
    """On a check that passed, the ``duplicate_text`` warning becomes an ``info`` risk note:
    the vectors are aligned, and the repeats matter only to a later build by position."""
    if any(f.severity == "error" for f in findings):
        return
    for f in findings:
        if f.kind == "duplicate_text":
            f.severity = "info"
            f.message = (
                f"{f.details.get('repeats', len(f.chunk_ids))} chunk(s) repeat an earlier "
                "chunk's text; the check passed, so the vectors are aligned: a risk only if "
                "a later build attaches vectors by position (a cache keyed by position "
                "shifts every vector after the first repeat)"
            )


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
