"""Order-free shift diagnosis (commands/check_index/shift/chains.py): chains, and blame by
build order.

The positional-cache bug is replayed in two forms, on random build orders with random
repeats, then the ids are shuffled: the chains must recover the build order and name the
right repeats without seeing a single position.

- ``backward``: indexcheck.testing.positional_cache_bug (a cache hit does not advance the
  position counter): chunk i gets the vector at the counter, i.e. an earlier chunk's.
- ``forward``: the de-duplicated texts are embedded and the vectors handed out by position
  (tests/builders/framework_corpus.shifted_vectors): chunk i gets the i-th unique text's.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from indexcheck.commands.check_index.shift.chains import (
    ChainEnd,
    blame_stretches,
    shift_chains,
    stretches_of,
)


def replay(texts: list[str], variant: str) -> list[int]:
    """For each position, the position whose text's fresh embedding it stores."""
    first: dict[str, int] = {}
    for p, t in enumerate(texts):
        first.setdefault(t, p)
    src: list[int] = []
    if variant == "backward":
        cache: dict[str, int] = {}
        counter = 0
        for t in texts:
            if t in cache:
                src.append(cache[t])
                continue
            cache[t] = counter
            src.append(counter)
            counter += 1
        return src
    unique = list(first)
    return [first[unique[i]] if i < len(unique) else i for i in range(len(texts))]


def observe(texts: list[str], variant: str, seed: int):
    """(holds by id, repeated groups by id, id of each position), ids shuffled."""
    rng = random.Random(seed)
    n = len(texts)
    names = [f"c{rng.getrandbits(40):010x}" for _ in range(n)]
    src = replay(texts, variant)
    by_text: dict[str, list[str]] = {}
    for p, t in enumerate(texts):
        by_text.setdefault(t, []).append(names[p])
    holds: dict[str, str] = {}
    order = list(range(n))
    rng.shuffle(order)
    for p in order:
        stored = texts[src[p]]
        if stored != texts[p]:
            holds[names[p]] = rng.choice(by_text[stored])  # any copy: they look the same
    groups = [g for g in by_text.values() if len(g) > 1]
    rng.shuffle(groups)
    return holds, groups, names


@st.composite
def boilerplate_builds(draw):
    """Distinct paragraphs, then more paragraphs with earlier ones quoted again."""
    n_head = draw(st.integers(1, 8))
    n_tail = draw(st.integers(0, 30))
    n_rep = draw(st.integers(0, 6))
    texts = [f"u{i}" for i in range(n_head)]
    tail = [f"u{n_head + i}" for i in range(n_tail)]
    reps = [f"u{draw(st.integers(0, n_head - 1))}" for _ in range(n_rep)]
    slots = draw(st.lists(st.integers(0, n_tail), min_size=n_rep, max_size=n_rep))
    for text, slot in sorted(zip(reps, slots, strict=True), key=lambda x: -x[1]):
        tail.insert(slot, text)
    return texts + tail


@st.composite
def any_builds(draw):
    alphabet = draw(st.integers(1, 12))
    return [f"t{draw(st.integers(0, alphabet - 1))}" for _ in range(draw(st.integers(1, 40)))]


def _positions(names: list[str]) -> dict[str, int]:
    return {cid: p for p, cid in enumerate(names)}


@settings(max_examples=300, deadline=None)
@given(any_builds(), st.sampled_from(["backward", "forward"]), st.integers(0, 2**31))
def test_every_shifted_chunk_on_one_chain_in_build_order(texts, variant, seed) -> None:
    holds, groups, names = observe(texts, variant, seed)
    result = shift_chains(holds, groups)
    pos = _positions(names)
    seen = [cid for ch in result.chains for cid in ch.ids]
    assert sorted(seen) == sorted(holds)  # a partition of the shifted chunks
    grouped = {cid for g in groups for cid in g}
    for ch in result.chains:
        assert not ch.cycle  # a positional cache never loops
        p = [pos[c] for c in ch.ids]
        steps = {b > a for a, b in zip(p, p[1:], strict=False)}
        # build order recovered: positions run one way along every chain
        assert steps <= ({True} if variant == "forward" else {False})
        # inside a chain every text is unique; breaks are at repeated texts or joins
        assert not any(c in grouped for c in ch.ids[1:])
        if ch.after is not None:
            assert ch.end is ChainEnd.REPEATED_TEXT and ch.held_by_last in ch.after.ids
        if ch.before is not None:
            assert ch.ids[0] in ch.before.ids


