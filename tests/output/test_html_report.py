"""The report: one self-contained HTML page (plus Markdown) from every kind of result,
rendered by a real headless Chromium and checked on its screenshot."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.api import run_ci
from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.ci import CiConfig
from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann, sample_queries
from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
from indexcheck.inputs.corpus import load_chunks
from indexcheck.inputs.questions import load_questions
from indexcheck.output.render.html import kind_of, write_report
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.browser_support import needs_browser, screenshot
from tests.commands.ci.test_gates import make_kb, write_config

VOID = {"meta", "img", "br", "hr", "link", "input"}
PLOT_COLOURS = np.asarray([[76, 114, 176], [221, 132, 82], [196, 78, 82], [85, 168, 104]])


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")


@pytest.fixture(scope="module")
def payloads(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A ci result that blocks a regressed reindex against its baseline, and the
    standalone result of every other command, each through JSON as --json writes it."""
    root = tmp_path_factory.mktemp("kb")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INDEXCHECK_CACHE_DIR", str(root / "cache"))
        return _payloads(make_kb(root))


@pytest.fixture(scope="module")
def report(payloads: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """report.html, report.md and the plots of every result, written once."""
    return write_report(payloads, tmp_path_factory.mktemp("rep"), title="indexcheck report")


def _payloads(kb: dict[str, Path]) -> list[dict[str, Any]]:
    good = CiConfig.from_toml(write_config(kb, "good"))
    baseline = json.loads(json.dumps(run_ci(good).to_dict()))
    ci = run_ci(CiConfig.from_toml(write_config(kb, "regressed")), baseline).to_dict()
    store = open_store(f"faiss:{kb['good']}")
    emb = HashEmbedder(32)
    corpus = load_chunks(kb["chunks"])
    questions = load_questions(kb["questions"])
    scale = probe_scale(store)
    results = [
        ci,
        check_index(CheckIndexSettings(sample=None), store, emb, corpus).to_dict(),
        scale.to_dict(),
        compare_ann(
            CompareAnnSettings(k=4, fetch=[4, 10]), store, sample_queries(store, 30)
        ).to_dict(),
        diagnose(DiagnoseSettings(threshold=0.9), store, emb, questions, corpus).to_dict(),
        sweep_threshold(
            SweepThresholdSettings(
                store,
                questions,
                higher_is_better=True,
                to_cosine=scale.to_cosine,
                scale={"transform": "dot"},
            ),
            store,
            emb,
            questions,
        ).to_dict(),
    ]
    return [json.loads(json.dumps(r, default=str)) for r in results]


class _Checker(HTMLParser):
    """Balanced tags, and every src/href attribute, for the self-containment check."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset", "poster"):
                self.links.append(value or "")
        if tag == "img":
            self.images.append(dict(attrs)["src"] or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()


def test_report_from_every_result_kind_is_self_contained(
    payloads: list[dict[str, Any]], report: list[Path]
) -> None:
    assert [kind_of(p) for p in payloads] == [
        "ci", "check-index", "probe-scale", "compare-ann", "diagnose", "sweep-threshold",
    ]  # fmt: skip
    files = report
    page, md = files[0], files[1]
    assert (page.name, md.name) == ("report.html", "report.md")
    text = page.read_text(encoding="utf-8")
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.stack == []
    # nothing outside the file: in-page anchors and inline PNGs only, and a CSP that
    # forbids any request the browser might still try
    assert all(v.startswith(("#", "data:image/png;base64,")) for v in checker.links)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "<script" not in text and "@import" not in text and "url(" not in text
    pngs = [p for p in files if p.suffix == ".png"]
    assert len(checker.images) == len(pngs) >= 10
    for src in checker.images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    # every verdict, the worst cases, the manifest
    assert 'class="banner b-BLOCK">Verdict: BLOCK' in text
    for title in (
        "ci: gates",
        "ci: against the baseline (non-inferiority)",
        "check-index: stored vectors vs fresh embeddings",
        "probe-scale: the store&#x27;s score formula",
        "compare-ann: approximate vs exact search",
        "diagnose: where each question&#x27;s chunk was lost",
        "sweep-threshold: refusal threshold",
    ):
        assert text.count(title) >= 2, title  # in the summary table and as a heading
    assert "questions that lost ground" in text and "<td>q26</td>" in text
    assert "worst chunks (lowest cosine first)" in text
    for field in ("index_fingerprint", "embedding.requests", "embedding.tokens", "seed",
                  "version", "wall_seconds", "time and embedding cost per check"):  # fmt: skip
        assert field in text, field
    markdown = md.read_text(encoding="utf-8")
    assert "## ci: against the baseline (non-inferiority) — BLOCK" in markdown
    for ref in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown):
        assert (md.parent / ref).is_file(), ref
    assert len(re.findall(r"!\[", markdown)) == len(pngs)


def test_ci_report_option_writes_html_and_markdown(tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    out = tmp_path / "ci.json"
    r = CliRunner().invoke(
        cli,
        ["ci", "--config", str(write_config(kb)), "--json", str(out), "--report",
         str(tmp_path / "rep")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    listed = json.loads(out.read_text())["report"]
    assert listed[:2] == [
        str(tmp_path / "rep" / "report.html"),
        str(tmp_path / "rep" / "report.md"),
    ]
    assert all(Path(p).is_file() for p in listed)
    assert "Verdict: PASS" in Path(listed[0]).read_text()


@needs_browser
def test_report_renders_in_headless_chromium(
    payloads: list[dict[str, Any]], tmp_path: Path
) -> None:
    page = write_report(payloads[:1], tmp_path / "rep", title="indexcheck ci")[0]  # ci --report
    img = screenshot(page, (1280, 2000), tmp_path)
    px = img.reshape(-1, 3)
    assert px.std() > 20  # not blank
    white = (px > 245).all(axis=1).mean()
    assert 0.3 < white < 0.98  # a page with text, tables and a plot on white
    near = lambda c: (np.abs(px - np.asarray(c)).sum(axis=1) < 30).sum()  # noqa: E731
    assert near((0xFF, 0xEB, 0xE9)) > 10_000  # the BLOCK banner
    assert near((0xDA, 0xFB, 0xE1)) > 200  # PASS badges of the checks that passed
    # pixels in the plots' colours: the inline base64 PNGs were decoded and drawn
    assert sum(int(near(c)) for c in PLOT_COLOURS) > 500
