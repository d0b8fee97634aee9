"""Dense vector stores behind one small protocol, and the one registry that names them.

The index builds and loads its store through `STORES`, keyed by the manifest's ``store`` field, so a second
backend (Milvus for collections that outgrow one machine) is one entry here, not an edit of the index code.

A store lives in the index folder (FAISS; Milvus Lite's file) or on a server (a Milvus collection). What the
manifest records about it is a `StoreRef` (never a secret); how to reach a server is `StoreOptions` (from the
settings; the token lives only there).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from pydantic import SecretStr

if TYPE_CHECKING:
    from ..corpus import Document

SERVER_SCHEMES = ("http://", "https://", "tcp://")


def is_server_uri(uri: str | None) -> bool:
    """A Milvus server address, as opposed to unset / a local Lite file."""
    return bool(uri) and uri.lower().startswith(SERVER_SCHEMES)


@dataclass(frozen=True)
class StoreOptions:
    """How a build reaches its store; the token is never written to the manifest or logged."""

    uri: str | None = None  # Milvus server URI; None (or a *.db path): a Lite file inside the index folder
    token: SecretStr | None = field(default=None, repr=False)
    dense_index: str = "FLAT"

    @classmethod
    def from_settings(cls, settings) -> StoreOptions:
        return cls(uri=settings.milvus_uri if is_server_uri(settings.milvus_uri) else None,
                   token=settings.milvus_token, dense_index=settings.milvus_index)


@dataclass(frozen=True)
class StoreRef:
    """Where a built store is, as the manifest records it."""

    directory: Path  # the index folder
    uri: str | None = None  # a server's URI (no token); None: files in `directory`
    collection: str | None = None
    generation: int = 0  # bumped by each in-place update (Milvus); rows carry the generations they live in


class VectorStore(Protocol):
    kind: str
    dim: int

    def __len__(self) -> int: ...

    def add(self, vectors: np.ndarray, documents: Sequence[Document] | None = None) -> None:
        """Append rows; row i of the store is document i of the index (a store may keep their text, for BM25)."""

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of shape (n_queries, k), best first; missing hits have id -1."""

    def vectors(self, ids: list[int]) -> np.ndarray:
        """The stored vectors of these rows (used to score candidates without re-embedding them)."""

    def save(self, directory: Path) -> list[str]:
        """Write into `directory`; return the file names written (they go into the manifest)."""


@runtime_checkable
class TextSearchStore(Protocol):
    """A store that also ranks by its own full-text BM25 and fuses in the engine (Milvus); hits are
    (document position, score), best first, one list per query."""

    def bm25(self, texts: Sequence[str], k: int) -> list[list[tuple[int, float]]]: ...

    def hybrid(self, vectors: np.ndarray, texts: Sequence[str], k: int,
               rrf_k: int = 60) -> list[list[tuple[int, float]]]: ...

    def dense(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]: ...


class StoreFactory(Protocol):
    def create(self, dim: int, directory: Path, collection: str, options: StoreOptions) -> VectorStore: ...

    def load(self, ref: StoreRef, documents: Sequence[Document], options: StoreOptions) -> VectorStore: ...

    def drop(self, ref: StoreRef, options: StoreOptions) -> None:
        """Remove what lives outside the index folder (a server collection); files are the index's job."""


def _faiss() -> StoreFactory:
    from .faiss_store import FaissStore

    return FaissStore


def _milvus() -> StoreFactory:
    from .milvus_store import MilvusStore

    return MilvusStore


# name (as the manifest records it) → a loader of the backend module, imported only when selected.
STORES = {"faiss": _faiss, "milvus": _milvus}


def store_backend(kind: str) -> StoreFactory:
    try:
        return STORES[kind]()
    except KeyError:
        raise ValueError(f"unknown vector store {kind!r}; one of {', '.join(STORES)}") from None
