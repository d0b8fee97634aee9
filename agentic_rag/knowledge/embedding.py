"""Resumable embedding for index builds: a killed build continues from its last finished chunk, not from zero.

Documents are embedded in chunks (``EMBED_CHUNK_SIZE``); each finished chunk is saved as
``checkpoint/chunk-NNNNN.npy`` in the build folder and recorded in ``checkpoint/progress.json`` (corpus hash,
embedder id and dimension, chunk size). A rerun after a kill (or a crash) with the same corpus and embedder loads
those chunks and embeds only the rest; a checkpoint of another corpus or embedder is discarded. Progress (docs/s
and ETA) goes to a tqdm bar and to the log once per chunk. The checkpoint is removed before the build folder
becomes an index. .npy files are numpy's format, written and read with ``allow_pickle=False``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .corpus import Document
from .errors import IndexError_

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
PROGRESS_FILE = "progress.json"
DEFAULT_CHUNK_SIZE = 1024


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
            "updated_at": datetime.now(UTC).isoformat(timespec="seconds")})

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
