"""Second-stage rerankers behind one interface.

A real cross-encoder (BAAI/bge-reranker-v2-m3 after ``download_models.py --source hub``, or any
sentence-transformers CrossEncoder folder in RERANKER_MODEL) is used when present. The offline pack has no
Chinese cross-encoder, so by default nothing reranks: docs/evaluation.md ("Reranking on the offline default")
gives the measurements behind that choice.
"""
from __future__ import annotations

import logging
import threading
from typing import Protocol

from ..config import Settings
from ..weights import ModelNotAvailableError, resolve_reranker

log = logging.getLogger(__name__)


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: list[str]) -> list[float]:
        """A relevance score per passage (higher is better); only the order matters."""


class CrossEncoderReranker:
    def __init__(self, path: str, name: str, batch_size: int = 16):
        from sentence_transformers import CrossEncoder

        self.name = name
        self._model = CrossEncoder(path, device="cpu", local_files_only=True)
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            scores = self._model.predict([(query, p) for p in passages], batch_size=self._batch_size,
                                         show_progress_bar=False, convert_to_numpy=True)
        return [float(s) for s in scores]


def make_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None. `auto` uses a cross-encoder only when one is available locally."""
    if settings.reranker == "none":
        return None
    resolved = resolve_reranker(settings.reranker_model, settings.models_dir)
    if resolved is None:
        if settings.reranker == "cross-encoder":
            raise ModelNotAvailableError(
                "RERANKER=cross-encoder but no cross-encoder is available. Run: python download_models.py "
                "--source hub --only bge-reranker-v2-m3, or set RERANKER_MODEL to a local folder, or RERANKER=none.")
        log.info("no cross-encoder available locally: fusion order is final (RERANKER=auto)")
        return None
    return CrossEncoderReranker(resolved.path, resolved.model_id)
