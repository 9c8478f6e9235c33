"""The shipped tokenizer.json is the publisher's file byte for byte, and switching to it from
the file shipped before (which differed only in its padding setting) changed no token and no
vector: the padding and truncation the model runs with are set in code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from indexcheck.embedders.minilm import model
from scripts.verify_model_provenance import varied_texts

HERE = Path(model.__file__).parent / "tokenizer"
#: sentence-transformers/all-MiniLM-L6-v2 tokenizer.json at 1110a243fdf4706b3f48f1d95db1a4f5529b4d41
PUBLISHER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: the tokenizer.json indexcheck shipped before (padding BatchLongest instead of Fixed 128)
BEFORE_SHA256 = "a9576e4dadfe7f78f071a1c00ba6902cc83ec6ed7e9b590ee974950bd4d54393"
#: sha256 of json.dumps([encoding.ids for each of varied_texts(300)]), recorded with the
#: tokenizer.json shipped before, through MiniLMEmbedder._encode
BEFORE_IDS_SHA256 = "4720f9b6dd8c8970a6766ea2ef670d312817a386f1feb29141f266b3655c25cd"


def _before_bytes() -> bytes:
    new = (HERE / "tokenizer.json").read_bytes()
    old = new.replace(b'"strategy":{"Fixed":128}', b'"strategy":"BatchLongest"', 1)
    assert old != new
    return old


@pytest.fixture(scope="module")
def embedder() -> model.MiniLMEmbedder:
    return model.MiniLMEmbedder(runtime="onnxruntime")


def test_the_shipped_file_is_the_publishers_and_differs_from_before_only_in_padding() -> None:
    assert model.TOKENIZER_JSON.sha256 == PUBLISHER_SHA256
    assert hashlib.sha256((HERE / "tokenizer.json").read_bytes()).hexdigest() == PUBLISHER_SHA256
    # the file shipped before is this one with one setting changed, byte for byte
    assert hashlib.sha256(_before_bytes()).hexdigest() == BEFORE_SHA256
    settings = json.loads((HERE / "tokenizer.json").read_text(encoding="utf-8"))
    assert settings["padding"]["strategy"] == {"Fixed": 128}
    assert settings["truncation"]["max_length"] == 128


def test_the_model_runs_with_no_padding_and_256_token_truncation(embedder) -> None:
    assert embedder._tokenizer.padding is None
    assert embedder._tokenizer.truncation["max_length"] == model.MAX_TOKENS == 256


def test_every_text_gets_the_token_ids_it_got_before(embedder) -> None:
    texts = varied_texts(300)
    encodings = [embedder._encode(t) for t in texts]
    assert sum(len(e.ids) == 256 for e in encodings) >= 40  # long texts are in the sample
    assert min(len(e.ids) for e in encodings) < 8
    digest = hashlib.sha256(json.dumps([e.ids for e in encodings]).encode()).hexdigest()
    assert digest == BEFORE_IDS_SHA256


def test_vectors_are_bit_for_bit_those_of_the_file_shipped_before(embedder) -> None:
    from tokenizers import Tokenizer

    # every 20th of the 300 texts (8 to 256 tokens, 2 cut at 256): the test above already
    # shows all 300 get the same ids, and a vector is a function of its ids alone (all 300
    # were compared once, old code and file against new: equal bit for bit)
    texts = varied_texts(300)[::20]
    assert sum(len(embedder._encode(t).ids) == 256 for t in texts) == 2
    after = embedder.embed(texts)
    before_tok = Tokenizer.from_str(_before_bytes().decode("utf-8"))
    before_tok.enable_truncation(256)  # what the embedder set before this change
    before_tok.no_padding()
    embedder._tokenizer, publisher_tok = before_tok, embedder._tokenizer
    try:
        before = embedder.embed(texts)
    finally:
        embedder._tokenizer = publisher_tok
    assert np.array_equal(before, after)
