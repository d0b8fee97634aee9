"""Which LLM each stage uses.

Order: the per-stage override (CONTEXTUALISER_MODEL / ROUTER_MODEL / REWRITER_MODEL / EVALUATOR_MODEL / ANSWER_MODEL)
→ AGENTIC_RAG_MODEL
→ ``deepseek/deepseek-chat`` when DEEPSEEK_API_KEY is set → the embedded local model (``local/<gguf>``, llama.cpp
in process). Any LiteLLM model string works (``openai/...``, ``ollama_chat/...`` with their usual env vars);
``local/...`` is the in-process GGUF; other registered ADK models (tests register a scripted fake) resolve through
ADK's registry. LiteLLM's own retries are off: `llm.call` retries, honouring Retry-After within the deadline.
"""
from __future__ import annotations

import logging
from typing import Literal, get_args

from google.adk.models.base_llm import BaseLlm
from google.adk.models.registry import LLMRegistry

from ..config import ENV_FILE, Settings, reveal

log = logging.getLogger(__name__)

# contextualiser: a follow-up → a standalone question (one short line, only on follow-ups of a conversation)
Role = Literal["contextualiser", "router", "rewriter", "evaluator", "answer"]
ROLES: tuple[Role, ...] = get_args(Role)
JSON_ROLES: frozenset[str] = frozenset({"router", "rewriter", "evaluator"})
LOCAL_PREFIX = "local/"
# How long a whole question may take when nothing is configured: the embedded model is slow on 2 cores.
DEADLINE_LOCAL_S = 300.0
DEADLINE_API_S = 90.0


def model_name(role: Role, settings: Settings) -> str:
    explicit = getattr(settings, f"{role}_model") or settings.agentic_rag_model
    if explicit:
        return explicit
    if reveal(settings.deepseek_api_key):
        return "deepseek/deepseek-chat"
    return f"{LOCAL_PREFIX}{settings.local_llm}"


def embedded(role: Role, settings: Settings) -> bool:
    """Is `role` answered by the embedded llama.cpp model (not an API model)?"""
    return model_name(role, settings).startswith(LOCAL_PREFIX)


def question_deadline(settings: Settings) -> float:
    if settings.question_deadline_s:
        return settings.question_deadline_s
    local = any(embedded(r, settings) for r in ROLES)
    return DEADLINE_LOCAL_S if local else DEADLINE_API_S


def provider_environment() -> None:
    """LiteLLM reads its providers' variables (OPENAI_API_KEY, DEEPSEEK_API_BASE, OLLAMA_API_BASE …) from the process
    environment. `adk web/run/api_server` load the project's `.env` into it; `python -m agentic_rag.demo` and the
    evals do not, so the same file is loaded here, never over what the environment already says."""
    from dotenv import load_dotenv

    load_dotenv(ENV_FILE, override=False)


def make_model(role: Role, settings: Settings) -> BaseLlm:
    """The model object for a stage; the key (if any) stays inside it, never in an agent field."""
    name = model_name(role, settings)
    if name.startswith(LOCAL_PREFIX):
        from .local import LocalLlamaLlm, register_local_llm

        register_local_llm()
        return LocalLlamaLlm(model=name, settings=settings)
    import litellm
    from google.adk.models.lite_llm import LiteLlm

    litellm.suppress_debug_info = True  # its "Give Feedback / Get Help" banner on every provider error
    # Its INFO line per completion lands on `adk run`'s stdout, in the middle of the streamed answer; our own log
    # says which model each role uses.
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)

    try:
        cls = LLMRegistry.resolve(name)
    except ValueError:
        cls = LiteLlm
    if cls is not LiteLlm:
        return cls(model=name)  # a natively registered ADK model (Gemini, a test fake …)
    provider_environment()
    kwargs: dict = {"timeout": settings.llm_timeout_s, "num_retries": 0, "max_retries": 0}
    if role in JSON_ROLES:
        kwargs["response_format"] = {"type": "json_object"}  # DeepSeek rejects the json_schema ADK would send
    if name.startswith("deepseek/") and reveal(settings.deepseek_api_key):
        kwargs["api_key"] = reveal(settings.deepseek_api_key)
    log.info("%s model: %s (LiteLLM)", role, name)
    if role == "evaluator":  # the gate reads the provider's logprobs where it returns them
        from .api_scoring import LogprobLiteLlm

        return LogprobLiteLlm(model=name, **kwargs)
    return LiteLlm(model=name, **kwargs)
