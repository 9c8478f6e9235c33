"""Every command's ``--report DIR`` writes ``NAME.html`` beside ``NAME.md``: self-contained,
the verdict and the root cause in its first lines, then the rows to act on; data from the
index (chunk ids and texts, questions, answers) is text, never markup. The pages are opened
in one headless Chromium and the first viewport of each is checked on its screenshot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, positional_cache_bug
from tests.browser_support import needs_browser, screenshot
from tests.builders import rag_pipeline as rp
from tests.emulators.mistral_emulator import MistralEmulator
from tests.emulators.rag_generator import RagGenerator

ROOT = Path(__file__).resolve().parents[2]
EMB = ["--embedder", "py:indexcheck.testing:HASH32"]
#: data that would run or load something if a page let it through as markup
SCRIPT, IMG = "<script>alert(1)</script>", "<img src=x onerror=alert(2)>"
ESCAPED = ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;")
VIEWPORT = (1280, 720)
#: the banner's background per verdict (html.CSS: .b-PASS, .b-FAIL, ...)
BANNER = {
    "PASS": (0xDA, 0xFB, 0xE1),
    "FAIL": (0xFF, 0xEB, 0xE9),
    "BLOCK": (0xFF, 0xEB, 0xE9),
    "INSUFFICIENT_EVIDENCE": (0xFF, 0xF8, 0xC5),
    "CANNOT_FAIL": (0xFF, 0xF8, 0xC5),
}


def _kb(root: Path) -> dict[str, Path]:
    """60 chunks, two of them hostile (a script, an image with onerror) and one with a
    hostile id; a correct FAISS folder and one with the positional-cache bug; questions
    (each a chunk's text, one of them hostile) and answers."""
    ids = [f"note{i // 20}#sec-{i:03d}" for i in range(60)]
    ids[41] = f"sec-41{IMG}"
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(60)]
    texts[40] = f"Section 40. {SCRIPT} fact forty."
    texts[42] = f"Section 42. {IMG} fact forty-two."
    texts[33] = texts[4]  # the repeat the positional cache skips: every later vector moves
    fresh = HashEmbedder(32).embed(texts)
    write_faiss_folder(root / "good", ids, fresh)
    write_faiss_folder(root / "buggy", ids, positional_cache_bug(texts, fresh))
    chunks = root / "chunks.jsonl"
    pairs = zip(ids, texts, strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in pairs))
    qs = [{"id": f"q{i}", "question": texts[i], "expected": [ids[i]]}
          for i in (*range(9), 40, 41, 42)]  # fmt: skip
    qs += [{"id": f"o{i}{SCRIPT}", "question": f"unrelated {i} zebra", "in_scope": False}
           for i in range(3)]  # fmt: skip
    questions = root / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in qs))
    answers = root / "answers.jsonl"
    fixture = (ROOT / "fixtures" / "judge" / "answers.jsonl").read_text(encoding="utf-8")
    hostile = {
        "id": f"a{IMG}",
        "question": f"What is fact 3? {SCRIPT}",
        "answer": f"Fact number 3 is {SCRIPT} in section 3 of {IMG}, see 42%.",
        "contexts": [{"id": ids[40], "text": texts[40]}],
    }
    answers.write_text(fixture + json.dumps(hostile) + "\n", encoding="utf-8")
    return {"root": root, "good": root / "good", "buggy": root / "buggy", "chunks": chunks,
            "questions": questions, "answers": answers}  # fmt: skip


def _ci_config(kb: dict[str, Path]) -> Path:
    cfg = kb["root"] / "indexcheck.toml"
    cfg.write_text(
        f'[ci]\nstore = "faiss:{kb["buggy"]}"\nembedder = "py:indexcheck.testing:HASH32"\n'
        f'chunks = "{kb["chunks"]}"\nmin-questions = 5\n\n'
        "[ci.check-index]\nsample = 30\n\n[ci.probe-scale]\n\n"
        "[ci.compare-ann]\nqueries = 20\nk = 4\nfetch = [4, 10]\nat-fetch = 10\n\n"
        f'[ci.diagnose]\nquestions = "{kb["questions"]}"\nk = 4\nfetch = 10\n'
    )
    return cfg


