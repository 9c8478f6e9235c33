"""scripts/verify_model_provenance.py ties the shipped int8 ONNX model to the publisher's
weights: it refuses publisher files that are absent or differ from their sha256 pins, reads
safetensors without torch, and (slow, with the publisher's files) finds the shipped model's
vectors within cosine 0.98 of the publisher's fp32 forward pass, and a broken reference not."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from scripts import verify_model_provenance as prov

#: a folder holding the publisher's model.safetensors and config.json at prov.REVISION
PUBLISHER_DIR = os.environ.get("INDEXCHECK_PUBLISHER_MODEL_DIR", "")


def test_absent_or_altered_publisher_files_are_refused(tmp_path: Path) -> None:
    assert "model.safetensors is missing" in (prov.check_publisher_files(tmp_path) or "")
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    problem = prov.check_publisher_files(tmp_path) or ""
    assert "not the publisher's 53aa5117" in problem and prov.REVISION in problem
    assert prov.main([str(tmp_path)]) == 2


def test_safetensors_are_read_without_torch(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, 8], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    head = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(head)) + head + a.tobytes() + b.tobytes())
    got = prov.read_safetensors(path)
    assert sorted(got) == ["a", "b"]
    np.testing.assert_array_equal(got["a"], a)
    np.testing.assert_array_equal(got["b"], [7.0, 8.0])


@pytest.mark.slow
def test_the_shipped_onnx_model_matches_the_publishers_weights() -> None:
    folder = Path(PUBLISHER_DIR)
    if not PUBLISHER_DIR or not (folder / "model.safetensors").is_file():
        pytest.skip(
            "set INDEXCHECK_PUBLISHER_MODEL_DIR to a folder holding the publisher's "
            f"model.safetensors and config.json at revision {prov.REVISION}"
        )
    assert prov.check_publisher_files(folder) is None
    # 25 of the script's 300 texts (3 past 256 tokens); the script runs all 300 in minutes
    texts = prov.varied_texts(300)[::12]
    result = prov.compare(folder, texts)
    assert result["texts"] == 25 and result["min"] >= prov.MIN_COSINE
    assert result["median"] >= 0.999
    # the comparison discriminates: the publisher's model cut to 5 of its 6 layers is not it
    broken = prov.compare(folder, texts[:6], layers=5)
    assert broken["min"] < prov.MIN_COSINE
