"""Local FAISS indexes: ``faiss:DIR``.

indexcheck's layout (``indexcheck embed --faiss DIR``): ``DIR/index.faiss``, any faiss index
whose row i was the i-th vector added, and ``DIR/ids.json`` (a JSON list, one ``"chunk-id"`` or
``{"id": ..., "text": ...}`` a row; ``ids.parquet`` or ``ids.jsonl`` also read, :mod:`.rows`).
An ``IndexIDMap``/``IndexIDMap2`` needs no ids file: its int64 labels are the ids.
LangChain's layout (``FAISS.save_local``): ``index.faiss`` + ``index.pkl``, or another name with
``?index_name=``. Unpickling can run code, so it is read only with ``trust_pickle=True``, and
then through an unpickler that admits only the docstore and document classes and builtins.

``?efSearch=N`` (HNSW) and ``?nprobe=N`` (IVF) set the normal query's search so recall can be
swept. Scores are faiss's own: ``dot`` for inner-product indexes, ``l2^2`` for L2 ones. A flat
index is opened with ``IO_FLAG_MMAP_IFC`` and read with ``pread`` a block at a time; other
types are read whole (vectors reconstructed once), and LangChain's ``index.pkl`` unpickled whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...errors import DataFileError, InputError, SpecError
from ...inputs.files import c_path
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch
from ..blocked_search import blocked_knn
from ..local import exact_knn
from ..local_filtering import faiss_selected, select
from ..params import Int, Str
from .langchain_pickle import read_langchain_metadata
from .langchain_pickle import read_langchain_pickle as read_langchain_pickle
from .rows import FlatRows, ListedIds, StreamedIds, ids_beside

INDEX_FILE = "index.faiss"
IDS_FILE = "ids.json"
LANGCHAIN_PICKLE = "index.pkl"
#: the fourcc of the plain flat indexes, whose float32 rows end the file
FLAT_FOURCC = (b"IxFI", b"IxF2", b"IxFl")
#: rows read at once by scans and the blocked exact search
ROWS = 16384


class FaissStore(BaseStore):
    """A FAISS index on disk, opened read-only."""

    ordered = True  # rows come back in the order they were added

    scheme = "faiss"
    params = {"efSearch": Int(min=1), "nprobe": Int(min=1), "index_name": Str()}
    sweepable = ("efSearch", "nprobe")
    #: in memory: one call for any number of ids or queries
    fetch_batch = query_batch = 1 << 30
    has_exact = True

    def __init__(self, folder: Path, trust_pickle: bool, params: dict[str, str]) -> None:
        import faiss

        values = self.check_params(params)
        self.folder = folder
        self.spec = f"faiss:{folder}"
        self.where = str(folder)
        name = str(values.get("index_name") or "")
        if name and ("/" in name or "\\" in name or name.startswith(".")):
            raise SpecError(
                f"faiss: ?index_name={name} must be a plain file stem, as passed to "
                "LangChain's save_local(folder, index_name=...)"
            )
        index_path = folder / (f"{name}.faiss" if name else INDEX_FILE)
        if not index_path.is_file():
            stems = sorted(
                p.stem for p in folder.glob("*.faiss") if p.with_suffix(".pkl").is_file()
            )
            hint = f"; LangChain indexes here: ?index_name={', '.join(stems)}" if stems else ""
            raise DataFileError(
                f"{index_path} does not exist; a faiss store folder holds {INDEX_FILE} "
                f"and {IDS_FILE} (or LangChain's {LANGCHAIN_PICKLE}){hint}"
            )
        self.index_name = name
        self._files = [index_path]
        with index_path.open("rb") as f:
            flat = f.read(4) in FLAT_FOURCC
        try:
            flags = faiss.IO_FLAG_MMAP_IFC if flat else 0
            with c_path(index_path) as readable:  # a folder name that is not UTF-8 too
                index = faiss.read_index(readable, flags)
        except RuntimeError as exc:
            raise DataFileError(f"{index_path} is not a faiss index: {exc}") from None
        self._rows: ListedIds | StreamedIds
        ids_path = folder / IDS_FILE
        pkl_path = folder / (f"{name}.pkl" if name else LANGCHAIN_PICKLE)
        id_map = None
        self._owner = index  # the IDMap owns its inner index: keep it alive
        if isinstance(index, faiss.IndexIDMap | faiss.IndexIDMap2):
            id_map = faiss.vector_to_array(index.id_map)
            index = faiss.downcast_index(index.index)
        # a named LangChain pair is read from its own pickle, never the folder's ids.json
        if not name and ids_path.is_file():
            self._rows = StreamedIds(ids_path)
            self._files.append(ids_path)
        elif not name and (listed := ids_beside(folder)) is not None:  # ids.parquet/.jsonl
            self._rows = listed
            self._files.append(listed.path)
        elif pkl_path.is_file():
            if not trust_pickle:
                raise InputError(
                    f"{folder} is a LangChain FAISS folder whose {pkl_path.name} is a "
                    "pickle, which can run code when loaded; pass --trust-pickle if you trust it"
                )
            self._rows = ListedIds(*read_langchain_pickle(pkl_path))
            self._files.append(pkl_path)
        elif id_map is not None:
            self._rows = ListedIds([str(int(x)) for x in id_map], None)
        else:
            if name:
                raise DataFileError(
                    f"{folder} has {index_path.name} but no {pkl_path.name}; ?index_name= "
                    "reads a LangChain save_local pair NAME.faiss + NAME.pkl"
                )
            raise DataFileError(
                f"{folder} has {INDEX_FILE} but no {IDS_FILE}; write the chunk id of each "
                f"row, in order, to {ids_path} as a JSON list"
            )
        if self._rows.count != index.ntotal:
            raise DataFileError(
                f"{folder}: the index holds {index.ntotal} vectors but the id list has "
                f"{self._rows.count} entries; they must match row for row"
            )
        self.index = index
        self._flat = FlatRows(index_path, int(index.ntotal), int(index.d)) if flat else None
        if self._flat is not None and index.ntotal:
            last = int(index.ntotal) - 1
            if not np.array_equal(self._flat.read(last, last + 1)[0], index.reconstruct(last)):
                self._flat.close()  # not the layout this reader knows: read it whole
                self._flat = None
        self.metric = "ip" if index.metric_type == faiss.METRIC_INNER_PRODUCT else "l2"
        self.approximate = not isinstance(index, faiss.IndexFlat)
        self._apply_search_params(values)
        self._matrix: np.ndarray | None = None
        self._meta: list[dict[str, Any]] | None = None
        self._meta_read = False

    @property
    def texts(self) -> list[str | None] | None:
        """Every stored text in row order, or None (read in full: for small folders)."""
        if not self._rows.has_text:
            return None
        return [t for _, texts in self._rows.blocks(ROWS) for t in texts or []]

    @property
    def ids(self) -> list[str]:
        """Every id in row order (read in full: for small folders)."""
        return [i for ids, _ in self._rows.blocks(ROWS) for i in ids]

    def _apply_search_params(self, values: dict[str, Any]) -> None:
        import faiss

        self.search_params: dict[str, int] = {}
        for key in ("efSearch", "nprobe"):
            if key in values:
                value = int(values[key])
                try:
                    faiss.ParameterSpace().set_index_parameter(self.index, key, value)
                except RuntimeError:
                    raise SpecError(
                        f"faiss: this {type(self.index).__name__} has no parameter {key}"
                    ) from None
                self.search_params[key] = value

    def matrix(self) -> np.ndarray:
        """All stored vectors, float32 (n, d), in row order (reconstructed once; a flat
        index is read from its file, not held)."""
        if self._flat is not None:
            return self._flat.read(0, self._flat.rows)
        if self._matrix is None:
            import faiss

            index = self.index
            if isinstance(index, faiss.IndexIVF):
                # the direct map lives in memory only; the file is not touched
                index.make_direct_map()
            self._matrix = index.reconstruct_n(0, index.ntotal).astype(np.float32)
        return self._matrix

    def info(self) -> StoreInfo:
        return StoreInfo(
            backend="faiss",
            count=int(self.index.ntotal),
            dimension=int(self.index.d),
            metric=self.metric,
            score="dot" if self.metric == "ip" else "l2^2",
            higher_is_better=self.metric == "ip",
            approximate=self.approximate,
            details={
                "index_type": type(self.index).__name__,
                **({"index_name": self.index_name} if self.index_name else {}),
                **self.search_params,
            },
        )

    def compression(self) -> dict[str, Any]:
        """The index's codec, and whether its vectors read back as added
        (:func:`indexcheck.stores.faiss.describe.describe_faiss`)."""
        from .describe import describe_faiss

        return describe_faiss(self._owner)

    def fingerprint(self) -> str:
        """xxh3-128 over the bytes of index.faiss and the id file."""
        h = xxhash.xxh3_128()
        for path in self._files:
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 22), b""):
                    h.update(block)
        return h.hexdigest()

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> FaissStore:
        folder = Path(spec.location).expanduser()
        if not folder.exists():
            raise DataFileError(f"faiss store folder {folder} does not exist; check --store")
        if folder.is_file():
            raise DataFileError(
                f"{folder} is a file; --store faiss: takes the folder holding {INDEX_FILE}"
            )
        return cls(folder, bool(getattr(options, "trust_pickle", False)), spec.params)

    def _take(self, rows: np.ndarray) -> np.ndarray:
        if self._flat is not None:
            return self._flat.take(rows)
        m = self.matrix()
        out = np.zeros((len(rows), m.shape[1]), dtype=np.float32)
        ok = rows >= 0
        out[ok] = m[rows[ok]]
        return out

    def _block(self, start: int, stop: int) -> np.ndarray:
        if self._flat is not None:
            return self._flat.read(start, stop)
        return self.matrix()[start:stop]

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        rows = self._rows.rows_of(ids)
        found = rows >= 0
        vectors = self._take(rows)
        dims = np.where(found, int(self.index.d), 0).astype(np.int32)
        texts: list[str | None] | None = None
        if self._rows.has_text:
            got = self._rows.at(rows[found])[1] or []
            texts = [None] * len(ids)
            for j, t in zip(np.flatnonzero(found).tolist(), got, strict=True):
                texts[j] = t
        return Fetched(list(ids), vectors, found, dims, texts)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        start = 0
        d = int(self.index.d)
        for ids, texts in self._rows.blocks(batch):
            stop = start + len(ids)
            yield VectorBatch(
                ids, self._block(start, stop), np.full(stop - start, d, np.int32), texts
            )
            start = stop

    def _names(self, P: np.ndarray) -> np.ndarray:
        """Object (q, k) ids of row positions (None for -1)."""
        out = np.full(P.shape, None, dtype=object)
        ok = P >= 0
        if ok.any():
            out[ok] = np.asarray(self._rows.at(P[ok])[0], dtype=object)
        return out

    def _blocked(self, xq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        n = int(self.index.ntotal)
        blocks = (
            (np.arange(a, min(a + ROWS, n), dtype=np.int64), self._block(a, min(a + ROWS, n)))
            for a in range(0, n, ROWS)
        )
        D, L = blocked_knn(blocks, xq, k, self.metric, missing=-1)
        return D, self._names(L.astype(np.int64))

    def _search_dimension(self) -> int:
        return int(self.index.d)

    def _query_batch(self, xq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._flat is not None:  # a flat search is exact: the same, read in blocks
            return self._blocked(xq, k)
        return self._found(*self.index.search(xq, k))

    def _exact_batch(self, xq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._flat is not None:
            return self._blocked(xq, k)
        D, P = exact_knn(self.matrix(), xq, k, self.metric)
        return D, self._names(P)

    def _found(self, D: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """faiss's (D, positions) as float32 scores (NaN where missing) and ids."""
        D = D.astype(np.float32)
        D[P < 0] = np.nan
        return D, self._names(P)

    def _metadata(self) -> list[dict[str, Any]] | None:
        """The LangChain docstore metadata in row order, read from the pickle once; None
        for the indexcheck layout, which holds none."""
        if not self._meta_read:
            pkl = next((p for p in self._files if p.suffix == ".pkl"), None)
            self._meta = None if pkl is None else read_langchain_metadata(pkl, self.ids)
            self._meta_read = True
        return self._meta

    def metadata_of(self, ids: Sequence[str]) -> list[dict[str, Any]] | None:
        """The LangChain docstore metadata of ``ids`` (None: the folder holds none)."""
        meta = self._metadata()
        if meta is None:
            return None
        rows = self._rows.rows_of(list(ids))
        return [meta[int(r)] if r >= 0 else {} for r in rows]

    def _native_filter(self, node: Any) -> Any:
        """The rows whose LangChain metadata matches: positions for an IDSelectorBatch."""
        return select(self.scheme, self._metadata(), node, self.spec)

    def _filtered_query_batch(
        self, xq: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """The index's own search (efSearch/nprobe as set) under the id selector."""
        return self._found(*faiss_selected(self.index, native, xq, k, self.search_params))

    def close(self) -> None:
        self._matrix = None
        if self._flat is not None:
            self._flat.close()


def write_faiss_folder(
    folder: Path,
    ids: Sequence[str],
    vectors: np.ndarray,
    texts: Sequence[str] | None = None,
    metric: str = "ip",
    index_factory: str = "Flat",
) -> None:
    """Write a NEW indexcheck-layout folder (never used on a user's existing index).

    Refuses to overwrite an existing index.faiss. Used by ``indexcheck embed --faiss``.
    """
    import faiss

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / INDEX_FILE
    if target.exists():
        raise InputError(f"{target} already exists; indexcheck never overwrites an index")
    xb = np.ascontiguousarray(vectors, dtype=np.float32)
    fm = faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2
    index = faiss.index_factory(xb.shape[1], index_factory, fm)
    if not index.is_trained:
        index.train(xb)
    index.add(xb)
    faiss.write_index(index, str(target))
    rows: list[Any] = (
        list(ids)
        if texts is None
        else [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    )
    (folder / IDS_FILE).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
