"""Model inputs from tokenizer encodings, shared by the ONNX model and its runtime choice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def encoding_feeds(encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """Model inputs (int64 (n, width), padded to the longest) for tokenizers Encodings."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n] = e.ids
        mask[row, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
