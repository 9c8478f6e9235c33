"""The pytest plugin and the assertions, run by pytester on small real FAISS folders.

Each inner run loads the plugin with ``-p indexcheck.cli.pytest_plugin`` and no other plugin:
the same module the ``pytest11`` entry point names (checked against pyproject.toml), which
a fresh install registers for every run.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import faiss  # noqa: F401  (see below)
import numpy as np
import numpy.random  # noqa: F401
import pytest

# pytester drops from sys.modules what a test (or an in-process run) imported first, and a
# SWIG or Cython extension imported a second time crashes the interpreter: import here,
# before any pytester snapshot, everything the inner runs use.
import indexcheck.api  # noqa: F401
import indexcheck.cli.app  # noqa: F401
import indexcheck.commands.check_index  # noqa: F401
import indexcheck.commands.compare_ann  # noqa: F401
import indexcheck.commands.judge  # noqa: F401
import indexcheck.commands.sweep_threshold  # noqa: F401
import indexcheck.testing.assertions  # noqa: F401  # noqa: F401
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, positional_cache_bug

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "indexcheck.cli.pytest_plugin"
HASH32 = "py:indexcheck.testing:HASH32"

ALIGNED = """
from indexcheck.testing import assert_index_aligned

def test_aligned(indexcheck_store, indexcheck_embedder):
    result = assert_index_aligned(indexcheck_store, "chunks.jsonl", embedder=indexcheck_embedder)
    assert result.checked == 100
"""


@pytest.fixture
def kb(pytester: pytest.Pytester) -> dict[str, str]:
    """chunks.jsonl and questions in the run folder, and FAISS folders: good, buggy (the
    positional cache bug) and an IVF index searched with nprobe 1 (misses)."""
    ids = [f"note{i // 30}#sec-{i:03d}" for i in range(120)]
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(120)]
    texts[33] = texts[4]
    texts[70] = texts[8]
    rows = [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    folder = pytester.path
    (folder / "chunks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fresh = HashEmbedder(32).embed(texts)
    write_faiss_folder(folder / "good", ids, fresh)
    write_faiss_folder(folder / "buggy", ids, positional_cache_bug(texts, fresh))
    rng = np.random.default_rng(0)
    many = rng.standard_normal((2000, 32)).astype(np.float32)
    many /= np.linalg.norm(many, axis=1, keepdims=True)
    write_faiss_folder(
        folder / "ivf", [f"c{i}" for i in range(2000)], many, None, "ip", "IVF32,Flat"
    )
    in_scope = [{"id": f"q{i}", "question": texts[i], "expected": [ids[i]]} for i in range(12)]
    off = [{"id": f"o{i}", "question": f"unrelated {i} zebra", "in_scope": False} for i in range(4)]
    # "out-of-scope" questions the KB answers word for word: no threshold can separate them
    answered = [{"id": f"o{i}", "question": texts[50 + i], "in_scope": False} for i in range(4)]
    for name, qs in (("questions.jsonl", in_scope + off), ("overlap.jsonl", in_scope + answered)):
        (folder / name).write_text("".join(json.dumps(q) + "\n" for q in qs))
    return {name: f"faiss:{folder / name}" for name in ("good", "buggy", "ivf")}


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """A run in a child process with only this plugin (no other installed plugin autoloads).

    Not in process: pytester then drops every module the inner run imported first, and a
    later test in this session meets a second copy of a class (LangChain's InMemoryDocstore
    could no longer be pickled by FAISS.save_local in tests/test_traces.py)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        mp.setenv("COLUMNS", "200")  # the short summary line is not cut
        return pytester.runpytest_subprocess(
            "-p", PLUGIN, "-p", "no:cacheprovider", "-ra", *args, timeout=300
        )


def readme_test_index() -> str:
    """The ``test_index.py`` of the README's pytest section, exactly as shown."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Testing your index in pytest", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None, "the README's pytest section has no python block"
    assert block.group(1).startswith("# test_index.py")
    return block.group(1)


def test_the_entry_point_names_the_plugin_module() -> None:
    """pyproject declares the plugin under pytest11, so a fresh install registers it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["pytest11"] == {"indexcheck": PLUGIN}


