"""The default model's runtime: chosen by a cached measurement, forced by the env var,
threads from the cores actually available."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.embedders.minilm import runtime as runtime_choice


def _fake(label: str, seconds_per_token: float):
    def build():
        calls.append(label)

        def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
            time.sleep(seconds_per_token * feeds["input_ids"].size)
            return np.zeros((*feeds["input_ids"].shape, 384), dtype=np.float32)

        return run, label

    return build


calls: list[str] = []


class _Tok:
    def encode_batch(self, texts):
        class E:
            def __init__(self, n: int) -> None:
                self.ids = list(range(min(n, 256)))

        return [E(len(t.split()) + 2) for t in texts]


def test_the_faster_runtime_is_chosen_once_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path))
    calls.clear()
    builders = {"onnxruntime": _fake("ort", 2e-7), "openvino": _fake("ov", 1e-6)}
    run, label, info = runtime_choice.choose(builders, _Tok(), 2)
    assert label == "ort" and info["source"] == "measured"
    assert info["rates"]["ort"]["paragraph"] > info["rates"]["ov"]["paragraph"]
    assert calls == ["ort", "ov"]
    calls.clear()
    _, label, info = runtime_choice.choose(builders, _Tok(), 2)
    assert label == "ort" and info["source"] == "cache" and calls == ["ort"]
    assert info["short"] == info["long"] == "onnxruntime"
    # another thread count (or CPU, or library version) is another key: measured again
    calls.clear()
    runtime_choice.choose(builders, _Tok(), 1)
    assert calls == ["ort", "ov"]
    # forget() makes the next opening measure again
    runtime_choice.forget(2)
    calls.clear()
    runtime_choice.choose(builders, _Tok(), 2)
    assert calls == ["ort", "ov"]


def test_one_runtime_for_every_batch_even_when_each_wins_one_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime wins short sentences, OpenVINO paragraphs: the paragraph winner runs every
    batch, so a text gets the same vector whatever the width of the batch it is in."""
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path))

    def slow_short(label: str, fixed: float, per_token: float):
        def build():
            def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
                time.sleep(fixed + per_token * feeds["input_ids"].size)
                used.append(label)
                return np.zeros((*feeds["input_ids"].shape, 384), dtype=np.float32)

            return run, label

        return build

    used: list[str] = []
    builders = {
        "onnxruntime": slow_short("ort", 0.0, 5e-5),  # cheap to start, slow per token
        "openvino": slow_short("ov", 0.03, 1e-7),  # a fixed cost per call, fast per token
    }
    run, label, info = runtime_choice.choose(builders, _Tok(), 2)
    rates = info["rates"]
    assert rates["ort"]["short"] > rates["ov"]["short"]  # each wins one workload
    assert rates["ov"]["paragraph"] > rates["ort"]["paragraph"]
    assert label == "ov" and info["short"] == info["long"] == "openvino"
    used.clear()
    run({"input_ids": np.zeros((4, 20), dtype=np.int64)})
    run({"input_ids": np.zeros((4, 200), dtype=np.int64)})
    assert used == ["ov", "ov"]
    _, label2, info = runtime_choice.choose(builders, _Tok(), 2)
    assert label2 == label and info["source"] == "cache"


def test_cgroup_quota_caps_the_threads(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert runtime_choice._cgroup_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert runtime_choice._cgroup_quota(tmp_path) is None
    assert 1 <= runtime_choice.available_cores()


def test_available_cores_honours_a_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_choice, "_cgroup_quota", lambda: 0.5)
    assert runtime_choice.available_cores() == 1


def test_the_env_var_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from indexcheck.embedders.minilm.model import MiniLMEmbedder

    monkeypatch.setenv("INDEXCHECK_MINILM_RUNTIME", "onnxruntime")
    e = MiniLMEmbedder()
    assert e.runtime == "onnxruntime" and e.choice == {"mode": "onnxruntime"}
    assert e.threads == runtime_choice.available_cores()


def test_model_status_shows_the_choice_and_the_rates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("INDEXCHECK_MINILM_RUNTIME", raising=False)
    res = CliRunner().invoke(cli, ["model", "status"])
    assert res.exit_code == 0, res.output
    assert "runtime" in res.output and "measured now" in res.output
    assert "paragraphs (256 tokens)/s" in res.output and "onnxruntime" in res.output
    res = CliRunner().invoke(cli, ["model", "status"])
    assert "cached" in res.output


def test_either_runtime_alone_runs_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime is the core's, OpenVINO the `fast` extra's: with only one importable,
    ``auto`` opens the model on that one without timing anything."""
    import importlib.util

    from indexcheck.embedders.minilm import model

    real = importlib.util.find_spec
    for absent, expected in (("openvino", "onnxruntime"), ("onnxruntime", "openvino")):

        def find_spec(name: str, *a: object, _absent: str = absent) -> object:
            return None if name == _absent else real(name, *a)  # type: ignore[arg-type]

        monkeypatch.setattr(model.importlib.util, "find_spec", find_spec)
        monkeypatch.delenv("INDEXCHECK_MINILM_RUNTIME", raising=False)
        e = model.MiniLMEmbedder(threads=1)
        assert e.runtime.startswith(expected) and "rates" not in e.choice
        assert e.embed(["a short sentence"]).shape == (1, 384)
