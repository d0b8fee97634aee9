"""AnswerGeneratorAgent: the answer, from the retrieved articles (PASS) or fused with web results (FAIL + web).

The prompt is chosen by the workflow's path. After the model answers, code checks the citations: every article
number the answer cites must be one that was retrieved (or quoted inside a retrieved article); any other is
replaced by a visible marker and listed in a note, and the check is recorded in state. Answers that need no
LLM — nothing usable found, or the model failed — are built here deterministically.
"""
from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from . import prompts
from .citations import check_citations, redact_invalid
from .config import Settings
from .llm import make_model
from .quality_evaluator import format_articles
from .state import (ANSWER_RAW, CITATIONS, KB_LAW, PATH, QUALITY, RETRIEVAL, USER_QUERY, WEB, kb_label,
                    user_prompt)

ANSWER_ARTICLES = 5
ANSWER_ARTICLE_CHARS = 600


def _articles(state) -> list[dict]:
    """The articles the answer may use: for a pure article lookup only the looked-up ones (the rest is noise)."""
    articles = ((state.get(RETRIEVAL) or {}).get("articles") or [])[:ANSWER_ARTICLES]
    if (state.get(QUALITY) or {}).get("source") == "rule:exact_lookup":
        articles = [a for a in articles if "lookup" in a["channels"]] or articles
    return articles


def format_web(web: dict | None) -> str:
    results = (web or {}).get("results") or []
    return "\n".join(f"- {r['title']}（{r['link']}）：{r['snippet']}" for r in results) or "（无）"


def _inject_prompt(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    state = callback_context.state
    articles = format_articles(_articles(state), ANSWER_ARTICLES, ANSWER_ARTICLE_CHARS)
    question = state.get(USER_QUERY, "")
    if state.get(PATH) == "web":
        text = prompts.ANSWER_WEB.format(question=question, articles=articles, web=format_web(state.get(WEB)))
    else:
        text = prompts.ANSWER_LOCAL.format(law=kb_label(state), question=question, articles=articles)
    llm_request.contents = user_prompt(text)
    return None


def verify_answer(text: str, state) -> tuple[str, dict]:
    """Check the answer's citations against what was retrieved; return the (redacted) text and the record."""
    articles = _articles(state)
    web_text = format_web(state.get(WEB)) if state.get(PATH) == "web" else ""
    check = check_citations(text, state.get(KB_LAW), [a["article"] for a in articles],
                            [a["text"] for a in articles], web_text=web_text)
    return redact_invalid(text, check), check.to_dict()


def _check_citations(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
    if llm_response.partial or not llm_response.content or not llm_response.content.parts:
        return None
    text = "".join(p.text or "" for p in llm_response.content.parts if not p.thought)
    checked, record = verify_answer(text, callback_context.state)
    callback_context.state[CITATIONS] = record
    if checked == text:
        return None
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=checked)]),
                       usage_metadata=llm_response.usage_metadata, finish_reason=llm_response.finish_reason,
                       turn_complete=llm_response.turn_complete)


def not_found_answer(state, web_reason: str | None) -> str:
    """The standard reply when nothing usable was found (no LLM involved)."""
    note = prompts.WEB_UNAVAILABLE.format(reason=web_reason) if web_reason else ""
    text = prompts.NOT_FOUND.format(law=kb_label(state), web_note=note)
    articles = ((state.get(RETRIEVAL) or {}).get("articles") or [])[:3]
    if articles:
        text += prompts.NOT_FOUND_NEAREST.format(titles="、".join(a["article_cn"] for a in articles))
    return text


def articles_only_answer(state, reason: str) -> str:
    """When the answer model failed: the retrieved articles verbatim, with the reason, instead of nothing."""
    lines = [f"（{reason}，以下是检索到的相关条文原文，供参考）", ""]
    for a in _articles(state):
        lines.append(f"**{a['title']}**：{a['text']}")
        lines.append("")
    lines.append("**免责声明：**以上为法律条文原文，具体适用需结合实际情况，建议咨询专业律师。")
    return "\n".join(lines)


def make_answer_generator(settings: Settings) -> LlmAgent:
    return LlmAgent(
        name="AnswerGeneratorAgent",
        description="依据检索到的法条（必要时结合网络结果）生成带条文引用的法律咨询意见",
        model=make_model("answer", settings),
        instruction="你是专业的法律咨询顾问，只依据提供的条文作答并注明条号。",
        include_contents="none",
        before_model_callback=_inject_prompt,
        after_model_callback=_check_citations,
        output_key=ANSWER_RAW,
        generate_content_config=types.GenerateContentConfig(temperature=0.1, max_output_tokens=900),
    )
