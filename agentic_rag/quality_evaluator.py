"""QualityEvaluatorAgent: relevance, completeness, accuracy, coverage (0-10 each); PASS iff total ≥ threshold.

Rules come before the LLM: no retrieved article → FAIL without a call; the best dense similarity below the
calibrated floor (chit-chat, clearly off-topic questions) → FAIL without a call; a question that is only an
article reference which was found (第五十七条是什么) → PASS without a call. Small local graders pass almost anything
(the e2e numbers in the README), so these rules carry the "honest about what it does not know" part. Unparseable
LLM output → FAIL with the reason recorded: a grader that cannot be read never passes by default.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from . import prompts
from .config import Settings
from .llm import make_model
from .parsing import as_score, parse_json_object
from .query_analysis import is_pure_lookup
from .state import QUALITY_RAW, RETRIEVAL, USER_QUERY, user_prompt

DIMENSIONS = ("relevance", "completeness", "accuracy", "coverage")
DIMENSION_CN = {"relevance": "相关性", "completeness": "完整性", "accuracy": "准确性", "coverage": "覆盖面"}
ARTICLES_IN_PROMPT = 5
ARTICLE_CHARS = 300


@dataclass
class Quality:
    scores: dict[str, float]
    reasons: dict[str, str]
    total: float
    threshold: int
    passed: bool
    source: str  # "llm" | "rule:no_results" | "rule:exact_lookup" | "error"
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        dims = "，".join(f"{DIMENSION_CN[d]} {self.scores.get(d, 0):g}" for d in DIMENSIONS)
        verdict = "PASS" if self.passed else "FAIL"
        why = f"（{self.error}）" if self.error else ""
        return f"质量评估：{dims}；总分 {self.total:g}/40，阈值 {self.threshold} → {verdict}{why}"


def failed(threshold: int, source: str, error: str) -> Quality:
    return Quality(scores={d: 0.0 for d in DIMENSIONS}, reasons={}, total=0.0, threshold=threshold,
                   passed=False, source=source, error=error)


def rule_verdict(question: str, retrieval: dict, threshold: int, min_vector_score: float = 0.0) -> Quality | None:
    """A verdict without the LLM when the case is clear, else None."""
    articles = retrieval.get("articles") or []
    if not articles:
        return failed(threshold, "rule:no_results", "未检索到任何条文")
    best = retrieval.get("max_vector_score")
    if retrieval.get("query_type") != "exact" and best is not None and best < min_vector_score:
        return failed(threshold, "rule:low_relevance",
                      f"检索到的条文与问题相关度过低（最高相似度 {best:.2f} < {min_vector_score:.2f}），问题可能不在本法范围内")
    if retrieval.get("query_type") == "exact" and is_pure_lookup(question) and \
            all(any(a["article"] == n and "lookup" in a["channels"] for a in articles) for n in retrieval.get("refs", [])):
        return Quality(scores={d: 10.0 for d in DIMENSIONS}, reasons={d: "问题即为查询该条文，已直接命中" for d in DIMENSIONS},
                       total=40.0, threshold=threshold, passed=True, source="rule:exact_lookup")
    return None


def parse_quality(text: str | None, threshold: int) -> Quality:
    data = parse_json_object(text)
    if data is None:
        return failed(threshold, "error", "质量评估输出无法解析")
    scores, reasons = {}, {}
    for dim in DIMENSIONS:
        value = data.get(dim)
        if isinstance(value, dict):  # {"relevance": {"score": 8, "reason": "..."}}
            reasons[dim] = str(value.get("reason") or "")[:200]
            value = value.get("score")
        score = as_score(value)
        if score is None:
            return failed(threshold, "error", f"质量评估缺少{DIMENSION_CN[dim]}分数")
        scores[dim] = score
        reasons.setdefault(dim, str(data.get(f"{dim}_reason") or "")[:200])
    total = round(sum(scores.values()), 1)
    return Quality(scores=scores, reasons=reasons, total=total, threshold=threshold, passed=total >= threshold,
                   source="llm")


def format_articles(articles: list[dict], limit: int = ARTICLES_IN_PROMPT, chars: int = ARTICLE_CHARS) -> str:
    lines = []
    for a in articles[:limit]:
        text = a["text"] if len(a["text"]) <= chars else a["text"][:chars] + "…"
        lines.append(f"【{a['article_cn']}】{text}")
    return "\n".join(lines) or "（无）"


def _inject_prompt(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    state = callback_context.state
    articles = (state.get(RETRIEVAL) or {}).get("articles") or []
    llm_request.contents = user_prompt(prompts.EVALUATOR.format(question=state.get(USER_QUERY, ""),
                                                                articles=format_articles(articles)))
    return None


def make_quality_evaluator(settings: Settings) -> LlmAgent:
    return LlmAgent(
        name="QualityEvaluatorAgent",
        description="从相关性、完整性、准确性、覆盖面四个维度评估检索结果（各10分，≥阈值为PASS）",
        model=make_model("evaluator", settings),
        instruction="你是法律检索质量评估员，只输出 JSON。",
        include_contents="none",
        before_model_callback=_inject_prompt,
        output_key=QUALITY_RAW,
        generate_content_config=types.GenerateContentConfig(temperature=0.0, max_output_tokens=400,
                                                            response_mime_type="application/json"),
    )
