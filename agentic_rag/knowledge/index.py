"""The on-disk index: build atomically, load with checks, clean what we wrote.

Layout of a data dir::

    data/
      manifest.json            ← the only pointer; replaced atomically (os.replace) at the end of a build
      index-<hash>-<time>/     ← one complete build: documents.jsonl, tokens.jsonl, vectors.faiss
      .lock                    ← serialises concurrent builds

A build writes a ``.build-<corpus>-<embedder>`` folder, renames it to ``index-*`` and only then swaps the
manifest, so a build killed at any moment leaves the previous manifest pointing at the previous, complete index.

Embedding is resumable: documents are embedded in chunks (``EMBED_CHUNK_SIZE``), each finished chunk is saved as
``checkpoint/chunk-NNNNN.npy`` in the build folder and recorded in ``checkpoint/progress.json`` (corpus hash,
embedder id and dimension, chunk size). A rerun after a kill (or a crash) with the same corpus and embedder loads
those chunks and embeds only the rest; a checkpoint of another corpus or embedder is discarded. Progress (docs/s
and ETA) goes to a tqdm bar and to the log once per chunk. The checkpoint is removed before the folder becomes an
index. No pickle: JSON lines, .npy (numpy's format, read with ``allow_pickle=False``), a FAISS file and a JSON
manifest (embedder id and dimension, corpus hash, tokenizer version).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from tqdm import tqdm

from .corpus import Document, corpus_sha256, file_sha256, iter_jsonl
from .law_map import LawMap, load_law_map, write_law_map
from .stores import VectorStore, store_backend

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DOCS_FILE = "documents.jsonl"
TOKENS_FILE = "tokens.jsonl"
CHECKPOINT_DIR = "checkpoint"
PROGRESS_FILE = "progress.json"
DEFAULT_CHUNK_SIZE = 1024


class IndexError_(RuntimeError):
    """Base of the index errors: the message is shown to users as is."""


class IndexNotFoundError(IndexError_):
    pass


class IndexMismatchError(IndexError_):
    pass


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
    created_at: str


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


def is_up_to_date(data_dir: Path, docs: list[Document], embedder_id: str, tokenizer_version: str) -> bool:
    m = read_manifest(data_dir)
    return (m is not None and m.format_version == FORMAT_VERSION and m.embedder_id == embedder_id
            and m.tokenizer_version == tokenizer_version and m.corpus_sha256 == corpus_sha256(docs)
            and all((data_dir / f).exists() for f in m.files))


def _write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False))
            f.write("\n")


def build_dir_name(corpus_hash: str, embedder_id: str) -> str:
    """The build folder of one (corpus, embedder) pair: a rerun finds its checkpoint there."""
    return f".build-{corpus_hash[:12]}-{hashlib.sha256(embedder_id.encode()).hexdigest()[:8]}"


def _save_npy_atomic(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _write_json_atomic(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


class EmbeddingCheckpoint:
    """Finished chunks of document vectors in ``<build>/checkpoint/`` (see the module docstring)."""

    def __init__(self, directory: Path, corpus_hash: str, embedder_id: str, dim: int, n_docs: int, chunk_size: int):
        self.dir = directory
        self.key = {"corpus_sha256": corpus_hash, "embedder_id": embedder_id, "embedder_dim": dim,
                    "n_docs": n_docs, "chunk_size": chunk_size}
        self.dim, self.n_docs, self.chunk_size = dim, n_docs, chunk_size
        self.n_chunks = (n_docs + chunk_size - 1) // chunk_size
        self.done: list[int] = []

    def chunk_path(self, i: int) -> Path:
        return self.dir / f"chunk-{i:05d}.npy"

    def chunk_rows(self, i: int) -> int:
        return min(self.chunk_size, self.n_docs - i * self.chunk_size)

    def open(self) -> list[int]:
        """Load the progress file; keep the chunks it lists that are intact, drop everything else."""
        progress = self.dir / PROGRESS_FILE
        state = None
        if progress.exists():
            try:
                state = json.loads(progress.read_text(encoding="utf-8"))
            except ValueError:
                state = None
        if state is None or state.get("key") != self.key:
            if state is not None:
                log.info("checkpoint in %s is for another corpus/embedder/chunking: starting over", self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir.mkdir(parents=True)
            self.done = []
        else:
            self.done = sorted(i for i in state.get("done", []) if self._intact(i))
        self._write()
        return self.done

    def _intact(self, i: int) -> bool:
        try:
            arr = np.load(self.chunk_path(i), mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return False
        return arr.shape == (self.chunk_rows(i), self.dim)

    def _write(self) -> None:
        _write_json_atomic(self.dir / PROGRESS_FILE, {
            "key": self.key, "done": self.done, "n_chunks": self.n_chunks,
            "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})

    def save(self, i: int, vecs: np.ndarray) -> None:
        if vecs.shape != (self.chunk_rows(i), self.dim):
            raise IndexError_(f"embedder returned vectors of shape {vecs.shape} for chunk {i}, expected "
                              f"{(self.chunk_rows(i), self.dim)}")
        _save_npy_atomic(self.chunk_path(i), vecs)  # the chunk first, then the progress file that lists it
        self.done = sorted({*self.done, i})
        self._write()

    def load(self, i: int) -> np.ndarray:
        return np.load(self.chunk_path(i), allow_pickle=False)


def embed_resumable(docs: list[Document], embedder, checkpoint: EmbeddingCheckpoint, batch: int = 256) -> np.ndarray:
    """All document vectors, embedding only the chunks the checkpoint lacks (progress: tqdm bar + log lines)."""
    done = set(checkpoint.open())
    todo = [i for i in range(checkpoint.n_chunks) if i not in done]
    n_done_docs = sum(checkpoint.chunk_rows(i) for i in done)
    n_todo_docs = checkpoint.n_docs - n_done_docs
    if done:
        log.info("resuming the embedding from %s: %d of %d chunks done (%d documents), %d to go",
                 checkpoint.dir, len(done), checkpoint.n_chunks, n_done_docs, n_todo_docs)
    t0 = time.perf_counter()
    embedded = 0
    with tqdm(total=checkpoint.n_docs, initial=n_done_docs, desc=f"embed ({embedder.model_id})", unit="doc",
              smoothing=0.1) as bar:
        for n, i in enumerate(todo, start=1):
            lo = i * checkpoint.chunk_size
            texts = [d.index_text for d in docs[lo:lo + checkpoint.chunk_rows(i)]]
            parts = []
            for start in range(0, len(texts), batch):
                parts.append(np.asarray(embedder.encode_documents(texts[start:start + batch]), dtype=np.float32))
                bar.update(len(parts[-1]))
            checkpoint.save(i, np.concatenate(parts))
            embedded += len(texts)
            rate = embedded / max(time.perf_counter() - t0, 1e-9)
            left = n_todo_docs - embedded
            log.info("embedded chunk %d/%d (%d/%d documents): %.1f docs/s, ETA %s", n + len(done),
                     checkpoint.n_chunks, n_done_docs + embedded, checkpoint.n_docs, rate,
                     time.strftime("%H:%M:%S", time.gmtime(left / rate)) if rate else "?")
    return np.concatenate([checkpoint.load(i) for i in range(checkpoint.n_chunks)])


def build_index(docs: list[Document], embedder, tokenizer, data_dir: Path, corpus_source: str,
                corpus_file_sha256: str | None = None, force: bool = False, store: str = "faiss",
                chunk_size: int = DEFAULT_CHUNK_SIZE) -> Manifest:
    """Build (or keep, when inputs are unchanged and not `force`) the index in `data_dir`.

    A build killed while embedding resumes from its last finished chunk when rerun with the same corpus and
    embedder (`chunk_size` documents per checkpoint)."""
    if not docs:
        raise IndexError_(f"{corpus_source}: no documents to index")
    if chunk_size < 1:
        raise ValueError("chunk_size must be >= 1")
    data_dir = data_dir.resolve()
    with build_lock(data_dir):
        if not force and is_up_to_date(data_dir, docs, embedder.model_id, tokenizer.version):
            log.info("index in %s is up to date (same corpus, embedder and tokenizer); use --force to rebuild",
                     data_dir)
            return read_manifest(data_dir)
        corpus_hash = corpus_sha256(docs)
        tmp = data_dir / build_dir_name(corpus_hash, embedder.model_id)
        for stale in data_dir.glob(".build-*"):  # other corpora/embedders, or killed old-style builds; we hold the lock
            if stale != tmp:
                shutil.rmtree(stale, ignore_errors=True)
        tmp.mkdir(exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        t0 = time.perf_counter()
        try:
            tokens = [tokenizer.tokenize(d.keyword_text) for d in tqdm(docs, desc="tokenize", unit="doc")]
            _write_jsonl(tmp / TOKENS_FILE, tokens)
            _write_jsonl(tmp / DOCS_FILE, (d.to_dict() for d in docs))
            checkpoint = EmbeddingCheckpoint(tmp / CHECKPOINT_DIR, corpus_hash, embedder.model_id, embedder.dim,
                                             len(docs), chunk_size)
            vectors = store_backend(store).create(embedder.dim)
            vectors.add(embed_resumable(docs, embedder, checkpoint))
            files = [DOCS_FILE, TOKENS_FILE, *vectors.save(tmp), *write_law_map(tmp, docs, embedder)]
            final_name = f"index-{corpus_hash[:8]}-{stamp}"
            manifest = Manifest(index_dir=final_name, files=[f"{final_name}/{f}" for f in files],
                                embedder_id=embedder.model_id, embedder_dim=embedder.dim, doc_count=len(docs),
                                corpus_sha256=corpus_hash, corpus_source=corpus_source,
                                corpus_file_sha256=corpus_file_sha256, tokenizer_version=tokenizer.version, store=store,
                                laws=sorted({d.law for d in docs}),
                                created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
            shutil.rmtree(tmp / CHECKPOINT_DIR)
            os.replace(tmp, data_dir / final_name)
        except BaseException:
            # Keep the folder: its checkpoint lets the next build resume (it is replaced when inputs differ).
            log.warning("index build interrupted; finished embedding chunks are kept in %s and the next build with "
                        "the same corpus and embedder resumes from them", tmp)
            raise
        old = read_manifest(data_dir)
        new_manifest = data_dir / f".{MANIFEST}.tmp"
        new_manifest.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        os.replace(new_manifest, data_dir / MANIFEST)  # the commit point
        if old is not None and old.index_dir != final_name:
            shutil.rmtree(data_dir / old.index_dir, ignore_errors=True)
        log.info("built index of %d documents in %.1f s -> %s", len(docs), time.perf_counter() - t0, data_dir)
        return manifest


def load_index(data_dir: Path, embedder_id: str | None = None, embedder_dim: int | None = None,
               corpus_file: Path | None = None) -> LoadedIndex:
    """Load and check an index. Mismatched embedder → error; corpus changed since the build → warning."""
    manifest = read_manifest(data_dir)
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
    index_dir = data_dir / manifest.index_dir
    documents = [Document.from_dict(r) for r in iter_jsonl(index_dir / DOCS_FILE)]
    tokens = list(iter_jsonl(index_dir / TOKENS_FILE))
    store = store_backend(manifest.store).load(index_dir)
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
    return LoadedIndex(manifest, documents, tokens, store, load_law_map(index_dir))


def clean_index(data_dir: Path, dry_run: bool = False) -> list[Path]:
    """Remove exactly the files the manifest lists (and the manifest, and then-empty index folders)."""
    data_dir = data_dir.resolve()
    manifest = read_manifest(data_dir)
    if manifest is None:
        return []
    targets: list[Path] = []
    for rel in manifest.files:
        path = (data_dir / rel).resolve()
        if not path.is_relative_to(data_dir):
            raise IndexError_(f"refusing to remove {path}: outside the data dir {data_dir}")
        targets.append(path)
    targets.append(data_dir / MANIFEST)
    if dry_run:
        return targets
    for path in targets:
        path.unlink(missing_ok=True)
    index_dir = (data_dir / manifest.index_dir).resolve()
    if index_dir.is_relative_to(data_dir) and index_dir.is_dir() and not any(index_dir.iterdir()):
        index_dir.rmdir()
    return targets