@pytest.mark.parametrize("module", [PLUGIN, "indexcheck.cli.pytest_plugin"])
def test_the_entry_point_loads_the_plugin_and_no_indexcheck_turns_it_off(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    """A fresh install's pytest11 entry point (a dist-info naming the module, as pip writes
    it) registers the plugin in a plain ``pytest`` run; ``-p no:indexcheck`` removes it.
    An install made before the plugin moved under cli/ names its former module, which still
    loads it."""
    site = pytester.mkdir("site")
    dist = site / "indexcheck_entry-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: indexcheck-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[pytest11]\nindexcheck = {module}\n")
    path = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in path if p))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("INDEXCHECK_STORE", raising=False)
    pytester.makepyfile(test_index="def test_store(indexcheck_store):\n    pass\n")
    on = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    on.assert_outcomes(errors=1)
    on.stdout.fnmatch_lines(["*no index configured for indexcheck*"])
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:indexcheck")
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'indexcheck_store' not found*"])


def test_a_clean_index_passes_and_returns_the_result(
    pytester: pytest.Pytester, kb: dict[str, str]
) -> None:
    pytester.makepyfile(test_index=ALIGNED)
    result = run(pytester, "--indexcheck-store", kb["good"], "--indexcheck-embedder", HASH32)
    result.assert_outcomes(passed=1)


def test_a_shifted_index_fails_naming_the_shift(
    pytester: pytest.Pytester, kb: dict[str, str]
) -> None:
    """The failure is the check's summary, root finding first, in plain text."""
    pytester.makepyfile(test_index=ALIGNED)
    result = run(pytester, "--indexcheck-store", kb["buggy"], "--indexcheck-embedder", HASH32)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    # issue 17: one positional shift told as one root finding; the verdict counts failures
    first = (
        r"E\s+indexcheck\.testing\.IndexcheckAssertionError: indexcheck check-index failed: "
        r"shift: one positional shift from 'note1#sec-034' \(position 34\) on"
    )
    assert re.search(first, out), out
    assert "without advancing its position into the fresh" in out
    flat = " ".join(out.split())
    assert "FAIL 75 of 100 sampled chunks below cosine 0.999" in flat  # the verdict line
    assert "note1#sec-033" in out  # the table of shifted chunks, as the CLI prints it
    assert "assert False" not in out and "\x1b[" not in out  # no bare assert, no colour
    short = [line for line in result.outlines if line.startswith("FAILED test_index.py")]
    assert short and "check-index failed: shift: one positional shift from" in short[0]


def test_the_readme_test_index_runs(pytester: pytest.Pytester, kb: dict[str, str]) -> None:
    pytester.makepyfile(test_index=readme_test_index())
    good = run(pytester, "--indexcheck-store", kb["good"], "--indexcheck-embedder", HASH32)
    good.assert_outcomes(passed=3)
    bad = run(pytester, "--indexcheck-store", kb["buggy"], "--indexcheck-embedder", HASH32)
    bad.assert_outcomes(passed=2, failed=1)
    assert "check-index failed: shift: one positional shift from" in bad.stdout.str()


