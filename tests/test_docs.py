"""The documentation: the site builds with ``mkdocs build --strict``, its CLI reference is
generated from the click app and names every command and option, and the README stays a
front page."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS_PLUGINS = (
    "mkdocs",
    "material",
    "mkdocstrings",
    "mkdocstrings_handlers.python",
    "mkdocs_click",
)


def _missing_docs_packages() -> list[str]:
    missing = []
    for name in DOCS_PLUGINS:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built once, strictly, into a temporary folder."""
    missing = _missing_docs_packages()
    if missing:
        pytest.skip(
            f"the docs extra is not installed ({', '.join(missing)} missing): "
            "pip install -e '.[docs]'"
        )
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


Walk = list[tuple[tuple[str, ...], click.Command]]


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Walk:
    """Every command of the click app with its path under ``indexcheck``, the group first."""
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            out.extend(_commands(cmd.commands[name], (*path, name)))
    return out


def _sections(page: str) -> dict[str, str]:
    """Heading id -> the plain text under it, up to the next command heading."""
    parts = re.split(r'(<h[1-6] id="indexcheck[^"]*")', page)
    sections: dict[str, str] = {}
    for head, body in zip(parts[1::2], parts[2::2], strict=True):
        anchor = re.search(r'id="([^"]+)"', head).group(1)  # type: ignore[union-attr]
        text = html.unescape(re.sub(r"<[^>]+>", " ", body))
        sections[anchor] = text
    return sections


def _expected(path: tuple[str, ...], cmd: click.Command) -> list[str]:
    """What the reference must show for one command: each option's flags (and its
    negative form) and each argument's metavar."""
    ctx = click.Context(cmd, info_name=" ".join(("indexcheck", *path)))
    want = []
    for param in cmd.get_params(ctx):
        if isinstance(param, click.Option):
            if param.hidden or param.name == "help":
                continue
            want.extend([*param.opts, *param.secondary_opts])
        elif isinstance(param, click.Argument):
            want.append(param.make_metavar(ctx).strip("[]. ").split()[0])
    return want


def test_site_builds_strictly(site: Path) -> None:
    for page in ("index.html", "tutorial/index.html", "reference/cli/index.html",
                 "reference/api/index.html", "performance/index.html"):  # fmt: skip
        assert (site / page).is_file(), page


def test_cli_reference_names_every_command_and_option(site: Path) -> None:
    from indexcheck.cli.app import cli

    sections = _sections((site / "reference/cli/index.html").read_text(encoding="utf-8"))
    missing = []
    for path, cmd in _commands(cli):
        anchor = "-".join(("indexcheck", *path))
        if anchor not in sections:
            missing.append(f"command {' '.join(('indexcheck', *path))}: no section #{anchor}")
            continue
        text = sections[anchor]
        for flag in _expected(path, cmd):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text):
                missing.append(f"{' '.join(('indexcheck', *path))}: {flag}")
    assert not missing, "missing from the generated CLI reference:\n" + "\n".join(missing)


def test_cli_reference_is_generated_not_copied() -> None:
    text = (ROOT / "docs/reference/cli.md").read_text(encoding="utf-8")
    assert "::: mkdocs-click" in text
    assert ":module: indexcheck.cli.app" in text and ":command: cli" in text


def test_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; the front page holds 250 at most"
    text = "\n".join(lines)
    assert "make demo" in text and "make test" in text
    assert "tests/" not in text, "user docs do not cite test files"
