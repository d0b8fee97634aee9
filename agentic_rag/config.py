"""One typed settings object, read from the environment and `.env`.

Every knob a deployment may turn lives here (and in `.env.example`) so that the code never reads
`os.environ` on its own. Names are the plain upper-case field names (``EMBEDDING_MODEL``, ``RRF_K`` …).
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# LiteLLM downloads a price map at import unless told not to; this machine class has no such network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Run time never downloads weights: sentence-transformers / transformers must only look locally.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

Matcher = Literal["ensemble", "hybrid", "bm25", "vector", "gram"]


class Settings(BaseSettings):
    """Configuration of the retriever and the agent (see `.env.example` for a commented copy)."""

    model_config = SettingsConfigDict(env_file=str(PROJECT_ROOT / ".env"), env_file_encoding="utf-8",
                                      extra="ignore", case_sensitive=False)

    # --- paths
    data_dir: Path = Field(PROJECT_ROOT / "data", description="built index (init_index.py writes it)")
    models_dir: Path = Field(PROJECT_ROOT / "models", description="downloaded weights (download_models.py)")
    corpus_path: Path = Field(PROJECT_ROOT / "chinese_law.txt", description="the knowledge base source")
    corpus_structure: Path | None = Field(PROJECT_ROOT / "agentic_rag" / "resources" / "pipl_structure.jsonl",
                                          description="optional chapter/section file for corpus_path")

    kb_law: str | None = Field(None, description="the law the knowledge base holds, as prompts and the citation "
                                                 "check name it; default: the law of the index when it holds one")

    # --- models for retrieval
    embedding_model: str | None = Field(None, description="name or path; default: bge-m3 if downloaded, "
                                                           "else the offline EmbeddingGemma")
    reranker: Literal["auto", "none", "cross-encoder"] = Field(
        "auto", description="auto: cross-encoder when a reranker model is available, else none")
    reranker_model: str | None = Field(None, description="cross-encoder name or path; default: bge-reranker-v2-m3 "
                                                          "if downloaded")
    embed_batch_size: int = 16

    # --- retrieval
    bm25_backend: Literal["sparse", "rank_bm25"] = "sparse"
    rrf_k: int = Field(60, ge=1)
    top_k: int = Field(5, ge=1, le=50)
    channel_candidates: int = Field(30, ge=1, description="hits taken from each channel before fusion")
    rerank_top_n: int = Field(10, ge=1)
    max_query_chars: int = Field(1000, ge=10, description="longer questions are rejected with a clear message")

    # --- agent
    agentic_rag_model: str | None = Field(None, description="LiteLLM model string or local/<gguf name>")
    rewriter_model: str | None = None
    evaluator_model: str | None = None
    answer_model: str | None = None
    deepseek_api_key: str | None = None
    local_llm: str = Field("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", description="GGUF in models_dir or a path")
    local_llm_ctx: int = 4096
    local_llm_threads: int = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    llm_timeout_s: float = Field(300.0, description="per LLM call; the local 1.5B model needs ~60 s for an answer on 2 cores")
    llm_max_retries: int = 1
    quality_threshold: int = Field(32, ge=0, le=40)
    min_vector_score: float = Field(
        0.22, description="best dense cosine below this → FAIL without asking the grader (off-topic). Calibrated for "
                          "EmbeddingGemma on the eval set: in-scope min 0.228, chit-chat median 0.15, other laws 0.28")
    max_attempts: int = Field(1, ge=1, le=4, description="retrieve+evaluate rounds; the best one is kept")

    # --- web search
    serpapi_api_key: str | None = None
    serpapi_base_url: str | None = Field(None, description="another SerpApi-compatible host (default serpapi.com)")
    serpapi_timeout_s: float = 15.0
    web_results: int = 5


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests build their own `Settings(...)` instead of mutating this one)."""
    return Settings()