def test_no_store_configured_fails_saying_how(
    pytester: pytest.Pytester, kb: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forgotten --indexcheck-store must not turn CI green: the test errors, saying how."""
    monkeypatch.delenv("INDEXCHECK_STORE", raising=False)
    monkeypatch.delenv("INDEXCHECK_EMBEDDER", raising=False)
    monkeypatch.delenv("INDEXCHECK_SKIP_WITHOUT_STORE", raising=False)
    pytester.makepyfile(test_index=ALIGNED)
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no index configured for indexcheck: pass --indexcheck-store*"])
    result.stdout.fnmatch_lines(["*indexcheck_skip_without_store*"])  # and how to opt out


def test_a_local_run_can_opt_out_of_failing_without_a_store(
    pytester: pytest.Pytester, kb: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INDEXCHECK_STORE", raising=False)
    monkeypatch.delenv("INDEXCHECK_SKIP_WITHOUT_STORE", raising=False)
    pytester.makepyfile(test_index=ALIGNED)
    run(pytester, "-o", "indexcheck_skip_without_store=true").assert_outcomes(skipped=1)
    monkeypatch.setenv("INDEXCHECK_SKIP_WITHOUT_STORE", "1")
    skipped = run(pytester)
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*no index configured for indexcheck*"])


def test_the_store_comes_from_the_environment_then_indexcheck_toml(
    pytester: pytest.Pytester, kb: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Option, then INDEXCHECK_STORE / INDEXCHECK_EMBEDDER, then indexcheck.toml, as the CLI."""
    pytester.makepyfile(test_index=ALIGNED)
    monkeypatch.setenv("INDEXCHECK_STORE", kb["buggy"])
    monkeypatch.setenv("INDEXCHECK_EMBEDDER", HASH32)
    run(pytester).assert_outcomes(failed=1)
    run(pytester, "--indexcheck-store", kb["good"]).assert_outcomes(passed=1)
    monkeypatch.delenv("INDEXCHECK_STORE")
    monkeypatch.delenv("INDEXCHECK_EMBEDDER")
    toml = f'[defaults]\nstore = "{kb["good"]}"\nembedder = "{HASH32}"\n'
    (pytester.path / "indexcheck.toml").write_text(toml)
    run(pytester).assert_outcomes(passed=1)


def test_a_bad_indexcheck_toml_fails_with_the_cli_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INDEXCHECK_STORE", raising=False)
    (pytester.path / "indexcheck.toml").write_text('[defaults]\nstor = "faiss:./x"\n')
    pytester.makepyfile(test_index=ALIGNED)
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown key 'stor' in [[]defaults[]] of *did you mean store?*"])


def test_a_bad_spec_fails_the_fixture_naming_where_it_came_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_index=ALIGNED)
    monkeypatch.setenv("INDEXCHECK_STORE", "nosuch:./x")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*indexcheck: cannot open the store nosuch:./x (from INDEXCHECK_STORE): unknown store*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(
        ["indexcheck:*", "*--indexcheck-store=SPEC*", "*--indexcheck-embedder=SPEC*",
         "*--indexcheck-trust-pickle*"]
    )  # fmt: skip


ANN = """
from indexcheck.testing import assert_no_ann_miss

def test_ann(indexcheck_store):
    result = assert_no_ann_miss(indexcheck_store, k=4, fetch=4, target=0.01, queries=100)
    assert result.recommended_fetch == 4
"""


def test_ann_assertion_passes_on_exact_search_and_fails_on_a_starved_ivf(
    pytester: pytest.Pytester, kb: dict[str, str]
) -> None:
    pytester.makepyfile(test_ann=ANN)
    run(pytester, "--indexcheck-store", kb["good"]).assert_outcomes(passed=1)
    bad = run(pytester, "--indexcheck-store", kb["ivf"])
    bad.assert_outcomes(failed=1)
    out = bad.stdout.str()
    assert (
        "IndexcheckAssertionError: indexcheck compare-ann failed: none of the fetch depths "
        "tried (4) brings the best-chunk miss rate to 1%"
    ) in out
    assert "the lowest is 54% at fetch 4: fetch deeper or raise" in out  # and how to fix it
    assert "best-chunk miss" in out  # the per-depth table


THRESHOLD = """
from indexcheck.testing import assert_threshold_separates

def test_threshold(indexcheck_store, indexcheck_embedder):
    result = assert_threshold_separates(
        indexcheck_store, "{questions}", embedder=indexcheck_embedder, recall=0.95
    )
    assert result.separable
"""


def test_threshold_assertion_passes_when_separable_and_fails_on_overlap(
    pytester: pytest.Pytester, kb: dict[str, str]
) -> None:
    args = ("--indexcheck-store", kb["good"], "--indexcheck-embedder", HASH32)
    pytester.makepyfile(test_threshold=THRESHOLD.format(questions="questions.jsonl"))
    run(pytester, *args).assert_outcomes(passed=1)
    pytester.makepyfile(test_threshold=THRESHOLD.format(questions="overlap.jsonl"))
    bad = run(pytester, *args)
    bad.assert_outcomes(failed=1)
    out = bad.stdout.str()
    assert "indexcheck sweep-threshold failed: recommended threshold" in out
    assert "the populations overlap: no threshold separates them" in out
    assert "overlap: in-scope q0" in out


JUDGE = """
def judge(question, context, answer):
    if "free drinks" in answer:
        return {"claims": [{"claim": answer, "verdict": "UNSUPPORTED", "evidence_span": "",
                            "rationale": "not in the context"}]}
    return {"claims": [{"claim": answer, "verdict": "SUPPORTED",
                        "evidence_span": context.split(".")[0], "rationale": "-"}]}
"""

