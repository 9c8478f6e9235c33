"""Opening a search-engine index: the spec's URL checked, credentials from the environment
only, the server's version, and the index's layout sniffed from its mapping."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ...remote.translate import ErrorMap
from ...safety.secrets import env_secret
from ..base import StoreSpec
from ..params import http_url
from .layout import Layout, one_index, sniff

SHOWN = ("index", "vector", "text", "metadata")


@dataclass(frozen=True)
class Target:
    """What a spec names: the URL (no credentials), the index, the spec safe to print."""

    url: str
    index: str
    spec: str


def target(spec: StoreSpec, extra: tuple[str, ...] = ()) -> Target:
    """The URL and index of ``scheme:URL?index=NAME``; credentials in the URL are refused."""
    url = spec.location.strip().rstrip("/")
    http_url(
        url,
        f"{spec.scheme} spec needs the server's http(s) URL before '?', e.g. "
        f"{spec.scheme}:http://localhost:9200?index=docs (got '{url or 'nothing'}')",
        f"put no credentials or query string in the {spec.scheme} URL; credentials come "
        "from the environment only (see docs/stores.md)",
    )
    index = spec.require("index", f"name the index, e.g. {spec.scheme}:{url}?index=docs")
    shown = {k: spec.params[k] for k in (*SHOWN, *extra) if spec.params.get(k)}
    return Target(url, index, f"{spec.scheme}:{url}?{urlencode(shown)}")


def secret(name: str) -> str | None:
    """An environment credential, or None when unset (never printed)."""
    return env_secret(name) or None


def sniffed(
    flavor: str, call: Callable[[str, Callable[[], Any]], Any], client: Any, t: Target,
    params: Mapping[str, str],
) -> Layout:  # fmt: skip
    """The index's :class:`Layout` from ``indices.get_mapping`` (and its settings)."""
    mapping = _plain(call("read the mapping", lambda: client.indices.get_mapping(index=t.index)))
    name, mappings = one_index(mapping, t.index, t.url)
    settings: dict[str, Any] = {}
    if flavor == "opensearch":
        got = _plain(call("read the settings", lambda: client.indices.get_settings(
            index=name, params={"flat_settings": "true"})))  # fmt: skip
        settings = dict((got.get(name) or {}).get("settings") or {})
    return sniff(flavor, name, mappings, params, t.url, settings)


def _plain(resp: Any) -> dict[str, Any]:
    body = getattr(resp, "body", resp)
    return dict(body)


def version_of(info: Any) -> str:
    """``version.number`` of a root ``info()`` reply."""
    return str((_plain(info).get("version") or {}).get("number") or "0")


def caller(errors: ErrorMap, t: Target) -> Callable[[str, Callable[[], Any]], Any]:
    """``call(doing, fn)``: one request while opening, translated by ``errors``."""
    return lambda doing, fn: errors.call(doing, fn, where=t.url, index=t.index)


def major_minor(version: str) -> tuple[int, int]:
    """(major, minor) of ``8.15.1`` -> (8, 15); (0, 0) when unreadable."""
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return 0, 0
