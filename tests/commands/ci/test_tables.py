"""ci's job tables read their counts through one reader: ``sample`` (check-index) and
``sample-new`` (diff-index) are "an integer >= N or 'all'" in the same words."""

from __future__ import annotations

import re

import pytest

from indexcheck.commands.ci.config import CiConfig
from indexcheck.errors import InputError


@pytest.mark.parametrize(
    ("table", "key", "value", "words"),
    [
        (
            "check-index",
            "sample",
            0,
            'ci.check_index.sample must be an integer >= 1 or "all", not 0',
        ),
        ("diff-index", "sample-new", -1, 'must be an integer >= 0 or "all", not -1'),
        ("diff-index", "sample-new", "some", "not 'some'"),
    ],
)
def test_ci_sample_counts_are_one_reader(table: str, key: str, value: object, words: str) -> None:
    """ci's ``sample`` and ``sample-new`` ("an integer >= N or 'all'") share
    TomlTable.count_or_all and its words."""
    job = {key.replace("-", "_"): value}
    if table == "diff-index":
        job["old"] = "faiss:old"
    data = {"ci": {"store": "faiss:x", table.replace("-", "_"): job}}
    with pytest.raises(InputError, match=re.escape(words)):
        CiConfig.from_dict(data, "indexcheck.toml", {})
    job[key.replace("-", "_")] = "all"
    CiConfig.from_dict(data, "indexcheck.toml", {})
