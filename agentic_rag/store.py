"""Dense vector stores behind one small interface.

The retriever only needs "add normalised vectors, search by inner product, get a vector back, persist".
FAISS (exact inner product, `IndexFlatIP`) is the single-machine default; a Milvus backend for collections that
outgrow one machine implements the same `VectorStore` protocol.
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np


class VectorStore(Protocol):
    kind: str
    dim: int

    def __len__(self) -> int: ...

    def add(self, vectors: np.ndarray) -> None:
        """Append rows; row i of the store is document i of the index."""

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of shape (n_queries, k); missing hits have id -1."""

    def vectors(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these rows (used to score candidates without re-embedding them)."""

    def save(self, directory: Path) -> list[str]:
        """Write into `directory`; return the file names written (they go into the manifest)."""


class FaissStore:
    kind = "faiss"
    FILE = "vectors.faiss"

    def __init__(self, dim: int, index=None):
        import faiss

        self.dim = dim
        self._index = index if index is not None else faiss.IndexFlatIP(dim)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        self._index.add(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = max(1, min(k, len(self))) if len(self) else 1
        if len(self) == 0:
            n = len(queries)
            return np.zeros((n, 1), np.float32), -np.ones((n, 1), np.int64)
        return self._index.search(np.ascontiguousarray(queries, dtype=np.float32), k)

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._index.reconstruct(int(i)) for i in ids])

    def save(self, directory: Path) -> list[str]:
        import faiss

        faiss.write_index(self._index, str(directory / self.FILE))
        return [self.FILE]

    @classmethod
    def load(cls, directory: Path) -> FaissStore:
        import faiss

        index = faiss.read_index(str(directory / cls.FILE))
        return cls(index.d, index)
