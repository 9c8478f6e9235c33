"""Layers run one way: commands/ never imports the CLI, the reports, click or rich, and never opens
a store or an embedder from a spec (the CLI or indexcheck.api open them and pass them in)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import indexcheck

CORE = Path(indexcheck.__file__).parent / "commands"
FORBIDDEN_MODULES = ("indexcheck.cli", "indexcheck.output.render", "click", "rich")
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
    here = ".".join(rel.parts) if rel else "indexcheck.commands." + path.stem
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
        "from indexcheck.output.render import html\n"
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

    from indexcheck.commands.kit import verdicts as v

    assert all(issubclass(e, StrEnum) for e in (v.Verdict, v.Label, v.Status))
    assert [x.value for x in v.Verdict] == ["PASS", "INSUFFICIENT_EVIDENCE", "BLOCK"]
    assert v.worst(["PASS", "BLOCK", "INSUFFICIENT_EVIDENCE"]) is v.Verdict.BLOCK
    assert v.worst([]) is v.Verdict.PASS
    assert json.dumps({"s": v.Status.SHIFT, "l": v.Label.OK}) == '{"s": "shift", "l": "OK"}'
    assert set(v.FAILING_LABELS) | set(v.GOOD_LABELS) == set(v.Label)


#: modules allowed past MAX_LINES, each with its reason and its own ceiling (none: api.py is
#: held to it too, each command's run on opened objects living in its package)
LONG_MODULES: dict[str, int] = {}
#: a module is one idea; past this it is surely two
MAX_LINES = 600


def test_no_module_in_the_package_passes_600_lines() -> None:
    root = CORE.parent
    long = {
        str(p.relative_to(root)): n
        for p in root.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines()))
        > LONG_MODULES.get(str(p.relative_to(root)), MAX_LINES)
    }
    assert long == {}


# -- the package's layers, read from every module's imports ---------------------------------
# Top to bottom; an import from a lower layer to a higher one is a back-arrow. Imports under
# ``if TYPE_CHECKING:`` never run and do not count; lazy imports inside functions do.
PACKAGE = CORE.parent
LAYERS = (
    ("cli/", 7),  # the front ends: the command line, and the pytest plugin and assertions
    ("__main__.py", 7),  # python -m indexcheck: the command line
    ("testing/", 7),
    ("api.py", 6),
    ("__init__.py", 6),
    ("output/render/", 5),
    ("output/present.py", 5),
    ("output/guard.py", 5),
    ("commands/", 4),
    ("stores/", 3),
    ("judges/", 3),
    ("engines/", 3),
    ("integrations/", 3),
    ("inputs/chunk_stream.py", 3),
    ("output/manifest.py", 3),
    ("embedders/", 2),
)  # everything else (inputs/, output/ files and model, safety/, remote/, errors, ...): layer 1


def layer(rel: str) -> int:
    for rule, n in LAYERS:
        if rel == rule or (rule.endswith("/") and rel.startswith(rule)):
            return n
    return 1


def module_file(parts: list[str]) -> str | None:
    base = "/".join(parts)
    for rel in (f"{base}/__init__.py" if base else "__init__.py", f"{base}.py"):
        if (PACKAGE / rel).is_file():
            return rel
    return None


def imports_of(rel: str, source: str | None = None) -> list[tuple[int, str]]:
    """(line, imported module file) for each import of the package that runs, in the module
    ``rel`` (its text read from the package unless ``source`` gives it)."""
    text = (PACKAGE / rel).read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text, rel)
    out: list[tuple[int, str]] = []

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name != "TYPE_CHECKING":
                self.generic_visit(node)
                return
            for child in node.orelse:
                self.visit(child)

        def visit_Import(self, node: ast.Import) -> None:
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "indexcheck" and (target := module_file(parts[1:])):
                    out.append((node.lineno, target))

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                pkg = rel.split("/")[:-1]
                base = pkg[: len(pkg) - node.level + 1] + (node.module or "").split(".")
                base = [p for p in base if p]
            elif (node.module or "").split(".")[0] == "indexcheck":
                base = (node.module or "").split(".")[1:]
            else:
                return
            base_file = module_file(base)
            if base_file is None:
                return
            for a in node.names:
                sub = module_file([*base, a.name]) if base_file.endswith("__init__.py") else None
                out.append((node.lineno, sub or base_file))

    Visitor().visit(tree)
    return out


MODULES = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
ARROWS = {rel: imports_of(rel) for rel in MODULES}


def test_no_import_runs_from_a_lower_layer_to_a_higher_one() -> None:
    back = [
        f"{rel}:{line} (layer {layer(rel)}) imports {target} (layer {layer(target)})"
        for rel, arrows in ARROWS.items()
        for line, target in arrows
        if layer(target) > layer(rel)
    ]
    assert back == []


def test_the_layer_reader_sees_lazy_imports_and_skips_type_checking() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..errors import InputError\n"
        "from ..stores import base\n"
        "if TYPE_CHECKING:\n"
        "    from ..api import check_index\n"
        "else:\n"
        "    import indexcheck.output.render.html\n"
        "def f():\n"
        "    from ..cli.options import progress\n"
    )
    arrows = [t for _, t in imports_of("commands/x.py", source)]
    assert arrows == ["errors.py", "stores/base.py", "output/render/html.py", "cli/options.py"]
    assert [layer(t) for t in arrows] == [1, 3, 5, 7]


def test_report_modules_import_each_other_in_one_direction() -> None:
    report = [m for m in MODULES if m.startswith("output/render/")]
    edges = {
        m: {t for _, t in ARROWS[m] if t.startswith("output/render/") and t != m} for m in report
    }

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(edges[start])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo += edges.get(m, ())
        return seen

    circles = sorted(m for m in report if m in reaches(m))
    assert circles == []


# -- one front door: a command's CLI calls indexcheck.api, which opens what the specs name ----
OPENERS = {
    "open_store",
    "opened_store",
    "opened",
    "open_embedder",
    "opened_embedder",
    "cached_embedder",
}
#: cli/ modules that still open a store or an embedder themselves, each with its reason
CLI_OPENERS = {
    # a pytest plugin, not a command: its fixtures hand the user's tests an opened store
    # and embedder for the whole session
    "cli/pytest_plugin.py",
}


def opener_imports(rel: str) -> list[str]:
    tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"), rel)
    return [
        f"{rel}:{node.lineno} imports {a.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for a in node.names
        if a.name in OPENERS
    ]


def test_no_cli_module_opens_a_store_or_an_embedder_itself() -> None:
    found = [
        line
        for rel in MODULES
        if rel.startswith("cli/") and rel not in CLI_OPENERS
        for line in opener_imports(rel)
    ]
    assert found == []
    assert all(opener_imports(rel) for rel in CLI_OPENERS), "an exception no longer needed"


def test_no_command_opens_through_the_session() -> None:
    """A command that opens through ``session(ctx).open_store/open_embedder`` (or any
    ``x.open_store(...)`` call) bypasses the api: embed, judge --store and sweep-threshold
    --observed, the last three, go through it now, and no command may start again."""
    calls = set()
    for rel in MODULES:
        if not rel.startswith("cli/"):
            continue
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"), rel)
        for node in ast.walk(tree):
            f = node.func if isinstance(node, ast.Call) else None
            if isinstance(f, ast.Attribute) and f.attr in {"open_store", "open_embedder"}:
                calls.add(rel)
    assert calls == set(), calls
