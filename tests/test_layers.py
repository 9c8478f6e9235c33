"""Layers run one way: core/ never imports the CLI, the reports, click or rich, and never opens
a store or an embedder from a spec (the CLI or indexcheck.api open them and pass them in)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import indexcheck

CORE = Path(indexcheck.__file__).parent / "core"
FORBIDDEN_MODULES = ("indexcheck.cli", "indexcheck.report", "click", "rich")
FORBIDDEN_CALLS = {"open_store", "open_embedder", "parse"}  # parse: StoreSpec.parse


def _absolute(module: str | None, level: int, here: str) -> str:
    if level == 0:
        return module or ""
    base = here.split(".")[:-level]
    return ".".join([*base, module] if module else base)


def violations(path: Path) -> list[str]:
    # a package's __init__ keeps its last part, so "." resolves to the package itself
    inside = path.is_relative_to(CORE)
    rel = path.relative_to(CORE.parent.parent).with_suffix("") if inside else None
    here = ".".join(rel.parts) if rel else "indexcheck.core." + path.stem
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = _absolute(node.module, node.level, here)
            names = [mod, *(f"{mod}.{a.name}" for a in node.names)]
            found += [
                f"{path.name}:{node.lineno} imports {a.name}"
                for a in node.names
                if a.name in FORBIDDEN_CALLS - {"parse"}
            ]
        bad = [n for n in names if any(n == m or n.startswith(m + ".") for m in FORBIDDEN_MODULES)]
        if bad:
            found.append(f"{path.name}:{node.lineno} imports {bad[0]}")
        if isinstance(node, ast.Call):
            f = node.func
            called = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            owner = (
                f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            )
            if called in {"open_store", "open_embedder"} or (
                called == "parse" and owner == "StoreSpec"
            ):
                found.append(
                    f"{path.name}:{node.lineno} calls {owner + '.' if owner else ''}{called}"
                )
    return found


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_stays_below_cli_and_report(path: Path) -> None:
    assert violations(path) == []


def test_the_walker_catches_each_kind_of_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import click\n"
        "from rich.table import Table\n"
        "from ..cli.options import progress\n"
        "from indexcheck.report import html\n"
        "from ..stores import open_store\n"
        "from ..stores.base import StoreSpec\n"
        "def f(s):\n"
        "    open_store(s)\n"
        "    StoreSpec.parse(s)\n"
        "    from ..embedders import open_embedder\n"
        "    return open_embedder(None)\n"
    )
    found = violations(bad)
    assert len(found) == 9, found


def test_statuses_labels_and_verdicts_are_str_enums_with_one_order() -> None:
    import json
    from enum import StrEnum

    from indexcheck.core import verdicts as v

    assert all(issubclass(e, StrEnum) for e in (v.Verdict, v.Label, v.Status))
    assert [x.value for x in v.Verdict] == ["PASS", "INSUFFICIENT_EVIDENCE", "BLOCK"]
    assert v.worst(["PASS", "BLOCK", "INSUFFICIENT_EVIDENCE"]) is v.Verdict.BLOCK
    assert v.worst([]) is v.Verdict.PASS
    assert json.dumps({"s": v.Status.SHIFT, "l": v.Label.OK}) == '{"s": "shift", "l": "OK"}'
    assert set(v.FAILING_LABELS) | set(v.GOOD_LABELS) == set(v.Label)


def test_no_module_in_the_package_passes_500_lines() -> None:
    root = CORE.parent
    long = {
        str(p.relative_to(root)): n
        for p in root.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}
