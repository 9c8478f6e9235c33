"""Order-free shift diagnosis: the chains that ``holds_vector_of`` forms.

A positional-cache bug hands each chunk the vector of a chunk further along (or back) in
build order, so the edges ``a -> b`` (``a`` holds ``b``'s vector) chain the chunks in build
order without sorting any ids. Chains break at repeated texts (any copy's vector looks the
same there, and that is where the bug skips or re-uses a position), and the repeated text at
each break is the trigger to name. Nodes are texts, not ids (ids sharing a text have one
fresh embedding).

:func:`shift_chains` cuts the graph at junctions (repeated texts, and unique texts held by
several chunks); every shifted chunk lies on exactly one chain, and a loop (vectors swapped
around) comes back with ``cycle=True``. :func:`blame_stretches` is the positional counterpart
when a build order is known: a stretch of offset ``+k`` or ``-k`` is blamed on the k-th repeat
in build order (which may lie inside the stretch), not the last repeat before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class ChainEnd(StrEnum):
    """How a chain ends on one side."""

    REPEATED_TEXT = "repeated_text"  # the neighbour is a text that several chunks share
    JOIN = "join"  # the neighbour's vector is held by several chunks
    OPEN = "open"  # nothing further: a chunk whose vector nobody holds, or a right one
    CYCLE = "cycle"


@dataclass(frozen=True)
class RepeatedText:
    """One text stored under several ids (sorted)."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class Chain:
    """Shifted chunks in holding order: ``ids[i]`` holds the vector of ``ids[i+1]``'s text
    and the last one holds ``held_by_last``'s.

    ``before`` is the repeated text the first chunk's text belongs to (the chain leaves a
    repeated text), ``after`` the repeated text whose vector the last chunk holds (the
    chain enters one). Positions, when known, run monotonically along a chain: a
    positional cache bug walks build order.
    """

    ids: tuple[str, ...]
    held_by_last: str
    start: ChainEnd
    end: ChainEnd
    before: RepeatedText | None = None
    after: RepeatedText | None = None

    @property
    def cycle(self) -> bool:
        return self.start is ChainEnd.CYCLE

    @property
    def repeats(self) -> tuple[RepeatedText, ...]:
        """The repeated texts at this chain's breaks (0, 1 or 2)."""
        return tuple(r for r in (self.before, self.after) if r is not None)


@dataclass(frozen=True)
class ShiftChains:
    """Every shifted chunk on exactly one chain; ``ignored`` holds chunks that hold the
    vector of a chunk with the same text (not a shift)."""

    chains: tuple[Chain, ...]
    ignored: tuple[str, ...] = field(default_factory=tuple)

    def chain_of(self) -> dict[str, int]:
        """Shifted id -> index of its chain."""
        return {cid: k for k, ch in enumerate(self.chains) for cid in ch.ids}


def _nodes(repeated: Iterable[Iterable[str]]) -> tuple[dict[str, str], dict[str, RepeatedText]]:
    node_of: dict[str, str] = {}
    groups: dict[str, RepeatedText] = {}
    for group in repeated:
        ids = tuple(sorted({str(i) for i in group}))
        if len(ids) < 2:
            continue
        key = "\0repeat:" + ids[0]
        for cid in ids:
            if cid in node_of:
                raise ValueError(f"id '{cid}' is in two repeated-text groups")
            node_of[cid] = key
        groups[key] = RepeatedText(ids)
    return node_of, groups


