"""Shared fixtures: offline environment, a real PIPL index built once per session with the offline embedder."""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agentic_rag.config import PROJECT_ROOT, Settings  # noqa: E402

MODELS_DIR = PROJECT_ROOT / "models"
EMBEDDER = MODELS_DIR / "embeddinggemma-300m"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


def require_embedder() -> None:
    if not (EMBEDDER / ".complete.json").exists():
        pytest.skip("offline embedder missing: run `make models` (python download_models.py)")


@pytest.fixture(scope="session")
def pipl_data_dir(tmp_path_factory) -> Path:
    """A real index of chinese_law.txt built once per test session with EmbeddingGemma."""
    require_embedder()
    from agentic_rag.corpus import file_sha256, load_corpus
    from agentic_rag.embedder import load_embedder
    from agentic_rag.index import build_index
    from agentic_rag.models import resolve_embedder
    from agentic_rag.tokenizer import LegalTokenizer

    data_dir = tmp_path_factory.mktemp("pipl_index")
    settings = Settings()
    docs = load_corpus(settings.corpus_path, structure=settings.corpus_structure)
    embedder = load_embedder(resolve_embedder(None, MODELS_DIR))
    build_index(docs, embedder, LegalTokenizer(), data_dir, corpus_source=str(settings.corpus_path),
                corpus_file_sha256=file_sha256(settings.corpus_path))
    return data_dir


@pytest.fixture(scope="session")
def pipl_settings(pipl_data_dir) -> Settings:
    return Settings(data_dir=pipl_data_dir, models_dir=MODELS_DIR, reranker="none", _env_file=None)


@pytest.fixture(scope="session")
def retriever(pipl_settings):
    from agentic_rag.retriever import LocalRetriever

    return LocalRetriever.from_settings(pipl_settings)
