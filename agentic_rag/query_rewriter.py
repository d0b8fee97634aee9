"""QueryRewriterAgent: the question → main query, variants, keywords, legal domain (JSON, parsed leniently).

On unparseable output the original question is used and the failure recorded; retrieval always also runs the
original question, so a bad rewrite can add noise but never lose the user's words.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from . import prompts
from .config import Settings
from .llm import make_model
from .parsing import as_str_list, parse_json_object
from .state import REWRITE_RAW, USER_QUERY, kb_label, user_prompt


@dataclass
class Rewrite:
    main_query: str
    variants: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    domain: str = ""
    complexity: str = ""
    fallback: bool = False  # True: the LLM output was unusable, the original question is used
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def parse_rewrite(text: str | None, question: str) -> Rewrite:
    data = parse_json_object(text)
    main = str((data or {}).get("main_query") or "").strip()
    if not data or not main:
        return Rewrite(main_query=question, fallback=True, error="查询改写输出无法解析，已使用原问题检索")
    variants = [v[:300] for v in dict.fromkeys(as_str_list(data.get("variants"), 8)) if v not in (main, question)]
    return Rewrite(main_query=main[:300], variants=variants[:4],
                   keywords=as_str_list(data.get("keywords"), 8), domain=str(data.get("domain") or "")[:50],
                   complexity=str(data.get("complexity") or "")[:20])


def _inject_prompt(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    question = callback_context.state.get(USER_QUERY, "")
    text = prompts.REWRITER.format(law=kb_label(callback_context.state), question=question)
    llm_request.contents = user_prompt(text)
    return None


def make_query_rewriter(settings: Settings) -> LlmAgent:
    return LlmAgent(
        name="QueryRewriterAgent",
        description="把用户问题改写为规范的法律检索查询（主查询、变体、关键词、领域）",
        model=make_model("rewriter", settings),
        instruction="你是法律检索的查询改写助手，只输出 JSON。",
        include_contents="none",
        before_model_callback=_inject_prompt,
        output_key=REWRITE_RAW,
        generate_content_config=types.GenerateContentConfig(temperature=0.1, max_output_tokens=300,
                                                            response_mime_type="application/json"),
    )
