"""Dense vector stores behind one small protocol, and the one registry that names them.

The index builds and loads its store through `STORES`, keyed by the manifest's ``store`` field, so a second
backend (Milvus for collections that outgrow one machine) is one entry here, not an edit of the index code.
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
        """(scores, ids) of shape (n_queries, k), best first; missing hits have id -1."""

    def vectors(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these rows (used to score candidates without re-embedding them)."""

    def save(self, directory: Path) -> list[str]:
        """Write into `directory`; return the file names written (they go into the manifest)."""


class StoreFactory(Protocol):
    def create(self, dim: int) -> VectorStore: ...

    def load(self, directory: Path) -> VectorStore: ...


def _faiss() -> StoreFactory:
    from .faiss_store import FaissStore

    return FaissStore


# name (as the manifest records it) → a loader of the backend module, imported only when selected.
STORES = {"faiss": _faiss}


def store_backend(kind: str) -> StoreFactory:
    try:
        return STORES[kind]()
    except KeyError:
        raise ValueError(f"unknown vector store {kind!r}; one of {', '.join(STORES)}") from None
