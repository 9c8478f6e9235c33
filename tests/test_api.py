"""The public API: ``import indexcheck`` is light, and each function runs from specs or objects."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import indexcheck
from indexcheck.testing import HashEmbedder

SPEC = "py:indexcheck.testing:HASH32"


@pytest.fixture(autouse=True)
def _scale_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def questions(small_kb_questions: Path) -> Path:
    return small_kb_questions


def test_import_indexcheck_is_light() -> None:
    code = (
        "import sys, indexcheck; "
        "heavy = [m for m in ('numpy', 'click', 'rich', 'indexcheck.api', 'indexcheck.commands') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_resolve() -> None:
    for name in indexcheck.__all__:
        assert getattr(indexcheck, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = indexcheck.nope  # type: ignore[attr-defined]


def test_import_indexcheck_names_the_same_public_objects_as_before_the_house_move() -> None:
    """The package's public face is exactly these names, each the function or type users
    have called since before the modules moved into packages by idea."""
    assert indexcheck.__all__ == [
        "__version__",
        "check_answers",
        "check_index",
        "compare_ann",
        "diagnose",
        "diff_index",
        "embed",
        "generate_questions",
        "judge",
        "load_chunks",
        "load_questions",
        "open_embedder",
        "open_store",
        "probe_scale",
        "repair",
        "run_ci",
        "sweep_threshold",
    ]
    import indexcheck.api as api

    for name in indexcheck.__all__[1:]:
        assert callable(getattr(indexcheck, name)), name
    for name in ("check_answers", "check_index", "compare_ann", "diagnose", "diff_index"):
        assert getattr(indexcheck, name) is getattr(api, name)


def test_python_m_indexcheck_is_the_command_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "indexcheck", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("indexcheck, version ")


def test_check_index_from_specs_and_from_objects(small_kb: dict[str, Path]) -> None:
    good = indexcheck.check_index(
        f"faiss:{small_kb['good']}", small_kb["chunks"], SPEC, sample=None
    )
    assert good.ok and good.checked == 120
    store = indexcheck.open_store(f"faiss:{small_kb['buggy']}")
    try:
        chunks = indexcheck.load_chunks(small_kb["chunks"])
        bad = indexcheck.check_index(store, chunks, HashEmbedder(32), sample=None)
        assert not bad.ok
        store.info()  # a store the caller opened stays open
    finally:
        store.close()


def test_probe_scale_and_compare_ann(small_kb: dict[str, Path]) -> None:
    scale = indexcheck.probe_scale(f"faiss:{small_kb['good']}", probes=4, k=4)
    assert scale.ok and scale.transform == "dot"
    ann = indexcheck.compare_ann(f"faiss:{small_kb['good']}", 20, k=4, fetch=[4, 8])
    assert ann.ok and ann.queries == 20  # a flat index misses nothing
    vecs = HashEmbedder(32).embed(["Section 3. Fact number 3 about subject 3."])
    assert indexcheck.compare_ann(f"faiss:{small_kb['good']}", vecs, k=4).queries == 1


def test_sweep_threshold_and_diagnose(small_kb: dict[str, Path], questions: Path) -> None:
    store = f"faiss:{small_kb['good']}"
    sweep = indexcheck.sweep_threshold(store, questions, SPEC, k=4, fetch=8)
    assert sweep.in_scope == 12 and sweep.out_of_scope == 4
    qs = indexcheck.load_questions(questions)
    diag = indexcheck.diagnose(store, qs, small_kb["chunks"], indexcheck.open_embedder(SPEC), k=4)
    assert diag.counts["OK"] == 12


def test_open_embedder_gives_float32_rows() -> None:
    x = indexcheck.open_embedder(SPEC).embed(["a", "b"])
    assert x.dtype == np.float32 and x.shape == (2, 32)


def test_judge_from_a_spec_with_the_fixture_case() -> None:
    """``indexcheck.judge`` grades the fixture answers through a ``py:`` judge: counts per
    verdict, a never-NaN supported rate, the prompt version and the judge in the manifest."""
    result = indexcheck.judge("fixtures/judge/answers.jsonl", "py:tests.judge_hook:fixture_judge")
    assert result.manifest["command"] == "judge"
    assert result.manifest["prompt"]["version"] == result.prompt_version
    rate = result.supported_rate
    assert rate["value"] is not None and 0.0 <= rate["value"] <= 1.0
    assert sum(result.counts.values()) == rate["n"]
    assert indexcheck.api.sections(result)  # the sections registered for its type


def test_diff_index_from_specs_and_from_objects(small_kb: dict[str, Path]) -> None:
    good, buggy = f"faiss:{small_kb['good']}", f"faiss:{small_kb['buggy']}"
    path = small_kb["chunks"]  # the stores hold no texts: the chunks give them
    same = indexcheck.diff_index(good, good, path, path)
    assert same.ok and same.counts["unchanged"] == 120 and "shift" not in same.counts
    assert same.manifest["command"] == "diff-index"
    assert same.manifest["old_store"]["spec"] == good and same.manifest["store"]["spec"] == good
    old = indexcheck.open_store(good)
    try:
        chunks = indexcheck.load_chunks(small_kb["chunks"])
        bad = indexcheck.diff_index(
            old, buggy, chunks_old=chunks, chunks_new=small_kb["chunks"], min_cosine=0.99
        )
        assert not bad.ok and bad.counts.get("shift", 0) > 0 and bad.threshold == 0.99
        assert any(c.holds_vector_of for c in bad.chunks if c.status == "shift")
        old.info()  # a store the caller opened stays open
    finally:
        old.close()
    with_texts = indexcheck.diff_index(good, good, path, path, embedder=SPEC, engine="local")
    assert with_texts.ok and with_texts.new_texts == {"candidates": 0, "checked": 0, "counts": {}}
    assert with_texts.manifest["embedder"]["model_id"] == HashEmbedder(32).model_id


def test_diagnose_converts_a_cosine_threshold_on_an_l2_index(
    small_kb: dict[str, Path], questions: Path, tmp_path: Path
) -> None:
    """``threshold_scale="cosine"`` on a store scored by L2 distance: the cosine is converted
    to the store's scale (as ``--threshold-scale cosine`` does), so the out-of-scope
    questions are refused and the threshold reads back as the cosine given."""
    from indexcheck.stores.faiss.store import write_faiss_folder

    chunks = indexcheck.load_chunks(small_kb["chunks"])
    write_faiss_folder(
        tmp_path / "l2", chunks.ids, HashEmbedder(32).embed(chunks.texts), metric="l2"
    )
    store = f"faiss:{tmp_path / 'l2'}"
    diag = indexcheck.diagnose(
        store, questions, chunks, SPEC, k=4, threshold=0.9, threshold_scale="cosine"
    )
    assert diag.threshold is not None and diag.threshold["cosine"] == pytest.approx(0.9, abs=1e-5)
    assert diag.counts["OK"] == 12 and diag.counts["REFUSED_OK"] == 4
    assert diag.threshold["backend"] == pytest.approx(2 - 2 * 0.9, abs=1e-5)  # l2^2 of units
    assert diag.manifest["scale"]["transform"] == "l2^2"
