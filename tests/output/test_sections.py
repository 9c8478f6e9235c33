"""Every result type has its sections registered; one renderer per medium; the manifest is
stamped once (``indexcheck.output.manifest.stamp``), by each command's run entry, never by the
computing core, the CLI or the face."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

import indexcheck
from indexcheck.api import sections as sections_of_result
from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexResult
from indexcheck.commands.check_index.findings import ChunkCheck, Finding
from indexcheck.output.manifest import Run, stamp
from indexcheck.output.model import Plot, Section, Table, Text, V, terminal
from indexcheck.output.render.terminal import render
from indexcheck.testing import HashEmbedder

SPEC = "py:indexcheck.testing:HASH32"
PACKAGE = Path(indexcheck.__file__).parent
HOSTILE = "x[bold red]boom[/bold red]\x1b[2J"


@pytest.fixture(autouse=True)
def _scale_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def questions(small_kb_questions: Path) -> Path:
    return small_kb_questions


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
    return names


def _text(console: Console) -> str:
    return console.export_text()


def _console() -> Console:
    return Console(record=True, width=200, force_terminal=False, file=open("/dev/null", "w"))  # noqa: SIM115


# -- the neutral structure ----------------------------------------------------------------


def test_the_section_structure_imports_no_renderer() -> None:
    """indexcheck/output/model.py, the report registry and every command's report and result
    modules are imported by the commands: no rich, click, matplotlib or the report layer."""
    paths = [PACKAGE / "output" / "model.py", PACKAGE / "output" / "registry.py"]
    paths += sorted((PACKAGE / "commands").glob("*/report.py"))
    paths += sorted((PACKAGE / "commands").glob("*/result.py"))
    assert len(paths) >= 18
    for path in paths:
        bad = {
            n
            for n in _imports(path)
            if n.split(".")[0] in ("rich", "click", "matplotlib")
            or n.startswith(("indexcheck.output.render", "...report", "....report"))
        }
        assert bad == set(), path


def test_only_a_run_entry_stamps_a_manifest() -> None:
    """indexcheck.output.manifest (Run, stamp) is imported only by each command's run entry
    (``commands/<command>/run.py``, which opens what the settings name, runs and stamps
    once): never by the computing modules, the CLI or the face."""
    paths = sorted((PACKAGE / "commands").rglob("*.py"))
    paths += sorted((PACKAGE / "cli").rglob("*.py")) + [PACKAGE / "api.py"]
    assert any(p.parent.name == "check_index" for p in paths)
    stampers = [p for p in paths if any(n.endswith("manifest") for n in _imports(p))]
    assert stampers, "no run entry stamps"
    for path in stampers:
        assert path.name == "run.py" and path.parent.parent.name == "commands", path


# -- every result gives its sections --------------------------------------------------------


def test_every_result_type_gives_report_and_terminal_sections(
    small_kb: dict[str, Path], questions: Path
) -> None:
    store = f"faiss:{small_kb['good']}"
    results = [
        indexcheck.check_index(store, small_kb["chunks"], SPEC, sample=None),
        indexcheck.probe_scale(store, probes=4, k=4),
        indexcheck.compare_ann(store, 20, k=4, fetch=[4, 8]),
        indexcheck.sweep_threshold(store, questions, SPEC, k=4, fetch=8),
        indexcheck.diagnose(store, questions, small_kb["chunks"], SPEC, k=4),
    ]
    for result in results:
        sections = sections_of_result(result)
        assert all(isinstance(s, Section) for s in sections)
        report = [s for s in sections if s.report]
        assert report and report[0].verdict in ("PASS", "CANNOT_FAIL", "FAIL"), type(
            result
        ).__name__
        assert terminal(sections), type(result).__name__
        assert any(s.title.endswith(": manifest") for s in report)
        # the report sections name their plots; the core draws nothing
        assert all(not isinstance(b, Plot) or b.name for s in report for b in s.blocks)


# -- one terminal renderer, escaping data ---------------------------------------------------


def _planted(bad_id: str) -> CheckIndexResult:
    chunk = ChunkCheck(
        position=3,
        id=bad_id,
        cosine=0.1,
        status="shift",  # type: ignore[arg-type]
        holds_vector_of=bad_id,
        offset=-1,
    )
    return CheckIndexResult(
        ok=False,
        checked=1,
        mode="sample",
        threshold=0.999,
        min_cosine=0.1,
        median_cosine=0.1,
        below_threshold=1,
        chunks=[chunk],
        findings=[Finding("shift", "error", f"offset -1 from {bad_id}")],
        counts={"ok": 0, "shift": 1},
        diagnosis_embeddings=0,
        manifest={"embedding": {"requests": 2, "tokens": 9}, "wall_seconds": 1.25},
    )


def test_check_index_terminal_summary_is_escaped_and_complete() -> None:
    console = _console()
    render(terminal(sections_of_result(_planted(HOSTILE))), console)
    out = _text(console)
    assert "[bold red]boom[/bold red]" in out  # shown as text, never applied
    assert "\\x1b[2J" in out and "\x1b" not in out  # control characters shown, not sent
    assert "chunks under 0.999 or without a usable vector" in out
    assert "error shift: offset -1 from" in out
    # issue 17 item 6: the verdict line counts what failed ("0/1 at >=" read as 0 failures)
    assert " ".join(out.split()).endswith(
        "FAIL 1 of 1 sampled chunks below cosine 0.999 or without a usable vector (0 pass); "
        "min 0.1000, median 0.1000; 2 embedding requests, 9 tokens, 1.2s"
    )


def test_terminal_renderer_styles_badges_and_verdict_cells() -> None:
    console = Console(record=True, width=120, force_terminal=True, color_system="standard")
    sec = Section("", "PASS", [Table(["gate", "verdict"], [["g", V("BLOCK")]]), Text("ok", "PASS")])
    render([sec], console)
    ansi = console.export_text(styles=True)
    assert "\x1b[1;31mBLOCK" in ansi and "\x1b[1;32mPASS" in ansi


# -- reports through the one Markdown path --------------------------------------------------


def test_compare_ann_and_diagnose_write_their_markdown_through_the_shared_renderer(
    small_kb: dict[str, Path], questions: Path, tmp_path: Path
) -> None:
    store = f"faiss:{small_kb['good']}"
    r = CliRunner().invoke(
        cli,
        [
            "compare-ann",
            "--store",
            store,
            "--queries",
            "10",
            "-k",
            "4",
            "--report",
            str(tmp_path / "a"),
        ],
    )
    assert r.exit_code == 0, r.output
    md = (tmp_path / "a" / "compare-ann.md").read_text()
    # a flat index searches exactly: the check cannot fail there, and says so
    assert md.startswith("# indexcheck compare-ann\n\n**Verdict: CANNOT_FAIL**")
    assert "## compare-ann: approximate vs exact search — CANNOT_FAIL" in md
    assert "![miss rate and recall against fetch depth](compare-ann.png)" in md
    assert (tmp_path / "a" / "compare-ann.png").stat().st_size > 1000
    r = CliRunner().invoke(
        cli,
        [
            "diagnose", "--store", store, "--questions", str(questions),
            "--chunks", str(small_kb["chunks"]), "--embedder", SPEC, "-k", "4",
            "--report", str(tmp_path / "d"),
        ],
    )  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    md = (tmp_path / "d" / "diagnose.md").read_text()
    assert "## diagnose: where each question's chunk was lost" in md
    assert "## diagnose: manifest" in md and "| label | questions | examples |" in md


# -- the manifest, stamped once -------------------------------------------------------------


def test_probe_scale_core_returns_facts_and_the_api_stamps(small_kb: dict[str, Path]) -> None:
    from indexcheck.commands.probe_scale import probe_scale as core_probe

    store = indexcheck.open_store(f"faiss:{small_kb['good']}")
    try:
        raw = core_probe(store, probes=4, k=4, seed=3)
    finally:
        store.close()
    assert raw.manifest == {} and raw.manifest_facts["probes"] == 4
    assert "manifest_facts" not in raw.to_dict()
    stamped = indexcheck.probe_scale(f"faiss:{small_kb['good']}", probes=4, k=4, seed=3)
    m = stamped.manifest
    assert (m["command"], m["seed"], m["probes"], m["k"]) == ("probe-scale", 3, 4, 4)
    assert m["index_fingerprint"] and m["store"]["backend"] == "faiss"


def test_api_stamps_every_command(small_kb: dict[str, Path]) -> None:
    result = indexcheck.check_index(f"faiss:{small_kb['good']}", small_kb["chunks"], SPEC, seed=1)
    m = result.manifest
    assert (m["command"], m["seed"], m["embedder"]["model_id"]) == (
        "check-index",
        1,
        HashEmbedder(32).model_id,
    )
    assert m["embedding"]["requests"] > 0 and m["wall_seconds"] >= 0


def test_stamp_fills_ci_checks_from_the_facts_core_returned() -> None:
    class Fake:
        manifest: dict[str, Any] = {}
        results = {"check-index": {"ok": True}, "probe-scale": {"ok": True}}
        manifest_facts = {
            "seed": 0,
            "fingerprint": "f",
            "config": "ci.toml",
            "baseline": None,
            "checks": {
                "check-index": {"seed": 0, "fingerprint": "f", "wall_seconds": 2.0},
                "probe-scale": {"probes": 4, "wall_seconds": 0.5, "with_embedder": False},
            },
        }

    fake = Fake()
    stamp(fake, Run("ci"), None, HashEmbedder(8), extra="x")
    assert fake.manifest["seconds_by_check"] == {"check-index": 2.0, "probe-scale": 0.5}
    assert fake.manifest["extra"] == "x" and fake.manifest["config"] == "ci.toml"
    assert fake.results["check-index"]["manifest"]["wall_seconds"] == 2.0
    assert "embedder" in fake.results["check-index"]["manifest"]
    probe = fake.results["probe-scale"]["manifest"]
    assert probe["probes"] == 4 and "embedder" not in probe


# -- finish stays compatible with results that give only to_dict ----------------------------


def test_finish_still_renders_a_result_without_sections() -> None:
    import click

    from indexcheck.cli.finish import finish

    class Plain:
        ok = True
        manifest: dict[str, Any] = {}

        def to_dict(self) -> dict[str, Any]:
            return {"manifest": self.manifest, "n": 1}

    @click.command()
    @click.pass_context
    def cmd(ctx: click.Context) -> None:
        def say(result: Plain, console: Console) -> None:
            console.print(f"n={result.to_dict()['n']}")

        ctx.exit(finish(ctx, Plain(), json_path=None, render=say))

    r = CliRunner().invoke(cmd, [])
    assert (r.exit_code, r.stdout) == (0, "n=1\n")


def test_embed_and_convert_threshold_print_through_sections(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["convert-threshold", "0.5", "--from", "cos", "--to", "1-cos"])
    assert r.exit_code == 0
    assert r.stdout == "0.5 on cos (keep scores >= 0.5) = 0.5 on 1-cos (keep scores <= 0.5)\n"
    chunks = tmp_path / "c.jsonl"
    chunks.write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "one"}\n')
    out = tmp_path / "v.npz"
    r = CliRunner().invoke(
        cli, ["embed", "--chunks", str(chunks), "--embedder", SPEC, "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(
        f"embedded 2 chunks (1 distinct texts) with {HashEmbedder(32).model_id} in 1 requests"
    )


def test_plot_blocks_are_drawn_only_in_the_report_layer(tmp_path: Path) -> None:
    from indexcheck.output.render.figures import Figures

    sec = Section(
        "s",
        None,
        [
            Plot(
                "diagnose-labels",
                {"counts": {"OK": 3, "ANN_MISS": 1, "RANKED_OUT": 2}, "good": ["OK"], "k": 4},
                "d",
                "alt",
            )
        ],
    )
    (drawn,) = Figures(tmp_path, numbered=False).draw([sec])
    assert [type(b).__name__ for b in drawn.blocks] == ["Image"]
    assert (tmp_path / "d.png").is_file() and drawn.blocks[0].alt == "alt"
