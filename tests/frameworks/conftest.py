"""Session fixtures: indexes built by LangChain and LlamaIndex themselves, built once.

``framework_index(framework, layout, mode)`` builds on first use and caches for the
session (each build embeds the same 50-chunk corpus, memoised per text). ``layout`` is
``faiss``/``chroma``/``pgvector``/``pgvector-uuid`` (ids picked by LangChain: uuid4)/
``pgvectorstore`` for LangChain and
``simple``/``faiss``/``chroma``/``pgvector`` for LlamaIndex, and ``elasticsearch``/``opensearch``
for both (their own stores, on one loopback emulator per engine for the session);
``mode`` is correct/shifted/foreign. The PostgreSQL layouts use the session's test server
(tests/pg_support.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests import pg_support
from tests.builders import framework_search_engines as engines
from tests.builders import langchain_indexes as lc
from tests.builders import llamaindex_indexes as li
from tests.builders.llamaindex_indexes import Built

pg_server = pg_support.pg_server
database = pg_support.database

LAYOUTS = {
    "langchain": ("faiss", "chroma", "pgvector", "pgvectorstore"),
    "llamaindex": ("simple", "faiss", "chroma", "pgvector"),
}
PG_LAYOUTS = ("pgvector", "pgvector-uuid", "pgvectorstore")


@pytest.fixture(scope="session")
def framework_index(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Callable[[str, str, str], Built]:
    pytest.importorskip("langchain_community")
    pytest.importorskip("llama_index.core")
    root: Path = tmp_path_factory.mktemp("frameworks")
    cache: dict[tuple[str, str, str], Built] = {}
    servers: dict[str, str] = {}

    def emulated(scheme: str) -> str:
        """The session's emulator for ``scheme``, started on first use."""
        if scheme not in servers:
            from tests.emulators.search_engine_emulator import Emulator

            emulator = Emulator(scheme, "8.15.0" if scheme == "elasticsearch" else "2.19.1")
            request.addfinalizer(emulator.stop)
            servers[scheme] = emulator.url
        return servers[scheme]

    def get(framework: str, layout: str, mode: str) -> Built:
        key = (framework, layout, mode)
        if key not in cache:
            if layout in engines.SCHEMES:
                build = engines.build_langchain if framework == "langchain" else (
                    engines.build_llamaindex)  # fmt: skip
                cache[key] = build(layout, emulated(layout), mode)
            elif framework == "llamaindex" and layout == "pgvector":
                server = request.getfixturevalue("pg_server")
                cache[key] = li.build_pgvector(database(server, f"li_{mode}"), mode)
            elif layout in PG_LAYOUTS:
                server = request.getfixturevalue("pg_server")
                dsn = database(server, f"lc_{mode}")
                if layout == "pgvectorstore":
                    cache[key] = lc.build_pgvectorstore(dsn, mode)
                else:
                    cache[key] = lc.build_pgvector(dsn, mode, uuid_ids=layout == "pgvector-uuid")
            else:
                module = lc if framework == "langchain" else li
                builder = getattr(module, f"build_{layout}")
                cache[key] = builder(root, mode)
        return cache[key]

    return get
