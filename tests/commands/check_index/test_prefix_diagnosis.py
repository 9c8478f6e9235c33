"""check-index names the instruction prefix a set of low chunks was embedded with (E5's
'passage: ', ...) in its first line, with the --embedder spec that matches them, on a
sample and on --all; the printed spec is accepted as typed and proves the diagnosis; a
clean index gets no prefix finding."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.embedders import check_embedder_spec
from indexcheck.embedders.prefixes import parse_embedder_spec, spec_with_prefix
from tests.builders.prefixed_index import EMBEDDER, build_prefixed_faiss

MODES = {"sample": ["--sample", "100", "--seed", "3"], "all": ["--all"]}


def _check(spec: str, *extra: str) -> tuple[int, list[str]]:
    args = ["check-index", "--store", spec, "--trust-pickle", "--embedder", EMBEDDER, *extra]
    r = CliRunner(env={"COLUMNS": "400"}).invoke(cli, args)
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, [line for line in r.stdout.splitlines() if line.strip()]


def _typed_embedder(line: str) -> list[str]:
    """The ``--embedder SPEC`` a first line prints, split as a shell would."""
    typed = [m.group(1) for m in re.finditer(r"--embedder ('[^']*'|\S+)", line)]
    typed = [t for t in typed if t != "adds"]  # "your --embedder adds none"
    assert len(typed) == 1, line
    return ["--embedder", *shlex.split(typed[0])]


def _run_as_printed(spec: str, line: str) -> tuple[int, list[str]]:
    """check-index --all with the --embedder the line prints (accepted as typed)."""
    typed = _typed_embedder(line)
    check_embedder_spec(typed[1])
    args = ["check-index", "--store", spec, "--trust-pickle", "--all", *typed]
    r = CliRunner(env={"COLUMNS": "400"}).invoke(cli, args)
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, r.stdout.splitlines()


@pytest.mark.parametrize("mode", list(MODES))
def test_a_section_embedded_with_passage_prefix_is_named_with_its_fix(
    tmp_path: Path, mode: str
) -> None:
    spec = build_prefixed_faiss(tmp_path / "idx", 200, range(20, 32))
    code, lines = _check(spec, *MODES[mode])
    assert code == 1
    first = lines[0]
    assert "stored vectors were embedded with the prefix 'passage: '" in first
    assert "your --embedder adds none" in first
    assert f"--embedder '{EMBEDDER}?prefix=passage:%20'" in first
    assert "changed after it was embedded" not in "\n".join(lines)
    assert not any("stale_vector" in line for line in lines)
    # the fix as printed: accepted, and under it the section matches and the rest is bare
    code, again_lines = _run_as_printed(spec, first)
    assert code == 1
    again = again_lines[0]
    assert "embedded with no prefix; your --embedder adds 'passage: '" in again
    assert "188 chunk(s)" in again and "the other 12 compared" in again


def test_an_index_embedded_with_the_prefix_throughout_names_the_spec_that_passes(
    tmp_path: Path,
) -> None:
    spec = build_prefixed_faiss(tmp_path / "idx", 60, range(60), prefix="search_document: ")
    code, lines = _check(spec, "--all")
    assert code == 1
    assert "embedded with the prefix 'search_document: '" in lines[0]
    assert "every compared chunk: the index is consistent" in lines[0]
    code, _ = _run_as_printed(spec, lines[0])
    assert code == 0


def test_chunks_embedded_as_questions_are_told_so(tmp_path: Path) -> None:
    spec = build_prefixed_faiss(tmp_path / "idx", 60, range(60), prefix="query: ")
    _code, lines = _check(spec, "--all")
    assert "embedded with the prefix 'query: '" in lines[0]
    assert "embedded as questions; E5 embeds passages with the prefix 'passage: '" in lines[0]


def test_a_clean_index_passes_with_no_prefix_finding(tmp_path: Path) -> None:
    spec = build_prefixed_faiss(tmp_path / "idx", 60, range(0))
    for extra in (["--all"], ["--sample", "40"]):
        code, lines = _check(spec, *extra)
        assert code == 0
        assert not any("prefix" in line for line in lines)


def test_spec_with_prefix_keeps_the_providers_options() -> None:
    got = spec_with_prefix("mistral:mistral-embed?dim=8&prefix=query:%20", "passage: ")
    assert got == "mistral:mistral-embed?dim=8&prefix=passage:%20"
    assert spec_with_prefix("minilm?prefix=passage:%20&query_prefix=query:%20", "") == (
        "minilm?query_prefix=query:%20"
    )
    odd = "Instruct: find\nQuery: "
    back = parse_embedder_spec(spec_with_prefix("st:x", odd))
    assert back.prefix == odd
