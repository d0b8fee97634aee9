"""Session-state helpers shared by the agents.

Only deltas carried by events persist (`ctx.session.state[...] = x` is lost in every session service), so every
stage reports its results through `state_event`, which also carries the short progress line the Dev UI shows.
"""
from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event, EventActions
from google.genai import types

# Keys written per question (overwritten by the next question of the same session).
USER_QUERY = "user_query"
KB_LAW = "kb_law"  # the knowledge base's law title, or None for a collection of several laws
REWRITE = "rewrite"
RETRIEVAL_PLAN = "retrieval_plan"
RETRIEVAL = "retrieval"
QUALITY = "quality"
QUALITY_SCORE = "quality_score"
QUALITY_PASSED = "quality_passed"
WEB = "web_search"
PATH = "path"
CITATIONS = "citations"
FINAL_ANSWER = "final_answer"
TIMINGS = "timings"
ATTEMPTS = "attempts"
LLM_CALLS = "llm_calls"
ERRORS = "errors"
# Raw LLM outputs (output_key of the LLM agents).
REWRITE_RAW = "rewrite_raw"
QUALITY_RAW = "quality_raw"
ANSWER_RAW = "answer_raw"


def kb_label(state) -> str:
    """How prompts name the knowledge base: 《law》 for a one-law index, else 知识库."""
    law = state.get(KB_LAW)
    return f"《{law}》" if law else "知识库"


def state_event(ctx: InvocationContext, author: str, delta: dict, text: str | None = None) -> Event:
    content = types.Content(role="model", parts=[types.Part(text=text)]) if text else None
    return Event(invocation_id=ctx.invocation_id, author=author, branch=ctx.branch, content=content,
                 actions=EventActions(state_delta=delta))


def user_prompt(text: str) -> list[types.Content]:
    """The whole task as the single user turn an LLM agent sees (see the agents' before_model_callback)."""
    return [types.Content(role="user", parts=[types.Part(text=text)])]
