"""commands/ is one package per command over a shared kit, and the packages import one way.

A newcomer finds any command's logic, result and report under ``commands/<command>/``; a
package imports only the kit and the packages below it in ``ORDER`` (ci runs every check,
so it sits on top; probe-scale's scale is what every other command converts with, so it
sits at the bottom). The kit (``commands/kit/``) imports no command package;
``commands/reports.py`` imports every command's report, so that each registers its renderer,
and ``commands/schemas.py`` every result type, to write the JSON Schemas of their ``--json``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import indexcheck

CORE = Path(indexcheck.__file__).parent / "commands"
COMMANDS = (
    "check_index",
    "probe_scale",
    "sweep_threshold",
    "compare_ann",
    "diagnose",
    "diff_index",
    "judge",
    "ci",
)
#: bottom to top: a package may import the kit and any package before it
ORDER = (
    "probe_scale",
    "sweep_threshold",
    "check_index",
    "embed",
    "compare_ann",
    "diff_index",
    "judge",
    "questions",
    "diagnose",
    "ci",
    "repair",
)
#: the modules at the root of commands/ that may import every command package
TOP = ("reports.py", "schemas.py", "__init__.py")


def _module_of(path: Path) -> list[str]:
    rel = path.relative_to(CORE.parent.parent).with_suffix("")
    return list(rel.parts)


def core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, first part under commands/) of every import of a core module in ``path``,
    lazy ones included, ``TYPE_CHECKING`` blocks excluded (they never run)."""
    here = _module_of(path)
    out: list[tuple[int, str]] = []

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            test = ast.unparse(node.test)
            if test.endswith("TYPE_CHECKING"):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            for a in node.names:
                parts = a.name.split(".")
                if parts[:2] == ["indexcheck", "commands"] and len(parts) > 2:
                    out.append((node.lineno, parts[2]))

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = here[: len(here) - node.level]  # __init__ keeps its own part
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if parts[:2] != ["indexcheck", "commands"]:
                return
            if len(parts) > 2:
                out.append((node.lineno, parts[2]))
            else:  # from indexcheck.commands import x: each name is a module under commands/
                out.extend((node.lineno, a.name) for a in node.names)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return out


def offending(path: Path) -> list[str]:
    """The imports in ``path`` that run up or sideways between core packages."""
    parts = path.relative_to(CORE).parts
    if parts in [(name,) for name in TOP]:
        return []
    own = parts[0] if len(parts) > 1 and parts[0] != "kit" else None  # None: a kit module
    rank = {name: i for i, name in enumerate(ORDER)}
    bad = []
    for line, target in core_imports(path):
        if target not in rank or target == own:
            continue  # the kit, or its own package
        if own is None or rank[target] > rank[own]:
            where = "the kit" if own is None else f"commands/{own}/"
            bad.append(f"{path.relative_to(CORE)}:{line}: {where} imports commands/{target}/")
    return bad


def test_every_command_has_its_package_with_result_and_report() -> None:
    for name in COMMANDS:
        pkg = CORE / name
        for part in ("__init__.py", "result.py", "report.py"):
            assert (pkg / part).is_file(), f"commands/{name}/{part}"


def test_every_package_under_commands_is_ordered() -> None:
    packages = {p.parent.name for p in CORE.glob("*/__init__.py")}
    assert packages == {*ORDER, "kit"}


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_command_packages_import_only_the_kit_and_packages_below(path: Path) -> None:
    assert offending(path) == []


def test_the_order_check_catches_an_upward_and_a_kit_import(tmp_path: Path) -> None:
    """The check fails on the planted faults: probe_scale importing ci, the kit importing a
    command package (lazily), and passes a type-only import."""
    up = CORE / "probe_scale" / "_planted_up.py"
    kit = CORE / "kit" / "_planted_kit.py"
    try:
        up.write_text("def f():\n    from ..ci import run_ci\n")
        kit.write_text(
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from ..ci import CiResult\n"
            "def g():\n    from indexcheck.commands.judge import result\n"
        )
        assert offending(up) == [
            "probe_scale/_planted_up.py:2: commands/probe_scale/ imports commands/ci/"
        ]
        assert offending(kit) == ["kit/_planted_kit.py:5: the kit imports commands/judge/"]
    finally:
        up.unlink(missing_ok=True)
        kit.unlink(missing_ok=True)


def test_results_hold_data_and_never_import_their_renderer() -> None:
    """A result type gives no ``sections()`` and imports no report: its report module
    registers the renderer for the type (``output.registry``), as ir_measures registers a
    measure."""
    for name in COMMANDS:
        result = (CORE / name / "result.py").read_text(encoding="utf-8")
        tree = ast.parse(result)
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in imports if (n.module or "").endswith("report")], name
        methods = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        assert "sections" not in methods, name


def _registered_after(module: str) -> set[str]:
    """The report kinds registered in a fresh interpreter after importing ``module``."""
    import subprocess
    import sys

    code = (
        f"import {module}\nfrom indexcheck.output import registry\n"
        "print(*sorted(registry._BUILDERS))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_every_kind_is_registered_where_its_sections_are_read() -> None:
    """ci's report renders each check's sections, and the report layer reads any --json:
    both must register every builder they use, whatever was imported before (a ci run
    failed with KeyError 'check-index' when only ci's report was loaded)."""
    from indexcheck.output.registry import KINDS

    assert _registered_after("indexcheck.commands.reports") == set(KINDS)
    assert _registered_after("indexcheck.commands.ci.report") >= set(KINDS) - {"judge"}
