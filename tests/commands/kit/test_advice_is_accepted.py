"""Every spec option and filter field a message suggests is accepted when typed.

The stores' and filters' messages are grepped for the options they tell users to pass
(``pass &id=COLUMN``, ``&metadata=COLUMN``, ...) and each is checked against the store it
is printed for; the id-mismatch advice names each store's own key (Qdrant's ``id_field``,
not ``id``); a filter field LanceDB suggests for a LangChain table runs."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from indexcheck.commands.kit.id_pairing import id_field_advice
from indexcheck.errors import FilterError
from indexcheck.plugins.defaults import STORES

PACKAGE = Path(importlib.import_module("indexcheck").__file__ or "").parent
#: advice in a message: "pass &id=COLUMN", "add ?model=NAME", "(&metadata=COLUMN)"
ADVICE = re.compile(r"(?:pass|add|with|e\.g\.|\()\s*[?&]([A-Za-z_]+)=")


def _classes() -> dict[str, type]:
    out = {}
    for scheme, target in STORES.items():
        module, name = target.split(":")
        out[scheme] = getattr(importlib.import_module(module), name)
    return out


def _store_keys_by_file() -> dict[Path, set[str]]:
    """Each store package's files (and its filter translator) -> the keys its stores take."""
    keys: dict[Path, set[str]] = {}
    for cls in _classes().values():
        pkg = PACKAGE / "stores" / cls.__module__.split(".")[2]
        files = [*pkg.glob("*.py"), PACKAGE / "filters" / f"{pkg.name}.py"]
        for f in files:
            keys.setdefault(f, set()).update(cls.params)
    return keys


def test_every_option_a_store_message_suggests_is_one_the_store_takes() -> None:
    checked = 0
    for path, accepted in _store_keys_by_file().items():
        if not path.exists():
            continue
        for key in ADVICE.findall(path.read_text()):
            checked += 1
            assert key in accepted, f"{path.name} suggests {key}=, which its store refuses"
    assert checked >= 10  # the grep finds the advice (pass &id=COLUMN, ?vector=COLUMN, ...)


@pytest.mark.parametrize("scheme", sorted(STORES))
def test_the_id_mismatch_advice_names_a_key_the_store_takes(scheme: str) -> None:
    cls = _classes()[scheme]
    store = cls.__new__(cls)
    store.spec = f"{scheme}:somewhere?x=1"
    said = id_field_advice(store)
    for key in re.findall(r"[?&]([A-Za-z_]+)=", said):
        cls.check_params({key: "chunk_id"})  # SpecError (did you mean ...?) if refused
    if scheme == "qdrant":
        assert "&id_field=FIELD" in said  # LlamaIndex's Qdrant collections: not ?id=


def test_a_filter_field_lancedb_suggests_for_a_langchain_table_runs(tmp_path: Path) -> None:
    from langchain_community.vectorstores import LanceDB
    from langchain_core.embeddings import Embeddings

    from indexcheck.stores import open_store
    from tests.fast_hooks import FAST16

    class Hashing(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return FAST16.embed(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return FAST16.embed([text])[0].tolist()

    texts = [f"note {i}" for i in range(12)]
    metas = [{"profile": "dog" if i % 2 else "cat", "year": 2020 + i} for i in range(12)]
    LanceDB.from_texts(texts, Hashing(), metadatas=metas, uri=str(tmp_path), table_name="t")
    store = open_store(f"lancedb:{tmp_path}?table=t")
    q = FAST16.embed(["note 3"])
    for typo, meant in (('{"profil": "dog"}', "profile"),
                        ('{"metadata.profil": "dog"}', "metadata.profile")):  # fmt: skip
        with pytest.raises(FilterError) as refused:
            store.query(q, 3, filter=typo)
        hint = re.search(r"did you mean '([^']+)'", str(refused.value))
        assert hint is not None and hint.group(1) == meant, refused.value
        _, ids = store.query(q, 3, filter={hint.group(1): "dog"})  # the advice, as printed
        assert sum(i is not None for i in ids[0]) == 3