def shift_chains(holds: Mapping[str, str], repeated: Iterable[Iterable[str]] = ()) -> ShiftChains:
    """Chains of ``holds`` (shifted id -> id whose fresh embedding its stored vector is).

    ``repeated`` lists the groups of ids that share one text (all of the corpus's, not
    only the shifted ones). Output order: chains by their first id, deterministic for any
    input order.
    """
    node_of, groups = _nodes(repeated)

    def node(cid: str) -> str:
        return node_of.get(cid, cid)

    out_edges: dict[str, list[str]] = {}  # node -> holders (ids) on edges leaving it
    in_count: dict[str, int] = {}
    ignored: list[str] = []
    for holder in sorted(holds):
        u, v = node(holder), node(holds[holder])
        if u == v:
            ignored.append(holder)
            continue
        out_edges.setdefault(u, []).append(holder)
        in_count[v] = in_count.get(v, 0) + 1

    def junction(n: str) -> bool:
        return n in groups or in_count.get(n, 0) > 1

    def end_kind(n: str) -> ChainEnd:
        if n in groups:
            return ChainEnd.REPEATED_TEXT
        if in_count.get(n, 0) > 1:
            return ChainEnd.JOIN
        return ChainEnd.OPEN

    used: set[str] = set()
    chains: list[Chain] = []

    def walk(first: str, start: ChainEnd) -> None:
        ids = [first]
        used.add(first)
        held = holds[first]
        while True:
            n = node(held)
            nxt = out_edges.get(n, [])
            if junction(n) or not nxt or nxt[0] in used:
                break
            ids.append(nxt[0])
            used.add(nxt[0])
            held = holds[nxt[0]]
        u0, vn = node(first), node(held)
        closed = start is ChainEnd.CYCLE
        chains.append(
            Chain(
                tuple(ids),
                held,
                start,
                ChainEnd.CYCLE if closed else end_kind(vn),
                groups.get(u0),
                None if closed else groups.get(vn),
            )
        )

    # chains start at an edge leaving a junction or a node nobody's vector points to
    for u in sorted(out_edges):
        if junction(u) or in_count.get(u, 0) == 0:
            for holder in out_edges[u]:
                if holder not in used:
                    walk(holder, end_kind(u) if junction(u) else ChainEnd.OPEN)
    # what is left are loops of unique texts, each node held once and holding once
    for u in sorted(out_edges):
        for holder in out_edges[u]:
            if holder not in used:
                walk(holder, ChainEnd.CYCLE)
    chains.sort(key=lambda c: c.ids[0])
    return ShiftChains(tuple(chains), tuple(ignored))


# --- when a build order is known --------------------------------------------------------


@dataclass(frozen=True)
class Stretch:
    """Consecutive positions ``start..end`` (inclusive) with one ``offset``, and the
    position of the repeat that caused it (None when there are fewer repeats)."""

    start: int
    end: int
    offset: int
    repeat_position: int | None


def stretches_of(offsets: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """(start, end, offset) runs of equal offset over consecutive positions."""
    runs: list[tuple[int, int, int]] = []
    for p in sorted(offsets):
        off = offsets[p]
        if runs and runs[-1][1] == p - 1 and runs[-1][2] == off:
            runs[-1] = (runs[-1][0], p, off)
        else:
            runs.append((p, p, off))
    return runs


def blame_stretches(
    runs: Sequence[tuple[int, int, int]], repeat_positions: Iterable[int]
) -> list[Stretch]:
    """Name the repeat behind each (start, end, offset) run: the ``|offset|``-th repeat
    in build order (1-based), since every repeat moves a positional cache by one step.

    ``repeat_positions`` are the positions whose text repeats an earlier position's.
    """
    reps = sorted(set(repeat_positions))
    out = []
    for start, end, offset in runs:
        k = abs(offset)
        pos = reps[k - 1] if 1 <= k <= len(reps) else None
        out.append(Stretch(start, end, offset, pos))
    return out


def describe_chain(
    chain: Chain, text_of: Mapping[str, str] | None = None, shown: int = 4
) -> tuple[str, dict[str, object]]:
    """(message, details) for one chain, ready for a ``shift`` finding.

    ``text_of`` (id -> text) lets the repeated text be quoted (first 60 characters).
    Ids are data: the renderer escapes them, this text does not."""

    def excerpt(cid: str) -> str:
        one = " ".join((text_of or {}).get(cid, "").split())
        return one if len(one) <= 60 else one[:59] + "…"

    def repeat(r: RepeatedText | None) -> dict[str, object] | None:
        if r is None:
            return None
        return {"ids": list(r.ids), "text": excerpt(r.ids[0]) if text_of else None}

    ids = list(chain.ids)
    walk = " -> ".join(f"'{c}'" for c in ids[:shown]) + (" -> …" if len(ids) > shown else "")
    if chain.cycle:
        msg = f"{len(ids)} chunk(s) hold each other's vectors in a loop: {walk}"
    else:
        msg = (
            f"{len(ids)} chunk(s) each hold the vector of the next one's text: {walk} "
            f"-> '{chain.held_by_last}'"
        )
    for side, r in (("starts at", chain.before), ("ends at", chain.after)):
        if r is not None:
            quoted = f' ("{excerpt(r.ids[0])}")' if text_of else ""
            msg += (
                f"; the chain {side} a text stored under {len(r.ids)} ids "
                f"({', '.join(repr(i) for i in r.ids[:3])}{', …' if len(r.ids) > 3 else ''})"
                f"{quoted}: a cache filled by position "
                "slips at a repeat"
            )
    details: dict[str, object] = {
        "order": "holds_vector_of",
        "ids": ids,
        "held_by_last": chain.held_by_last,
        "start": str(chain.start),
        "end": str(chain.end),
        "repeated_text_before": repeat(chain.before),
        "repeated_text_after": repeat(chain.after),
    }
    return msg, details
