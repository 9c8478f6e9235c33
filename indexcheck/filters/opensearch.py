"""Portable filter -> OpenSearch query DSL: the Elasticsearch translation
(:mod:`indexcheck.filters.elasticsearch`), whose DSL OpenSearch shares, under its name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indexcheck.filters.elasticsearch import to_elasticsearch
from indexcheck.filters.grammar import Node


def to_opensearch(
    node: Node,
    types: Mapping[str, str],
    prefix: str = "metadata.",
    ignore_above: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The query DSL clause for ``node`` (see :func:`to_elasticsearch`)."""
    return to_elasticsearch(node, types, prefix, ignore_above, store="opensearch")
