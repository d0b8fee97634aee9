"""The on-disk index: build atomically, load with checks, clean what we wrote.

Layout of a data dir::

    data/
      manifest.json            ← the only pointer; replaced atomically (os.replace) at the end of a build
      index-<hash>-<time>/     ← one complete build: documents.jsonl, tokens.jsonl, the law map (laws.json +
                                 law_vectors.npy) and the store's files (vectors.faiss; or milvus.json +
                                 milvus.db for Milvus Lite, milvus.json naming the collection for a Milvus server)
      .lock                    ← serialises concurrent builds and updates

A build writes a ``.build-<corpus>-<embedder>`` folder, renames it to ``index-*`` and only then swaps the
manifest, so a build killed at any moment leaves the previous manifest pointing at the previous, complete index;
its embedding checkpoint stays, so the next build of the same corpus and embedder resumes (`knowledge.embedding`).
A Milvus server collection is named after the index folder, so each build has its own; the previous one is dropped
after the swap, and a killed build's one by the next build. No pickle: JSON lines, .npy arrays (read with
``allow_pickle=False``), a FAISS file and a JSON manifest (embedder id and dimension, corpus hash, tokenizer
version, store, laws). In-place updates of one law: `knowledge.update`.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel
from tqdm import tqdm

from .corpus import Document, corpus_sha256, file_sha256, iter_jsonl
from .embedding import CHECKPOINT_DIR, DEFAULT_CHUNK_SIZE, EmbeddingCheckpoint, build_dir_name, embed_resumable
from .errors import IndexError_, IndexMismatchError, IndexNotFoundError, StoreUnavailableError  # noqa: F401
from .law_map import LawMap, load_law_map, write_law_map
from .stores import StoreOptions, StoreRef, VectorStore, store_backend

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DOCS_FILE = "documents.jsonl"
TOKENS_FILE = "tokens.jsonl"
INSERT_BATCH = 2048  # rows per store insert (a Milvus insert message stays small)


class Manifest(BaseModel):
    format_version: int = FORMAT_VERSION
    index_dir: str
    files: list[str]  # relative to the data dir; clean_index removes exactly these
    embedder_id: str
    embedder_dim: int
    doc_count: int
    corpus_sha256: str
    corpus_source: str
    corpus_file_sha256: str | None = None
    tokenizer_version: str
    store: str = "faiss"
    laws: list[str] = []  # the laws the knowledge base holds (full titles)
    store_uri: str | None = None  # a Milvus server's URI (never its token); None: the store is in index_dir
    collection: str | None = None  # the Milvus collection of this build
    generation: int = 0  # in-place updates so far (each names its documents/tokens files)
    updates: list[dict] = []  # what each in-place update changed: law, added, replaced, deleted, at
    created_at: str

    def store_ref(self, data_dir: Path) -> StoreRef:
        return StoreRef(data_dir / self.index_dir, self.store_uri, self.collection, self.generation)

    @property
    def docs_file(self) -> str:
        return DOCS_FILE if not self.generation else f"documents.g{self.generation}.jsonl"

    @property
    def tokens_file(self) -> str:
        return TOKENS_FILE if not self.generation else f"tokens.g{self.generation}.jsonl"


@dataclass
class LoadedIndex:
    manifest: Manifest
    documents: list[Document]
    tokens: list[list[str]]
    store: VectorStore
    law_map: LawMap | None = None  # absent in indexes built before it existed


def read_manifest(data_dir: Path) -> Manifest | None:
    path = data_dir / MANIFEST
    if not path.exists():
        return None
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise IndexMismatchError(f"{path} is not a valid index manifest ({e.__class__.__name__}). "
                                 f"Rebuild: python init_index.py --force --data-dir {data_dir}") from e


@contextmanager
def build_lock(data_dir: Path) -> Iterator[None]:
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def is_up_to_date(data_dir: Path, docs: list[Document], embedder_id: str, tokenizer_version: str,
                  store: str = "faiss", store_options: StoreOptions | None = None) -> bool:
    m = read_manifest(data_dir)
    uri = (store_options or StoreOptions()).uri if store == "milvus" else None
    return (m is not None and m.format_version == FORMAT_VERSION and m.embedder_id == embedder_id
            and m.tokenizer_version == tokenizer_version and m.corpus_sha256 == corpus_sha256(docs)
            and m.store == store and m.store_uri == uri and all((data_dir / f).exists() for f in m.files))


def _write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False))
            f.write("\n")


def write_manifest(data_dir: Path, manifest: Manifest) -> None:
    """The commit point of a build or an update: one atomic rename."""
    new_manifest = data_dir / f".{MANIFEST}.tmp"
    new_manifest.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    os.replace(new_manifest, data_dir / MANIFEST)


def drop_store(kind: str, ref: StoreRef, options: StoreOptions) -> None:
    """Drop what a build created outside its folder (a Milvus server collection) on the server it was created on,
    not on today's MILVUS_URI; logged, never fatal: the manifest already points elsewhere, so a leftover collection
    costs space, not correctness."""
    try:
        store_backend(kind).drop(ref, StoreOptions(token=options.token))
    except Exception as e:  # noqa: BLE001
        log.warning("could not drop the %s store %s on %s: %s", kind, ref.collection, ref.uri, e)


def _drop_build_store(build: Path, options: StoreOptions) -> None:
    """Drop the Milvus server collection a build folder created (milvus.json is written before it is)."""
    info = build / "milvus.json"
    if info.exists():
        raw = json.loads(info.read_text(encoding="utf-8"))
        drop_store("milvus", StoreRef(build, raw.get("uri"), raw.get("collection")), options)
        info.unlink()


def _clean_stale_builds(data_dir: Path, options: StoreOptions, keep: Path | None = None) -> None:
    """Remove folders (and Milvus server collections) left by killed builds; `keep` keeps its embedding
    checkpoint (the build about to resume from it). The caller holds the lock."""
    for stale in data_dir.glob(".build-*"):
        _drop_build_store(stale, options)
        if stale != keep:
            shutil.rmtree(stale, ignore_errors=True)


def _build_files(docs: list[Document], embedder, tokenizer, tmp: Path, final_name: str, store: str,
                 options: StoreOptions, chunk_size: int) -> tuple[list[str], str | None]:
    """Write documents, tokens, the store and the law map into `tmp`; the files written and the collection."""
    from .stores.milvus_store import collection_name

    tokens = [tokenizer.tokenize(d.keyword_text) for d in tqdm(docs, desc="tokenize", unit="doc")]
    _write_jsonl(tmp / TOKENS_FILE, tokens)
    _write_jsonl(tmp / DOCS_FILE, (d.to_dict() for d in docs))
    checkpoint = EmbeddingCheckpoint(tmp / CHECKPOINT_DIR, corpus_sha256(docs), embedder.model_id, embedder.dim,
                                     len(docs), chunk_size)
    embedded = embed_resumable(docs, embedder, checkpoint)
    collection = collection_name(final_name) if store == "milvus" else None
    vectors = store_backend(store).create(embedder.dim, tmp, collection, options)
    try:
        for start in range(0, len(docs), INSERT_BATCH):
            vectors.add(embedded[start:start + INSERT_BATCH], docs[start:start + INSERT_BATCH])
        return [DOCS_FILE, TOKENS_FILE, *vectors.save(tmp), *write_law_map(tmp, docs, embedder)], collection
    except BaseException:
        getattr(vectors, "close", lambda release=True: None)(release=True)  # let go of the folder about to be moved
        raise


def build_index(docs: list[Document], embedder, tokenizer, data_dir: Path, corpus_source: str,
                corpus_file_sha256: str | None = None, force: bool = False, store: str = "faiss",
                store_options: StoreOptions | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE) -> Manifest:
    """Build (or keep, when inputs are unchanged and not `force`) the index in `data_dir`.

    A build killed while embedding resumes from its last finished chunk when rerun with the same corpus and
    embedder (`chunk_size` documents per checkpoint)."""
    if not docs:
        raise IndexError_(f"{corpus_source}: no documents to index")
    if chunk_size < 1:
        raise ValueError("chunk_size must be >= 1")
    options = store_options or StoreOptions()
    data_dir = data_dir.resolve()
    with build_lock(data_dir):
        if not force and is_up_to_date(data_dir, docs, embedder.model_id, tokenizer.version, store, options):
            log.info("index in %s is up to date (same corpus, embedder, tokenizer and store); use --force to rebuild",
                     data_dir)
            return read_manifest(data_dir)
        corpus_hash = corpus_sha256(docs)
        tmp = data_dir / build_dir_name(corpus_hash, embedder.model_id)
        _clean_stale_builds(data_dir, options, keep=tmp)
        tmp.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        final_name = f"index-{corpus_hash[:8]}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"
        try:
            files, collection = _build_files(docs, embedder, tokenizer, tmp, final_name, store, options, chunk_size)
            manifest = Manifest(index_dir=final_name, files=[f"{final_name}/{f}" for f in files],
                                embedder_id=embedder.model_id, embedder_dim=embedder.dim, doc_count=len(docs),
                                corpus_sha256=corpus_hash, corpus_source=corpus_source,
                                corpus_file_sha256=corpus_file_sha256, tokenizer_version=tokenizer.version, store=store,
                                laws=sorted({d.law for d in docs}), collection=collection,
                                store_uri=options.uri if store == "milvus" else None,
                                created_at=datetime.now(UTC).isoformat(timespec="seconds"))
            shutil.rmtree(tmp / CHECKPOINT_DIR, ignore_errors=True)
            os.replace(tmp, data_dir / final_name)
        except BaseException:
            _drop_build_store(tmp, options)  # a half-filled server collection; the embedding checkpoint stays
            log.warning("index build interrupted; finished embedding chunks are kept in %s and the next build with "
                        "the same corpus and embedder resumes from them", tmp)
            raise
        old = read_manifest(data_dir)
        write_manifest(data_dir, manifest)  # the commit point
        if old is not None and old.index_dir != final_name:
            drop_store(old.store, old.store_ref(data_dir), options)
            shutil.rmtree(data_dir / old.index_dir, ignore_errors=True)
        log.info("built index of %d documents in %.1f s -> %s", len(docs), time.perf_counter() - t0, data_dir)
        return manifest


def _check_manifest(manifest: Manifest | None, data_dir: Path, embedder_id: str | None) -> Manifest:
    if manifest is None:
        raise IndexNotFoundError(f"no index in {data_dir} (no {MANIFEST}). Build it first: "
                                 f"python init_index.py --data-dir {data_dir}  (or `make demo`)")
    if manifest.format_version != FORMAT_VERSION:
        raise IndexMismatchError(f"index in {data_dir} has format {manifest.format_version}, this code reads "
                                 f"{FORMAT_VERSION}. Rebuild: python init_index.py --force")
    if embedder_id is not None and manifest.embedder_id != embedder_id:
        raise IndexMismatchError(
            f"index in {data_dir} was built with embedder {manifest.embedder_id!r} but {embedder_id!r} is "
            f"configured: query vectors would not match. Rebuild with python init_index.py --force, or set "
            f"EMBEDDING_MODEL={manifest.embedder_id}")
    missing = [f for f in manifest.files if not (data_dir / f).exists()]
    if missing:
        raise IndexNotFoundError(f"index in {data_dir} is incomplete (missing {', '.join(missing)}). "
                                 "Rebuild: python init_index.py --force")
    return manifest


def load_index(data_dir: Path, embedder_id: str | None = None, embedder_dim: int | None = None,
               corpus_file: Path | None = None, store_options: StoreOptions | None = None) -> LoadedIndex:
    """Load and check an index. Mismatched embedder → error; corpus changed since the build → warning."""
    manifest = _check_manifest(read_manifest(data_dir), data_dir, embedder_id)
    index_dir = data_dir / manifest.index_dir
    documents = [Document.from_dict(r) for r in iter_jsonl(index_dir / manifest.docs_file)]
    tokens = list(iter_jsonl(index_dir / manifest.tokens_file))
    store = store_backend(manifest.store).load(manifest.store_ref(data_dir), documents,
                                               store_options or StoreOptions())
    dims = {manifest.embedder_dim, store.dim} | ({embedder_dim} if embedder_dim is not None else set())
    if len(dims) != 1 or not (len(documents) == len(tokens) == len(store) == manifest.doc_count):
        raise IndexMismatchError(
            f"index in {data_dir} is inconsistent: dims {sorted(dims)}, {len(documents)} documents, "
            f"{len(tokens)} token rows, {len(store)} vectors, manifest says {manifest.doc_count}. "
            "Rebuild: python init_index.py --force")
    if corpus_file is not None and manifest.corpus_file_sha256 and corpus_file.exists():
        same_file = Path(manifest.corpus_source).name == corpus_file.name
        if same_file and file_sha256(corpus_file) != manifest.corpus_file_sha256:
            log.warning("%s changed since the index was built (%s): results reflect the old text until you run "
                        "python init_index.py", corpus_file, manifest.created_at)
    return LoadedIndex(manifest, documents, tokens, store, load_law_map(data_dir / manifest.index_dir))


def clean_index(data_dir: Path, dry_run: bool = False,
                store_options: StoreOptions | None = None) -> list[Path | str]:
    """Remove exactly the files the manifest lists (and the manifest, and then-empty index folders), and drop
    the Milvus server collection it names; the collection is listed as ``milvus collection NAME on URI``."""
    data_dir = data_dir.resolve()
    manifest = read_manifest(data_dir)
    if manifest is None:
        return []
    targets: list[Path | str] = []
    for rel in manifest.files:
        path = (data_dir / rel).resolve()
        if not path.is_relative_to(data_dir):
            raise IndexError_(f"refusing to remove {path}: outside the data dir {data_dir}")
        targets.append(path)
    targets.append(data_dir / MANIFEST)
    if manifest.store_uri and manifest.collection:
        targets.append(f"milvus collection {manifest.collection} on {manifest.store_uri}")
    if dry_run:
        return targets
    store_backend(manifest.store).drop(manifest.store_ref(data_dir), store_options or StoreOptions())
    for path in targets:
        if isinstance(path, Path):
            path.unlink(missing_ok=True)
    index_dir = (data_dir / manifest.index_dir).resolve()
    if index_dir.is_relative_to(data_dir) and index_dir.is_dir() and not any(index_dir.iterdir()):
        index_dir.rmdir()
    return targets