def _commands(kb: dict[str, Path], app: dict[str, str]) -> dict[str, list[str]]:
    """Every command with --report, on the small KB: page name -> CLI arguments."""
    good, buggy, chunks = f"faiss:{kb['good']}", f"faiss:{kb['buggy']}", str(kb["chunks"])
    questions = str(kb["questions"])
    return {
        "check-index": ["check-index", "--store", buggy, "--chunks", chunks, *EMB, "--all"],
        "probe-scale": ["probe-scale", "--store", good, "--probes", "4", "--no-cache"],
        "sweep-threshold": [
            "sweep-threshold", "--store", good, "--questions", questions, *EMB, "-k", "4",
            "--fetch", "10",
        ],
        "compare-ann": ["compare-ann", "--store", good, "-k", "4", "--fetch", "4,10",
                        "--queries", "20"],
        "diagnose": ["diagnose", "--store", buggy, "--questions", questions, "--chunks", chunks,
                     *EMB, "-k", "4", "--fetch", "10"],
        "diagnose-system": [
            "diagnose", "--system", "py:tests.builders.rag_pipeline:APP", "--store",
            app["store"], "--trust-pickle", "--embedder", rp.EMBEDDER_SPEC, "--questions",
            app["questions"], "--chunks", str(rp.CHUNKS), "--runs", "1",
        ],
        "diff-index": ["diff-index", "--old", good, "--new", buggy, "--chunks-old", chunks,
                       "--chunks-new", chunks],
        "check-answers": ["check-answers", "--answers", str(kb["answers"]), "--chunks", chunks],
        "judge": ["judge", "--answers", str(kb["answers"]), "--judge",
                  "py:tests.judge_hook:fixture_judge", "--allow-unjudged"],
        "ci": ["ci", "--config", str(_ci_config(kb))],
        "repair": ["repair", "--store", buggy, "--chunks", chunks, *EMB, "--out",
                   str(kb["root"] / "repaired")],
    }  # fmt: skip


#: the page each run writes (NAME.html beside NAME.md), when it is not the command's name
PAGE = {"ci": "report", "diagnose-system": "diagnose"}


@pytest.fixture(scope="module")
def rag_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """diagnose --system's LangChain application over the loopback chat emulator."""
    tmp = tmp_path_factory.mktemp("rag")
    spec = rp.build_index(tmp / "kb")
    with MistralEmulator(api_key="sk-rag-test-71a0") as emu, pytest.MonkeyPatch.context() as mp:
        emu.chat = RagGenerator(rp.generator_script())
        mp.setenv("OPENAI_API_KEY", "sk-rag-test-71a0")
        mp.setenv("RAG_CHAT_URL", f"{emu.url}/v1")
        mp.setenv("RAG_MODEL", "rag-gen-1")
        mp.setenv("RAG_INDEX", str(tmp / "kb"))
        rp.APP.retrievals = 0
        yield {"store": spec, "questions": str(rp.questions_file(tmp / "q.jsonl"))}


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, rag_app: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Each command run once through the CLI with --report and --json: its exit code, its
    JSON and its report folder."""
    root = tmp_path_factory.mktemp("kb")
    kb = _kb(root)
    out: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INDEXCHECK_CACHE_DIR", str(root / "cache"))
        mp.setenv("INDEXCHECK_QUIET", "1")
        mp.chdir(root)
        for case, args in _commands(kb, rag_app).items():
            rep, js = root / "rep" / case, root / f"{case}.json"
            r = CliRunner().invoke(cli, [*args, "--report", str(rep), "--json", str(js)])
            assert r.exit_code in (0, 1), (case, r.output)
            name = PAGE.get(case, args[0])
            out[case] = {"code": r.exit_code, "json": json.loads(js.read_text()), "dir": rep,
                         "html": rep / f"{name}.html", "md": rep / f"{name}.md"}  # fmt: skip
    return out


class _Tags(HTMLParser):
    """Every tag and attribute of a page, for the self-containment and escaping checks."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.tags


def _verdict(run: dict[str, Any]) -> str:
    """The verdict the page must lead with, from the command's own JSON."""
    payload = run["json"]
    if "gates" in payload:
        return "PASS" if payload["ok"] else "BLOCK"
    said = payload.get("verdict")  # compare-ann's CANNOT_FAIL, INSUFFICIENT_EVIDENCE...
    return said if said in BANNER else "PASS" if payload["ok"] else "FAIL"