@settings(max_examples=300, deadline=None)
@given(boilerplate_builds(), st.sampled_from(["backward", "forward"]), st.integers(0, 2**31))
def test_one_chain_per_repeat_naming_that_repeat(texts, variant, seed) -> None:
    holds, groups, names = observe(texts, variant, seed)
    result = shift_chains(holds, groups)
    first: dict[str, int] = {}
    for p, t in enumerate(texts):
        first.setdefault(t, p)
    n_unique = len(first)
    causing = sorted(texts[p] for p in range(len(texts)) if first[texts[p]] != p and p < n_unique)
    named = []
    text_of = dict(zip(names, texts, strict=True))
    for ch in result.chains:
        assert len(ch.repeats) == 1, ch  # exactly one break, at one repeated text
        named.append(text_of[ch.repeats[0].ids[0]])
        # the repeat is where the cache slipped: the chain leaves it (forward) or ends in
        # it (backward)
        assert (ch.before is not None) == (variant == "forward")
    assert sorted(named) == causing


def offsets_by_position(texts: list[str], variant: str) -> dict[int, int]:
    src = replay(texts, variant)
    return {p: src[p] - p for p in range(len(texts)) if texts[src[p]] != texts[p]}


def causing_repeat(texts: list[str], variant: str, stretch: tuple[int, int, int]) -> int | None:
    """Causal oracle: the latest repeat whose removal from the build changes the offset of
    a chunk of this stretch."""
    start, end, off = stretch
    seen: set[str] = set()
    repeats = []
    for p, t in enumerate(texts):
        if t in seen:
            repeats.append(p)
        seen.add(t)
    members = range(start, end + 1)
    for r in sorted(repeats, reverse=True):
        kept = texts[:r] + texts[r + 1 :]
        new = offsets_by_position(kept, variant)
        # removing a member of the stretch changes it too
        moved = r in members or any(new.get(p - (p > r)) != off for p in members)
        if moved:
            return r
    return None


@settings(max_examples=200, deadline=None)
@given(boilerplate_builds(), st.sampled_from(["backward", "forward"]))
def test_blame_names_the_repeat_that_started_each_stretch(texts, variant) -> None:
    offsets = offsets_by_position(texts, variant)
    seen: set[str] = set()
    repeats = []
    for p, t in enumerate(texts):
        if t in seen:
            repeats.append(p)
        seen.add(t)
    for s in blame_stretches(stretches_of(offsets), repeats):
        assert s.repeat_position == causing_repeat(texts, variant, (s.start, s.end, s.offset))


def test_issue_item_6_plus_one_then_plus_two() -> None:
    # T = a b c a d e b f g h: repeats at 3 and 6; de-duplicated vectors by position
    texts = list("abcadebfgh")
    offsets = offsets_by_position(texts, "forward")
    runs = stretches_of(offsets)
    assert runs == [(3, 4, 1), (5, 7, 2)]
    blamed = blame_stretches(runs, [3, 6])
    # the first stretch starts AT its repeat, the second one before its repeat
    assert [s.repeat_position for s in blamed] == [3, 6]
    # the old rule (last repeat strictly before the stretch's first chunk) gets both wrong
    old = [max([r for r in (3, 6) if r < s.start], default=None) for s in blamed]
    assert old == [None, 3]


def test_chain_example_and_cycle() -> None:
    names = [f"id{i}" for i in range(10)]
    texts = list("abcadebfgh")
    src = replay(texts, "forward")
    holds = {names[p]: names[src[p]] for p in range(10) if texts[src[p]] != texts[p]}
    res = shift_chains(holds, [["id0", "id3"], ["id1", "id6"]])
    assert [c.ids for c in res.chains] == [("id3", "id4", "id5", "id7"), ("id6",)]
    assert [c.before.ids for c in res.chains] == [("id0", "id3"), ("id1", "id6")]
    assert [c.held_by_last for c in res.chains] == ["id9", "id8"]
    swapped = shift_chains({"x": "y", "y": "x", "z": "z2"})
    assert [c.cycle for c in swapped.chains] == [True, False]
    assert sorted(swapped.chains[0].ids) == ["x", "y"]
    same_text = shift_chains({"r": "f"}, [["f", "r"]])
    assert same_text.chains == () and same_text.ignored == ("r",)


def test_describe_chain_names_the_repeat() -> None:
    from indexcheck.commands.check_index.shift.chains import describe_chain

    names = [f"id{i}" for i in range(10)]
    texts = list("abcadebfgh")
    src = replay(texts, "forward")
    holds = {names[p]: names[src[p]] for p in range(10) if texts[src[p]] != texts[p]}
    res = shift_chains(holds, [["id0", "id3"], ["id1", "id6"]])
    msg, details = describe_chain(res.chains[0], {"id0": "Alpha text", "id3": "Alpha text"})
    assert msg.startswith("4 chunk(s) each hold the vector of the next one's text: 'id3' -> ")
    assert "starts at a text stored under 2 ids ('id0', 'id3') (\"Alpha text\")" in msg
    assert details["repeated_text_before"] == {"ids": ["id0", "id3"], "text": "Alpha text"}
    assert details["order"] == "holds_vector_of" and details["repeated_text_after"] is None
    loop, _ = describe_chain(shift_chains({"x": "y", "y": "x"}).chains[0])
    assert "loop" in loop