GROUNDED = """
from indexcheck.testing import assert_grounded

def test_grounded():
    result = assert_grounded("answers.jsonl", judge="py:answer_judge:judge")
    assert result.supported_rate["value"] == 1.0
"""


def test_grounded_assertion_names_the_unsupported_claim(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert()
    pytester.makepyfile(answer_judge=JUDGE, test_grounded=GROUNDED)
    context = [{"id": "hours#weekdays", "text": "The library opens at 9. It closes at 18."}]
    good = {"id": "a1", "question": "When?", "answer": "It opens at 9.", "contexts": context}
    bad = {**good, "id": "a2", "answer": "Members get free drinks."}
    answers = pytester.path / "answers.jsonl"
    answers.write_text(json.dumps(good) + "\n")
    run(pytester).assert_outcomes(passed=1)
    answers.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert (
        "indexcheck judge failed: answer a2: claim 'Members get free drinks.' is UNSUPPORTED"
    ) in out
    assert "supported rate 1/2" in out


def test_the_plugin_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    """Loading the plugin (as every run of a project with indexcheck installed does) pulls
    in neither numpy nor rich nor the CLI."""
    probe = (
        "import sys, indexcheck.cli.pytest_plugin\n"
        "names = ('numpy', 'rich', 'click', 'faiss', 'indexcheck.api')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = pytester.run(os.environ.get("PYTHON", __import__("sys").executable), "-c", probe)
    assert "HEAVY []" in result.stdout.str()


def test_the_assertions_from_python_return_or_carry_the_result(
    small_kb: dict[str, Path],
) -> None:
    """Outside pytest too: a pass returns the result; a failure is an AssertionError
    carrying it, whose text starts with the root finding and has no colour codes."""
    from indexcheck.testing import IndexcheckAssertionError, assert_index_aligned

    good = assert_index_aligned(f"faiss:{small_kb['good']}", small_kb["chunks"], embedder=HASH32)
    assert good.ok and good.checked == 100
    with pytest.raises(AssertionError) as caught:
        assert_index_aligned(
            f"faiss:{small_kb['buggy']}", small_kb["chunks"], embedder=HASH32, sample=None
        )
    exc = caught.value
    assert isinstance(exc, IndexcheckAssertionError) and exc.result.ok is False
    text = str(exc)
    assert text.startswith(
        "indexcheck check-index failed: shift: one positional shift from 'note1#sec-034'"
    )
    # the verdict line ends the text (it now counts the failures, and wraps onto 2 lines)
    assert "\x1b[" not in text and "FAIL " in " ".join(text.splitlines()[-2:])


def test_the_assertions_are_named_by_their_public_path() -> None:
    """``indexcheck.testing`` names the very objects of :mod:`indexcheck.testing.assertions`,
    and a failure names its class by that public path."""
    import indexcheck.testing as testing
    from indexcheck.testing import assertions

    for name in assertions.__all__:
        assert getattr(testing, name) is getattr(assertions, name), name
    assert set(assertions.__all__) <= set(testing.__all__)
    assert testing.IndexcheckAssertionError.__module__ == "indexcheck.testing"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        testing.nope  # noqa: B018


def test_the_default_sample_checks_a_smaller_index_whole(tmp_path: Path) -> None:
    """assert_index_aligned's default sample (100) on a 40-chunk index checks the 40 chunks:
    it used to raise "--sample 100 is larger than the corpus (40 chunks); use --sample 40 or
    --all", a CLI flag in a Python test. An explicit sample still refuses in check_index."""
    from indexcheck import check_index
    from indexcheck.errors import SampleTooLargeError
    from indexcheck.testing import assert_index_aligned

    ids = [f"c{i}" for i in range(40)]
    texts = [f"Fact {i} about subject {i % 7}." for i in range(40)]
    chunks = tmp_path / "chunks.jsonl"
    rows = zip(ids, texts, strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    write_faiss_folder(tmp_path / "idx", ids, HashEmbedder(32).embed(texts))
    result = assert_index_aligned(f"faiss:{tmp_path / 'idx'}", chunks, embedder=HASH32)
    assert result.ok and result.checked == 40
    with pytest.raises(SampleTooLargeError, match="use --sample 40 or --all"):
        check_index(f"faiss:{tmp_path / 'idx'}", chunks, HASH32, sample=100)
