"""Milvus store (pymilvus): dense vectors, Milvus's own BM25 over a jieba analyzer, and in-engine RRF hybrid search.

Where it lives: with no server URI, a Milvus Lite file (``milvus.db``) inside the index folder, so the atomic
folder swap and clean_index work as for FAISS; with ``MILVUS_URI=http://host:19530``, a collection on that server
named after the index folder (unique per build), which a build only points the manifest at once it is complete.

Rows: the primary key is a 63-bit hash of (document id, index text), so a hit maps to its position in
documents.jsonl by a dict lookup (no field fetch), and an amended article becomes a new row instead of overwriting
the old one. Each row lives from generation ``gen_from`` up to (not including) ``gen_to``. An in-place update of one
law (`apply_update`) writes the new rows at generation G+1 and ends the old ones at G+1; only then does the manifest
move to G+1. Every search filters on the reader's generation, so a reader still on G sees exactly G's rows and an
update killed before the manifest switch changes nothing anyone sees. Rows that died at or before G are deleted by
the next update.

Milvus Lite 2.5.1 (the pinned engine): one process per file, no HNSW. The filter of a hybrid search goes on each
`AnnSearchRequest` (a ``filter=`` on ``hybrid_search`` itself is silently ignored there).
"""
from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import IndexMismatchError, StoreUnavailableError
from . import StoreOptions, StoreRef, is_server_uri

log = logging.getLogger(__name__)

LITE_FILE = "milvus.db"
INFO_FILE = "milvus.json"  # what the store is (URI without token, collection, index); also marks a build's collection
ALIVE = 2**62  # gen_to of a row no update has ended
TEXT_BYTES = 65535  # VARCHAR limit; the longest LawRefBook article is 11 kB
ANALYZER = {"tokenizer": "jieba"}  # the analyzer both Lite 2.5.1 and a Milvus 2.5+/3.x server accept
IVF_NLIST, IVF_NPROBE, HNSW_EF = 1024, 32, 128


