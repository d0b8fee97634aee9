"""FAISS exact inner-product store (`IndexFlatIP`): the single-machine default.

Vectors are L2-normalised by the embedder, so inner product is cosine similarity.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


class FaissStore:
    kind = "faiss"
    FILE = "vectors.faiss"

    @classmethod
    def create(cls, dim: int, directory: Path | None = None, collection: str | None = None,
               options=None) -> FaissStore:
        return cls(dim)  # everything lives in memory until save() writes the index folder

    def __init__(self, dim: int, index=None):
        import faiss

        self.dim = dim
        self._index = index if index is not None else faiss.IndexFlatIP(dim)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, vectors: np.ndarray, documents: Sequence | None = None) -> None:
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
    def load(cls, ref, documents: Sequence | None = None, options=None) -> FaissStore:
        import faiss

        directory = ref if isinstance(ref, Path) else ref.directory
        index = faiss.read_index(str(directory / cls.FILE))
        return cls(index.d, index)

    @classmethod
    def drop(cls, ref, options=None) -> None:
        """Nothing outside the index folder."""
