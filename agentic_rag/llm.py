"""Which LLM each agent uses.

Order: the per-agent override (REWRITER_MODEL / EVALUATOR_MODEL / ANSWER_MODEL) → AGENTIC_RAG_MODEL →
``deepseek/deepseek-chat`` when DEEPSEEK_API_KEY is set → the embedded local model (``local/<gguf>``, llama.cpp
in process). Any LiteLLM model string works (``openai/...``, ``ollama_chat/...`` with their usual env vars);
``local/...`` is the in-process GGUF; other registered ADK models (tests register a scripted fake) pass through
as strings.
"""
from __future__ import annotations

import logging
from typing import Literal, get_args

from google.adk.models.base_llm import BaseLlm
from google.adk.models.registry import LLMRegistry

from .config import Settings

log = logging.getLogger(__name__)

Role = Literal["rewriter", "evaluator", "answer"]
ROLES: tuple[Role, ...] = get_args(Role)
JSON_ROLES: frozenset[str] = frozenset({"rewriter", "evaluator"})


def model_name(role: Role, settings: Settings) -> str:
    explicit = getattr(settings, f"{role}_model") or settings.agentic_rag_model
    if explicit:
        return explicit
    if settings.deepseek_api_key:
        return "deepseek/deepseek-chat"
    return f"local/{settings.local_llm}"


def make_model(role: Role, settings: Settings) -> BaseLlm | str:
    """The model object for an agent. JSON roles ask for json_object (DeepSeek rejects json_schema)."""
    name = model_name(role, settings)
    if name.startswith("local/"):
        from .local_llm import LocalLlamaLlm, register_local_llm

        register_local_llm()
        return LocalLlamaLlm(model=name)
    from google.adk.models.lite_llm import LiteLlm

    try:
        native = LLMRegistry.resolve(name) is not LiteLlm
    except ValueError:
        native = False
    if native:
        return name  # a natively registered ADK model (Gemini, a test fake …)

    kwargs: dict = {"timeout": settings.llm_timeout_s, "num_retries": settings.llm_max_retries}
    if role in JSON_ROLES:
        kwargs["response_format"] = {"type": "json_object"}
    if name.startswith("deepseek/") and settings.deepseek_api_key:
        kwargs["api_key"] = settings.deepseek_api_key
    log.info("%s model: %s (LiteLLM)", role, name)
    return LiteLlm(model=name, **kwargs)
