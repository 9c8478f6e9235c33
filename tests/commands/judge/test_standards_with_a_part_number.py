"""check-answers finds a standard with a part number ("ISO 31-0:1992", "IEC 60050-131:2002")
in the chunk that holds it, and still flags one no chunk holds."""

from __future__ import annotations

import pytest

from indexcheck.commands.judge.answer_checks import _found
from indexcheck.commands.judge.kb_index import build_index
from indexcheck.commands.judge.references import ItemKind, extract

KB = [
    "Quantities and units follow ISO 31-0:1992 (general principles).",
    "Terms are as defined in IEC 60050-131:2002 and in ISO 9001:2015.",
]


@pytest.mark.parametrize("named", ["ISO 31-0:1992", "IEC 60050-131:2002", "ISO 9001:2015"])
def test_a_standard_a_chunk_holds_is_found(named: str) -> None:
    (item,) = extract(f"The rule comes from {named}.")
    assert item.kind == ItemKind.STANDARD
    assert _found(build_index(KB), item, 0)


@pytest.mark.parametrize("named", ["ISO 31-1:1992", "ISO 31-0:1993", "IEC 60050-132:2002"])
def test_a_standard_no_chunk_holds_is_flagged(named: str) -> None:
    (item,) = extract(f"The rule comes from {named}.")
    assert not _found(build_index(KB), item, 0)
