"""embed_text.py (--embed-template rendering, safe formatting) and embedders/prefixes.py
(?prefix= embedder specs)."""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.embedders.prefixes import (
    EmbedderSpec,
    PrefixedEmbedder,
    parse_embedder_spec,
    with_prefixes,
)
from indexcheck.errors import DataFileError, InputError, SpecError
from indexcheck.inputs.embed_text import EmbedTemplate, metadata_lines, safe_format, unescape
from indexcheck.testing import HashEmbedder

META = {"file": "hours.md", "title": "Opening hours", "page": 3}


def test_template_fields_and_escapes() -> None:
    t = EmbedTemplate.parse(r"{metadata}\n\n{text}")
    assert t.render("c1", "Body.", META) == "file: hours.md\ntitle: Opening hours\npage: 3\n\nBody."
    assert t.uses_metadata()
    # no metadata to show: the text alone, as LlamaIndex does
    assert t.render("c1", "Body.", {}) == "Body."
    assert t.render("c1", "Body.", None) == "Body."
    t2 = EmbedTemplate.parse("passage: {meta[title]} ({id})\t{text}")
    assert t2.render("c1", "Body.", META) == "passage: Opening hours (c1)\tBody."
    assert not EmbedTemplate.parse("{text}").uses_metadata()
    excl = EmbedTemplate.parse(r"{metadata}\n\n{text}", exclude=["file", "page"])
    assert excl.render("c1", "B", META) == "title: Opening hours\n\nB"
    assert EmbedTemplate.parse("{{literal}} {text}").render("c", "x", None) == "{literal} x"
    assert unescape(r"a\nb\tc\\n\q") == "a\nb\tc\\n\\q"


def test_render_all_matches_llamaindex_default_header() -> None:
    schema = pytest.importorskip("llama_index.core.schema")
    t = EmbedTemplate.parse(r"{metadata}\n\n{text}")
    nodes = [
        schema.TextNode(id_="a", text="First.", metadata=dict(META)),
        schema.TextNode(id_="b", text="Second.", metadata={}),
    ]
    got = t.render_all([n.id_ for n in nodes], [n.text for n in nodes], [n.metadata for n in nodes])
    assert got == [n.get_content(schema.MetadataMode.EMBED) for n in nodes]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{text.__class__}", "unknown field"),
        ("{meta[title].upper}", "unknown field"),
        ("{text!r}", "conversion or format spec"),
        ("{text:>99999}", "conversion or format spec"),
        ("{txt}", r"did you mean \{text\}"),
        ("{0}", "unknown field"),
        ("{}", "unknown field"),
        ("{meta[]}", "needs one key"),
        ("{text", "not a valid template"),
    ],
)
def test_templates_cannot_reach_objects_or_specs(template: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        EmbedTemplate.parse(template)


def test_missing_metadata_field_names_the_chunk() -> None:
    t = EmbedTemplate.parse("{meta[author]}: {text}")
    with pytest.raises(DataFileError, match="chunk 'c9' has no metadata field 'author'"):
        t.render("c9", "x", META)


def test_safe_format_and_metadata_lines() -> None:
    assert safe_format("{key}: {value}", {"key": "k", "value": "v"}) == "k: v"
    with pytest.raises(InputError):
        safe_format("{key.real}", {"key": "k"})
    lines = metadata_lines(META, exclude=["page"], line_template="{key}={value}", separator="; ")
    assert lines == "file=hours.md; title=Opening hours"
    assert metadata_lines(None) == ""


def test_embedder_spec_prefixes() -> None:
    s = parse_embedder_spec("st:intfloat/e5-small-v2?prefix=passage:%20&query_prefix=query:%20")
    assert s == EmbedderSpec("st:intfloat/e5-small-v2", "passage: ", "query: ")
    assert s.suffix() == "?prefix=passage:%20&query_prefix=query:%20"
    assert parse_embedder_spec("minilm") == EmbedderSpec("minilm")
    assert parse_embedder_spec("py:pkg.mod:fn?prefix=a+b").prefix == "a+b"  # + stays a plus
    assert parse_embedder_spec("minilm?prefix=passage: ").prefix == "passage: "


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("minilm?prefx=a", "did you mean prefix"),
        ("minilm?queryprefix=a", "did you mean query_prefix"),
        ("minilm?prefix", "needs a value"),
        ("minilm?prefix=a&prefix=b", "given twice"),
    ],
)
def test_embedder_spec_refuses_unknown_keys(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message) as err:
        parse_embedder_spec(spec)
    assert err.value.exit_code == 2


def test_prefixed_embedder() -> None:
    inner = HashEmbedder(16)
    docs, queries = with_prefixes(inner, parse_embedder_spec("x?prefix=passage:%20"))
    assert queries is inner
    assert isinstance(docs, PrefixedEmbedder)
    assert docs.model_id == inner.model_id + "?prefix=passage:%20"
    assert docs.dimension == 16
    got = docs.embed(["a", "b"])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, inner.embed(["passage: a", "passage: b"]))
    assert docs.stats is inner.stats


def test_embedder_prefix_keys_stay_in_step() -> None:
    from indexcheck.embedders import PREFIX_KEYS
    from indexcheck.embedders.prefixes import EMBEDDER_SPEC_KEYS

    assert tuple(PREFIX_KEYS) == tuple(EMBEDDER_SPEC_KEYS)
