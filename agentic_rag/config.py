"""One typed settings object, read from the environment and `.env`.

Every knob a deployment may turn lives here (and in `.env.example`) so that the code never reads `os.environ` on
its own. Names are the plain upper-case field names (``EMBEDDING_MODEL``, ``RRF_K`` …).

Keys are `SecretStr`: they print as ``**********`` and only `reveal()` at the point of use gives the value. No
agent holds a `Settings` as a pydantic field (ADK serialises agent fields for the Dev UI): stages keep it private.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from . import offline  # noqa: F401  (sets the offline environment before any model library is imported)
from .env_file import PROJECT_ROOT, env_file

ENV_FILE = env_file()

WebProviderName = Literal["auto", "serpapi", "tavily", "bocha", "none"]


def reveal(secret: SecretStr | str | None) -> str | None:
    """The key's value at the point of use, or None when it is unset or blank."""
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else str(secret or "")
    return value.strip() or None


class Settings(BaseSettings):
    """Configuration of the retriever and the agent (see `.env.example` for a commented copy)."""

    model_config = SettingsConfigDict(env_file=ENV_FILE, env_file_encoding="utf-8", extra="ignore",
                                      case_sensitive=False, populate_by_name=True)

    # --- paths
    data_dir: Path = Field(PROJECT_ROOT / "data", description="built index (init_index.py writes it)")
    models_dir: Path = Field(PROJECT_ROOT / "models", description="downloaded weights (download_models.py)")
    corpus_path: Path = Field(PROJECT_ROOT / "chinese_law.txt", description="the knowledge base source")
    corpus_structure: Path | None = Field(PROJECT_ROOT / "agentic_rag" / "resources" / "pipl_structure.jsonl",
                                          description="optional chapter/section file for corpus_path")
    kb_law: str | None = Field(None, description="the law the knowledge base holds, as prompts and the citation "
                                                 "check name it; default: the law of the index when it holds one")

    # --- vector store (init_index.py builds into it; a built index is read back from what its manifest records)
    vector_store: Literal["faiss", "milvus"] = Field(
        "faiss", description="faiss: exact search in process; milvus: dense + Milvus BM25 + in-engine RRF (pymilvus)")
    milvus_uri: str | None = Field(
        None, description="a Milvus server (http://host:19530); unset or a *.db path: a Milvus Lite file inside "
                          "the index folder (one process at a time)")
    milvus_token: SecretStr | None = Field(None, description="user:password or an API key; never logged or stored")
    milvus_index: Literal["FLAT", "IVF_FLAT", "HNSW", "AUTOINDEX"] = Field(
        "FLAT", description="dense index of a new build: FLAT is exact like FAISS (HNSW needs a server, not Lite)")
    milvus_hybrid: Literal["engine", "client"] = Field(
        "client", description="matcher hybrid on Milvus: client = the per-query-type weighted RRF the FAISS index "
                              "uses; engine = Milvus's own RRF (equal weights: PIPL eval R@5 0.805 vs 0.895, "
                              "docs/milvus.md)")

    # --- models for retrieval
    embedding_model: str | None = Field(None, description="name or path; default: bge-m3 if downloaded, "
                                                           "else the offline EmbeddingGemma")
    reranker: Literal["auto", "none", "cross-encoder"] = Field(
        "auto", description="auto: cross-encoder when a reranker model is available, else none")
    reranker_model: str | None = Field(None, description="cross-encoder name or path; default: bge-reranker-v2-m3 "
                                                          "if downloaded")
    embed_batch_size: int = Field(4, ge=1, description="texts per encoder batch (torch). EmbeddingGemma on 2 cores: "
                                                       "4 → 8.1 docs/s, 16 → 5.8 (bench/results/embedders.json)")
    embed_threads: int = Field(1, ge=1, description="torch threads for query embedding (1 is fastest for one "
                                                    "short query on 2 busy cores: bench/results/bench.json)")
    embed_max_seq_length: int | None = Field(
        None, ge=8, description="sentence-transformers models: tokens per text (default: the model's own); part of "
                                "the index's embedder id")
    embed_truncate_dim: int | None = Field(
        None, ge=8, description="Matryoshka: keep the first N dimensions, renormalised (EmbeddingGemma: 512/256/128); "
                                "part of the index's embedder id")
    embed_quantize: Literal["none", "int8", "onnx-int8"] = Field(
        "none", description="int8: torch dynamic quantisation of the embedder's Linear layers (CPU); onnx-int8: the "
                            "ONNX Runtime export with int8 weights (python scripts/export_onnx.py), "
                            "x2.4 the docs/s on 2 cores (docs/scale-and-speed.md)")
    embed_chunk_size: int = Field(1024, ge=1, description="index build: documents per resumable checkpoint")
    query_adapter: str | None = Field(
        None, description="a query-side adapter (.npy, retrieval/adapter.py); default: DATA_DIR/query_adapter.npy "
                          "when present (bench/stard_adapter.py --save writes it for a national index), else the "
                          "shipped one for lay questions when it fits the embedder (bench/lay_adapter.py); none: off")

    # --- retrieval
    bm25_backend: Literal["sparse", "rank_bm25"] = "sparse"
    rrf_k: int = Field(60, ge=1)
    top_k: int = Field(5, ge=1, le=50)
    channel_candidates: int = Field(30, ge=1, description="hits taken from each channel before fusion")
    fusion_weights: dict[str, dict[str, float]] | None = Field(
        None, description='per query type channel weights, JSON: {"semantic": {"vector": 1, "bm25": 0.2, "gram": 0.1}, '
                          '...}; types left out keep fusion.CHANNEL_WEIGHTS (chosen by cross-validation on PIPL)')
    law_vote_boost: float = Field(
        1.0, ge=1.0, description="several laws: a factor for the law the top hits agree on (1 = off: on STARD over "
                                 "all national laws every lift, 1.25-2, lowered R@10 in every fold); the law a "
                                 "question names gets 3")
    rerank_top_n: int = Field(10, ge=1)
    max_query_chars: int = Field(1000, ge=10, description="longer questions are rejected with a clear message")

    # --- LLMs
    agentic_rag_model: str | None = Field(None, description="LiteLLM model string or local/<gguf name>")
    contextualiser_model: str | None = Field(None, description="turns a follow-up into a standalone question")
    contextualise_with: Literal["auto", "model", "rules"] = Field(
        "auto", description="how a follow-up becomes a standalone question: model (the contextualiser's rewrite, "
                            "checked, else the rule form), rules (the rule form, no model call); auto: rules with the "
                            "embedded model, whose rewrites retrieved worse than the rule form at 9 s p50 "
                            "(bench/results/contextualise.json), model otherwise")
    router_model: str | None = None
    rewriter_model: str | None = None
    evaluator_model: str | None = None
    answer_model: str | None = None
    deepseek_api_key: SecretStr | None = None
    local_llm: str = Field("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", description="GGUF in models_dir or a path")
    local_llm_ctx: int = 4096
    local_llm_threads: int = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    llm_timeout_s: float = Field(120.0, gt=0, description="one LLM call; the question deadline bounds it too")
    llm_max_retries: int = Field(1, ge=0, le=5)
    llm_retry_after_cap_s: float = Field(10.0, ge=0, description="longest Retry-After honoured before a retry")
    question_deadline_s: float | None = Field(
        None, gt=0, description="whole question; default 300 s with the embedded model, 90 s with API models")

    # --- the gate and the answer
    gate_mode: Literal["auto", "signals", "logits", "json"] = Field(
        "auto", description="logits: the calibrated gate with the model's per-article 是/否 logit (the embedded "
                            "model, or an API model that returns logprobs, else a JSON grade); signals: the same "
                            "gate on retrieval evidence alone, no model call (p50 ~11 → 1-5 s, but more answers on a "
                            "non-governing article: bench/results/answers_signals_gate*.json); json: a JSON grade. "
                            "auto: with the embedded evaluator, retrieval evidence alone where it decides as its logit "
                            "gate would (about half of questions, eval/results/gate_cascade.json), else logits; an "
                            "API evaluator is always asked")
    answer_max_tokens: int = Field(600, ge=100, le=4000, description="the web answer's token budget (~400 characters)")
    support_llm: Literal["auto", "off"] = Field(
        "auto", description="auto: the support check of the model's sentences also reads the model's 是/否 logit "
                            "where it can give one (the embedded model) and the fitted weights use it; off: the code checks only")
    polarity_llm: Literal["auto", "off"] = Field(
        "auto", description="auto: where the label rules say 视情况 on a yes/no question, the embedded model's 是/否 "
                            "logit decides at its calibrated extremes (resources/polarity_calibration.json, that "
                            "model's only); off: the rules' label stands")
    quality_threshold: int = Field(32, ge=0, le=40)
    min_vector_score: float = Field(
        0.22, description="best dense cosine below this → FAIL without asking the grader (off-topic). Calibrated for "
                          "EmbeddingGemma on the eval set: in-scope min 0.228, chit-chat median 0.15, other laws 0.28")

    rewrite_first_attempt: bool = Field(
        False, description="rewrite the question before the first retrieval too (not only on a retry). Off: with the "
                           "embedded model it lowered semantic questions' R@5 (eval/results/rewrite_effect.json)")

    # --- the agentic loop
    agentic_enabled: bool = Field(True, description="false: one attempt, no router LLM, no multi-intent split")
    agentic_max_retries: int | None = Field(
        None, ge=0, le=4, description="further retrieve+grade attempts after a FAIL; default 2 with API models, 0 with "
                                      "the embedded model (retry_policy.attempt_budget says why)")
    follow_up_depth: int = Field(2, ge=0, le=3, description="how far 依照本法第X条 references are followed")
    max_sub_questions: int = Field(3, ge=1, le=5)
    router_law_margin: float | None = Field(
        0.1, description="a question closer (cosine) to another national law's title and first articles than to the "
                         "knowledge base's best article by more than this is routed out of it; empty disables. "
                         "Calibrated for EmbeddingGemma on eval/pipl_eval.jsonl (1 of 95 in-scope questions lost)")

    # --- web search (FAIL path)
    web_search_provider: WebProviderName = "auto"
    serpapi_api_key: SecretStr | None = None
    serpapi_base_url: str | None = Field(None, description="another SerpApi-compatible host (default serpapi.com)")
    tavily_api_key: SecretStr | None = None
    tavily_base_url: str | None = None
    bocha_api_key: SecretStr | None = None
    bocha_base_url: str | None = None
    web_timeout_s: float = Field(15.0, gt=0, validation_alias=AliasChoices("web_timeout_s", "serpapi_timeout_s"))
    web_results: int = Field(5, ge=1, le=10)
    web_snippet_chars: int = Field(300, ge=50, le=2000, description="web text per result given to the LLM")

    def secrets(self) -> list[str]:
        """Every configured key's value (the log filter redacts them)."""
        fields = (self.deepseek_api_key, self.serpapi_api_key, self.tavily_api_key, self.bocha_api_key,
                  self.milvus_token)
        return [v for v in map(reveal, fields) if v]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests build their own `Settings(...)` instead of mutating this one)."""
    return Settings()
