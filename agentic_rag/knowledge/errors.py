"""Index errors, shared by the index and its stores: every message is shown to users as is."""
from __future__ import annotations


class IndexError_(RuntimeError):
    """Base of the index errors: the message is shown to users as is."""


class IndexNotFoundError(IndexError_):
    pass


class IndexMismatchError(IndexError_):
    pass


class StoreUnavailableError(IndexError_):
    """The store cannot be opened (a Milvus Lite file held by another process, a server not reachable)."""
