"""Every ``except Exception`` in indexcheck is a deliberate one, listed here with why: a new
one fails this test until it is justified, since a catch-all can turn a bug into an exit 3
outage or reword it as bad input. (``except BaseException`` that cleans up and re-raises is
not a catch-all and is not counted.)"""

# ruff: noqa: E501  (one reason per line)

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "indexcheck"
CATCH_ALL = re.compile(r"^\s*except(\s+Exception\b.*)?:\s*(#.*)?$")

#: module -> (how many, why each is deliberate)
ALLOWED: dict[str, tuple[int, str]] = {
    "cli/command.py": (1, "the edge: a bug still ends in one line and exit 3, never a traceback"),
    "commands/diagnose/system/hook.py": (1, "the user's system code: its error named, exit 3"),
    "judges/python_hook/judge.py": (1, "the user's judge code: its error named, exit 3"),
    "embedders/sentence_transformers/embedder.py": (
        1,
        "the library raises OSError/ValueError/HF errors when a model cannot load",
    ),
    "engines/ray/engine.py": (
        2,
        "Ray's errors mapped (re-raised when unmapped); an object Ray cannot pickle named",
    ),
    "output/guard.py": (
        1,
        "marking outputs failed after an error: never hides the real error behind a cleanup one",
    ),
    "remote/translate.py": (1, "the one translation table: SDK errors mapped, the rest re-raised"),
    "safety/noise.py": (2, "a log record that cannot be formatted is noise, never a crash"),
    "safety/redact.py": (1, "a log record whose args do not fit its format is left as is"),
    "stores/chroma/connect.py": (3, "cleanup and re-raise; listing collection names for a hint"),
    "stores/chroma/store.py": (3, "older clients have no schema or dimension; closing twice"),
    "stores/faiss/langchain_pickle.py": (
        1,
        "unpickling runs arbitrary classes: any failure is an unreadable pickle",
    ),
    "stores/lancedb/store.py": (1, "closing what is already closed"),
    "stores/milvus/opening.py": (1, "release what was loaded, then re-raise"),
}


def _found() -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in PACKAGE.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if CATCH_ALL.match(line):
                counts[str(path.relative_to(PACKAGE))] += 1
    return counts


def test_every_catch_all_is_a_listed_deliberate_one() -> None:
    found = _found()
    unlisted = {m: n for m, n in found.items() if n > ALLOWED.get(m, (0, ""))[0]}
    assert unlisted == {}, f"new catch-alls: {unlisted}; catch the errors by name, or list why"


def test_the_list_names_no_catch_all_that_is_gone() -> None:
    found = _found()
    stale = {m: n for m, (n, _) in ALLOWED.items() if found.get(m, 0) < n}
    assert stale == {}, f"catch-alls removed: lower their counts here: {stale}"
