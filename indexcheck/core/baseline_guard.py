"""Is a saved baseline comparable with this run? Same store, same embedder.

A baseline is a ci (or diagnose) JSON result; its ``manifest`` names the store
(``store.backend``, ``store.spec``) and the embedder (``embedder.model_id``). The index
*content* is expected to differ (that is what the comparison measures), so the content
fingerprint is not compared; the store's identity and the embedding model are. A baseline
from another store or another embedder compares two different systems and is refused
(exit 2) unless the caller allows it, and then every difference is reported.

Hook (core/gate.py, after the store and embedder are opened, before any check)::

    notes = check_baseline(baseline, store.spec, store.info().backend,
                           embedder.model_id if embedder else None, allow_any=baseline_any_store)

``cli/ci.py`` adds ``--baseline-any-store`` and shows ``notes`` in the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import InputError


def _store_identity(spec: str) -> str:
    """The spec without credentials and with a normalised scheme: ``user:pw@`` never counts."""
    scheme, _, rest = spec.partition(":")
    if "://" in rest:
        parts = urlsplit(rest)
        host = parts.netloc.rpartition("@")[2].lower()
        rest = urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), parts.query, ""))
    return f"{scheme.lower()}:{rest.rstrip('/')}"


def baseline_differences(
    baseline: Mapping[str, Any], store_spec: str, backend: str, model_id: str | None
) -> list[str]:
    """What differs between the baseline's store/embedder and this run's (empty: none).

    A baseline without a manifest cannot be checked and yields one note saying so.
    """
    manifest = baseline.get("manifest")
    if not isinstance(manifest, Mapping):
        return ["the baseline has no manifest, so its store and embedder cannot be checked"]
    out: list[str] = []
    store = manifest.get("store")
    if isinstance(store, Mapping):
        base_backend, base_spec = str(store.get("backend", "")), str(store.get("spec", ""))
        if base_backend and base_backend != backend:
            out.append(f"store backend {base_backend!r} in the baseline, {backend!r} now")
        elif base_spec and _store_identity(base_spec) != _store_identity(store_spec):
            out.append(f"store {base_spec!r} in the baseline, {store_spec!r} now")
    embedder = manifest.get("embedder")
    if model_id is not None and isinstance(embedder, Mapping):
        base_model = str(embedder.get("model_id", ""))
        if base_model and base_model != model_id:
            out.append(f"embedder {base_model!r} in the baseline, {model_id!r} now")
    return out


def check_baseline(
    baseline: Mapping[str, Any],
    store_spec: str,
    backend: str,
    model_id: str | None,
    *,
    allow_any: bool = False,
) -> list[str]:
    """Refuse (InputError, exit 2) a baseline from another store or embedder unless
    ``allow_any``; return the differences to report (empty when none)."""
    diffs = [
        d
        for d in baseline_differences(baseline, store_spec, backend, model_id)
        if not d.startswith("the baseline has no manifest")
    ]
    if diffs and not allow_any:
        where = baseline.get("_path") or "the baseline"
        raise InputError(
            f"{where} was measured on another system ({'; '.join(diffs)}); write a new "
            "baseline on this store, or pass --baseline-any-store to compare anyway"
        )
    return baseline_differences(baseline, store_spec, backend, model_id)