def test_every_command_writes_an_html_page_beside_its_markdown(
    runs: dict[str, dict[str, Any]],
) -> None:
    for case, run in runs.items():
        html, md = run["html"], run["md"]
        assert html.is_file() and md.is_file(), case
        if "report" in run["json"]:  # the JSON lists the files it wrote, the HTML first
            assert run["json"]["report"][:2] == [str(html), str(md)], case
        text = html.read_text(encoding="utf-8")
        tags = _tags(text)
        # self-contained: inline CSS, plots as data: URIs, no script, and a CSP that
        # forbids any request the browser might still try
        links = [v or "" for _, a in tags for k, v in a.items() if k in ("src", "href")]
        assert all(v.startswith(("#", "data:image/png;base64,")) for v in links), case
        assert not any(t in ("script", "link", "iframe", "object") for t, _ in tags), case
        assert "default-src 'none'" in text and "url(" not in text, case
        # the verdict and the root cause first: the banner right under the title, the
        # lead line under it, then the summary's rows before the detailed sections
        verdict = _verdict(run)
        shown = [(t, a) for t, a in tags if t not in ("html", "head", "meta", "title", "style")]
        assert [t for t, _ in shown[:4]] == ["body", "main", "h1", "div"], (case, shown[:6])
        assert f'<div class="banner b-{verdict}">Verdict: {verdict}</div>' in text, case
        assert shown[4] == ("p", {"class": "lead"}), (case, shown[4])
        first = re.search(r'<h2 id="s1">([^<]*)', text)
        if case != "judge":  # judge's rows are its claims tables, first
            assert first and first.group(1) == "summary: what to act on", case
        lines = md.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# indexcheck ") and lines[2] == f"**Verdict: {verdict}**"
        assert lines[4] and not lines[4].startswith("|"), case  # the lead line


def test_the_lead_line_names_the_root_cause(runs: dict[str, dict[str, Any]]) -> None:
    """Under the verdict, the first finding's first sentence: the misalignment's kind,
    start and fix for the index with the positional-cache bug."""
    lead = {
        case: re.search(r'<p class="lead">(.*?)</p>', run["html"].read_text()).group(1)
        for case, run in runs.items()
    }
    assert lead["check-index"].startswith("error: shift: one positional shift from")
    assert "repair --store" in lead["check-index"]
    assert lead["diff-index"].startswith("error: shift: ")
    assert lead["compare-ann"].startswith("the check cannot fail here")
    assert "claims not supported" in lead["judge"]
    assert lead["ci"].startswith("BLOCK: ")
    md = runs["check-index"]["md"].read_text().splitlines()
    assert md[2] == "**Verdict: FAIL**" and "one positional shift from" in md[4]


def test_data_is_never_markup_on_any_page(runs: dict[str, dict[str, Any]]) -> None:
    """Chunk ids and texts, question ids, answers holding a script and an image with an
    onerror handler appear escaped, as text, on every page that shows them."""
    shown = set()
    for case, run in runs.items():
        text = run["html"].read_text(encoding="utf-8")
        assert SCRIPT not in text and IMG not in text, case
        assert not any("onerror" in a for _, a in _tags(text)), case
        assert not any(t == "img" and not (a.get("src") or "").startswith("data:image/png")
                       for t, a in _tags(text)), case  # fmt: skip
        if any(e in text for e in ESCAPED):
            shown.add(case)
        md = run["md"].read_text(encoding="utf-8")
        assert SCRIPT not in md and IMG not in md, case
    # every page of a command that was handed the hostile data shows it, escaped (probe-scale
    # and compare-ann read vectors only)
    assert shown >= set(runs) - {"diagnose-system", "compare-ann", "probe-scale"}, sorted(shown)


def _first_viewports(pages: list[Path], tmp: Path) -> list[np.ndarray]:
    """The first viewport (VIEWPORT) of each page, from ONE headless Chromium: a sheet of
    iframes, each the size of a browser window, screenshotted once."""
    w, h = VIEWPORT
    frames = "".join(
        f'<iframe src="{p.resolve().as_uri()}" width="{w}" height="{h}" '
        'style="display:block;border:0;margin:0"></iframe>'
        for p in pages
    )
    sheet = tmp / "sheet.html"
    sheet.write_text(f"<!DOCTYPE html><html><body style='margin:0'>{frames}</body></html>")
    img = screenshot(sheet, (w, h * len(pages)), tmp)
    return [img[i * h : (i + 1) * h] for i in range(len(pages))]


@needs_browser
def test_the_verdict_is_in_the_first_viewport_of_every_page(
    runs: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Each page in headless Chromium: its first viewport shows the verdict banner, in the
    verdict's colour, across the page (the banner text is checked on the page itself)."""
    cases = sorted(runs)
    shots = _first_viewports([runs[c]["html"] for c in cases], tmp_path)
    for case, px in zip(cases, shots, strict=True):
        verdict = _verdict(runs[case])
        assert f"Verdict: {verdict}</div>" in runs[case]["html"].read_text(), case
        flat = px.reshape(-1, 3)
        assert flat.std() > 20, case  # not blank: text, tables
        banner = np.abs(px - np.asarray(BANNER[verdict])).sum(axis=2) < 30
        rows = np.flatnonzero(banner.sum(axis=1) > 600)  # lines the banner spans across
        assert len(rows) >= 30, (case, verdict, len(rows))  # a banner, not a badge
        assert rows[0] < 200, (case, rows[0])  # at the top, under the title