def row_key(doc) -> int:
    """Primary key of a document's row: changes when its text changes (an amendment is a new row)."""
    digest = hashlib.blake2b(f"{doc.id}\x00{doc.index_text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def collection_name(index_dir: str) -> str:
    """Milvus names allow letters, digits and underscores only."""
    return "arag_" + "".join(c if c.isalnum() and c.isascii() else "_" for c in index_dir)


def _truncate(text: str) -> str:
    raw = text.encode("utf-8")
    return text if len(raw) <= TEXT_BYTES else raw[:TEXT_BYTES].decode("utf-8", "ignore")


def connect(uri: str, token=None):
    """A MilvusClient, or StoreUnavailableError saying what to do (Lite: one process per file)."""
    with warnings.catch_warnings():  # milvus-lite 2.5.1 imports pkg_resources, which warns on import
        warnings.simplefilter("ignore", UserWarning)
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException
    from ...config import reveal

    # Lite's engine sends GOAWAY "too_many_pings" to pymilvus' idle keepalive pings (every 10 s while a build embeds
    # the next batch); a local socket needs no keepalive while no call is running.
    extra = {} if is_server_uri(uri) else {"grpc_options": {"grpc.keepalive_permit_without_calls": False}}
    try:
        return MilvusClient(uri=uri, token=reveal(token) or "", **extra)
    except MilvusException as e:
        if is_server_uri(uri):
            raise StoreUnavailableError(f"cannot reach the Milvus server at {uri}: {e}. Is it running "
                                        "(docs/milvus.md), and are MILVUS_URI / MILVUS_TOKEN right?") from e
        raise StoreUnavailableError(
            f"cannot open the Milvus Lite file {uri}: another process has it open (Milvus Lite allows one process "
            "per file). Stop that process (the app, or another init_index.py), or serve the file to several "
            f"processes: python scripts/milvus_server.py --db {uri} --port 19530, then set "
            "MILVUS_URI=http://127.0.0.1:19530 (docs/milvus.md)") from e


def release_lite(path: Path) -> None:
    """Stop this process's Milvus Lite server on `path` (it holds the file; the index folder is renamed/removed)."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return
    key = str(Path(path).absolute().resolve())
    if key in server_manager_instance._servers:  # release_server() logs a warning for unknown paths
        server_manager_instance.release_server(key)


def _schema(client, dim: int):
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=1024)
    schema.add_field("law", DataType.VARCHAR, max_length=1024)
    schema.add_field("text", DataType.VARCHAR, max_length=TEXT_BYTES, enable_analyzer=True, analyzer_params=ANALYZER)
    schema.add_field("gen_from", DataType.INT64)
    schema.add_field("gen_to", DataType.INT64)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="text_bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))
    return schema


def _index_params(client, dense_index: str):
    params = client.prepare_index_params()
    extra = {"IVF_FLAT": {"nlist": IVF_NLIST}, "HNSW": {"M": 16, "efConstruction": 200}}.get(dense_index, {})
    params.add_index("dense", index_type=dense_index, metric_type="IP", params=extra)
    params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return params


def _dense_params(dense_index: str) -> dict:
    extra = {"IVF_FLAT": {"nprobe": IVF_NPROBE}, "HNSW": {"ef": HNSW_EF}}.get(dense_index, {})
    return {"metric_type": "IP", "params": extra}


def _rows(documents: Sequence, vectors: np.ndarray, generation: int) -> list[dict]:
    return [{"pk": row_key(d), "doc_id": d.id, "law": d.law, "text": _truncate(d.keyword_text),
             "gen_from": generation, "gen_to": ALIVE, "dense": v.tolist()} for d, v in zip(documents, vectors)]


class MilvusStore:
    """A `VectorStore` plus Milvus's own BM25 (`bm25`) and in-engine hybrid (`hybrid`) over the same rows."""

    kind = "milvus"

    def __init__(self, client, collection: str, dim: int, *, lite_path: Path | None, uri: str | None,
                 generation: int = 0, dense_index: str = "FLAT", positions: dict[int, int] | None = None):
        self.client, self.collection, self.dim = client, collection, dim
        self.lite_path, self.uri, self.generation, self.dense_index = lite_path, uri, generation, dense_index
        self._pos: dict[int, int] = dict(positions or {})  # row key → document position
        self._keys: list[int] = sorted(self._pos, key=self._pos.__getitem__)  # document position → row key

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def create(cls, dim: int, directory: Path, collection: str, options: StoreOptions) -> MilvusStore:
        """A new, empty collection; its name is written to milvus.json first, so a killed build's leftover
        collection can be found and dropped by the next build."""
        server = is_server_uri(options.uri)
        lite_path = None if server else directory / LITE_FILE
        info = {"uri": options.uri if server else None, "collection": collection, "dense_index": options.dense_index}
        (directory / INFO_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
        client = connect(options.uri if server else str(lite_path), options.token)
        if client.has_collection(collection):  # a leftover of a killed build of the same name: never ours to keep
            client.drop_collection(collection)
        client.create_collection(collection, schema=_schema(client, dim),
                                 index_params=_index_params(client, options.dense_index))
        return cls(client, collection, dim, lite_path=lite_path, uri=info["uri"], dense_index=options.dense_index)

    @classmethod
    def load(cls, ref: StoreRef, documents: Sequence, options: StoreOptions) -> MilvusStore:
        info = json.loads((ref.directory / INFO_FILE).read_text(encoding="utf-8"))
        # A server URI in the settings wins (the same server may be reached under another name); else the manifest's.
        uri = options.uri if (ref.uri and is_server_uri(options.uri)) else ref.uri
        lite_path = None if uri else ref.directory / LITE_FILE
        client = connect(uri or str(lite_path), options.token)
        if not client.has_collection(ref.collection):
            raise IndexMismatchError(f"the index's Milvus collection {ref.collection!r} is missing on "
                                     f"{uri or lite_path}. Rebuild: python init_index.py --force --store milvus")
        client.load_collection(ref.collection)  # after every connect: a reopened collection is not loaded
        dim = next(f["params"]["dim"] for f in client.describe_collection(ref.collection)["fields"]
                   if f["name"] == "dense")
        positions = {row_key(d): i for i, d in enumerate(documents)}
        return cls(client, ref.collection, int(dim), lite_path=lite_path, uri=uri, generation=ref.generation,
                   dense_index=info.get("dense_index", "FLAT"), positions=positions)

    @classmethod
    def drop(cls, ref: StoreRef, options: StoreOptions) -> None:
        """Drop a server collection; for Lite, stop this process's server on the file (the file is the index's)."""
        if not ref.uri:
            release_lite(ref.directory / LITE_FILE)
            return
        client = connect(options.uri if is_server_uri(options.uri) else ref.uri, options.token)
        try:
            if ref.collection and client.has_collection(ref.collection):
                client.drop_collection(ref.collection)
        finally:
            client.close()

    def save(self, directory: Path) -> list[str]:
        """Flush and let go of the file (the build folder is renamed next); the files this store wrote."""
        self.client.flush(self.collection)
        self.close(release=True)
        return [INFO_FILE] if self.uri else [LITE_FILE, INFO_FILE]

    def close(self, release: bool = False) -> None:
        """Close this client. `release` also stops this process's Lite engine on the file, which every client of
        the file in this process shares: only for a file about to be renamed or removed."""
        self.client.close()
        if release and self.lite_path is not None:
            release_lite(self.lite_path)

    # ------------------------------------------------------------------ rows
    def add(self, vectors: np.ndarray, documents: Sequence | None = None) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if documents is None or len(documents) != len(vectors):
            raise ValueError("MilvusStore.add needs the documents of the vectors (their text feeds Milvus's BM25)")
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        rows = _rows(documents, vectors, self.generation)
        self.client.insert(self.collection, rows)
        for row in rows:
            self._pos[row["pk"]] = len(self._keys)
            self._keys.append(row["pk"])

    def _live(self) -> str:
        """Rows of this index's generation. Also at generation 0: an update killed before its manifest switch
        leaves rows of generation 1 behind, which a reader of generation 0 must not count or rank."""
        g = self.generation
        return f"gen_from <= {g} and gen_to > {g}"

    def __len__(self) -> int:
        res = self.client.query(self.collection, filter=self._live(), output_fields=["count(*)"])
        return int(res[0]["count(*)"])

    def _hits(self, rows) -> list[tuple[int, float]]:
        """Hits as (document position, score); a row unknown to this index's documents is not ours to return."""
        return [(self._pos[h["id"]], float(h["distance"])) for h in rows if h["id"] in self._pos]

    # ------------------------------------------------------------------ search
    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        hits = self.dense(queries, k)
        width = max(1, max((len(h) for h in hits), default=0))
        scores, ids = np.zeros((len(hits), width), np.float32), -np.ones((len(hits), width), np.int64)
        for row, row_hits in enumerate(hits):
            for col, (pos, score) in enumerate(row_hits):
                ids[row, col], scores[row, col] = pos, score
        return scores, ids

    def dense(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        if not len(queries):
            return []
        res = self.client.search(self.collection, data=np.asarray(queries, np.float32).tolist(), anns_field="dense",
                                 limit=k, filter=self._live(), search_params=_dense_params(self.dense_index))
        return [self._hits(r) for r in res]

    def bm25(self, texts: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        """Milvus's BM25 over the jieba-analysed article text; an empty text has no hits."""
        asked = [i for i, t in enumerate(texts) if t.strip()]
        out: list[list[tuple[int, float]]] = [[] for _ in texts]
        if asked:
            res = self.client.search(self.collection, data=[texts[i] for i in asked], anns_field="sparse", limit=k,
                                     filter=self._live(), search_params={"metric_type": "BM25"})
            for i, r in zip(asked, res):
                out[i] = self._hits(r)
        return out

    def hybrid(self, vectors: np.ndarray, texts: Sequence[str], k: int,
               rrf_k: int = 60) -> list[list[tuple[int, float]]]:
        """In-engine RRF of the dense and the BM25 ranking, one request per (vector, text) pair."""
        from pymilvus import AnnSearchRequest, RRFRanker

        out = []
        for vector, text in zip(np.asarray(vectors, np.float32), texts):
            reqs = [AnnSearchRequest(data=[vector.tolist()], anns_field="dense", param=_dense_params(self.dense_index),
                                     limit=k, expr=self._live())]
            if text.strip():
                reqs.append(AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"},
                                             limit=k, expr=self._live()))
            res = self.client.hybrid_search(self.collection, reqs, RRFRanker(rrf_k), limit=k)
            out.append(self._hits(res[0]))
        return out

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, self.dim), np.float32)
        wanted = [self._keys[int(i)] for i in ids]
        rows = self.client.query(self.collection, filter=f"pk in {wanted}", output_fields=["pk", "dense"])
        by_key = {r["pk"]: r["dense"] for r in rows}
        return np.asarray([by_key[key] for key in wanted], np.float32)

    # ------------------------------------------------------------------ in-place update (one law)
    def apply_update(self, documents: Sequence, vectors: np.ndarray, ended: Sequence[int], generation: int) -> None:
        """Write generation `generation`: insert `documents` (new or amended articles), end the rows `ended`
        (amended or deleted articles). Rows that ended before the current generation are deleted first."""
        if generation <= self.generation:
            raise ValueError(f"generation {generation} is not after {self.generation}")
        if self.generation:
            self.client.delete(self.collection, filter=f"gen_to <= {self.generation}")
        if ended:
            fields = ["pk", "doc_id", "law", "text", "gen_from", "gen_to", "dense"]
            old = self.client.query(self.collection, filter=f"pk in {list(map(int, ended))}", output_fields=fields)
            self.client.upsert(self.collection, [{**{f: r[f] for f in fields}, "gen_to": generation} for r in old])
        if len(documents):
            self.client.upsert(self.collection, _rows(documents, np.asarray(vectors, np.float32), generation))
        self.client.flush(self.collection)
