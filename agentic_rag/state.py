"""The typed state contract between the stages: what each stage writes, under which key, in which shape.

Only deltas carried by events persist (`ctx.session.state[...] = x` is lost in every session service), so every
stage writes its typed output as JSON through `state_delta`, and readers get it back validated through the same
`Slot`. No other module spells a state key: eval, demo and tests read through these slots too.
"""
from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .retrieval.types import Article, Retrieval

T = TypeVar("T")

AnswerPath = Literal["pass", "hedged", "web", "none", "rejected", "error", "degraded", "chitchat", "out_of_kb",
                     "clarify"]
RouteKind = Literal["kb", "chitchat", "out_of_kb", "multi"]
Verdict = Literal["pass", "fail", "unreadable", "model_error"]
# CRAG's three actions: answer (correct), answer hedged from the best articles (ambiguous), search the web or say the
# knowledge base does not cover it (incorrect).
Action = Literal["correct", "ambiguous", "incorrect"]
Label = Literal["可以", "不可以", "需要", "不需要", "视情况", "说明"]
# Who decided the route: the signals alone, the model, the kb default when the model failed or was unreadable, or
# nobody (the agentic loop is off).
RouteSource = Literal["rule", "llm", "fallback", "off"]
# Who graded: an API model's JSON, the calibrated judge, a rule without a model (nothing retrieved, a found lookup, a
# picked article, an off-topic similarity, a lookup of articles the law does not have, the sanction of the article
# the conversation is about), or a failed grade.
GradeSource = Literal["llm", "calibrated", "rule:no_results", "rule:exact_lookup", "rule:confirmed",
                      "rule:low_relevance", "rule:no_such_article", "rule:sanction_follow_up", "error"]
DIMENSIONS = ("relevance", "completeness", "accuracy", "coverage")
DIMENSION_CN = {"relevance": "相关性", "completeness": "完整性", "accuracy": "准确性", "coverage": "覆盖面"}


class Route(BaseModel):
    """The router's decision: which path a question takes before any retrieval."""

    kind: RouteKind
    reason: str = ""
    source: RouteSource = "rule"
    signals: dict[str, Any] = Field(default_factory=dict)
    sub_questions: list[str] = Field(default_factory=list)  # multi-intent: at most MAX_SUB_QUESTIONS
    topic: str = ""  # out_of_kb: what the question seems to concern


class Rewrite(BaseModel):
    main_query: str
    variants: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    domain: str = ""
    complexity: str = ""
    source: Literal["llm", "skipped", "fallback", "retry"] = "llm"
    fallback: bool = False  # the LLM output was unusable or the call failed: the original question is used
    error: str | None = None


class Plan(BaseModel):
    """One retrieve+grade attempt: which matcher, which queries, how many candidates, and why."""

    attempt: int  # 1-based
    matcher: str
    main_query: str
    variants: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    top_k: int
    exclude: list[str] = Field(default_factory=list)  # articles earlier attempts showed: look further down
    reason: str = "first attempt"


class Quality(BaseModel):
    scores: dict[str, float]
    reasons: dict[str, str] = Field(default_factory=dict)
    total: float
    threshold: int
    passed: bool
    verdict: Verdict
    source: GradeSource
    error: str | None = None
    missing: str = ""  # what the grader says is missing: the next attempt's rewrite uses it
    relevant: list[str] = Field(default_factory=list)  # ids of the articles judged relevant
    article_relevance: dict[str, float] = Field(default_factory=dict)  # calibrated P(relevant) per article id
    action: Action | None = None  # None: a grade made before the three actions existed

    @property
    def act(self) -> Action:
        return self.action or ("correct" if self.passed else "incorrect")

    def summary(self) -> str:
        dims = "，".join(f"{DIMENSION_CN[d]} {self.scores.get(d, 0):g}" for d in DIMENSIONS)
        why = f"（{self.error}）" if self.error else ""
        act = "（未达阈值，但有较相关的条文：给出初步判断）" if self.action == "ambiguous" else ""
        return f"质量评估：{dims}；总分 {self.total:g}/40，阈值 {self.threshold} → {self.verdict.upper()}{act}{why}"


class Attempt(BaseModel):
    attempt: int
    matcher: str
    query: str
    articles: list[int | None]
    ids: list[str] = Field(default_factory=list)
    pinned: list[str] = Field(default_factory=list)  # looked up by number: kept in every attempt
    total: float
    passed: bool
    source: GradeSource
    reason: str = ""
    stop: str | None = None  # why the loop stopped after this attempt: passed | no_progress | exhausted | …


class WebResult(BaseModel):
    title: str
    link: str
    snippet: str
    source: str  # provider name


class WebOutcome(BaseModel):
    status: Literal["ok", "no_key", "disabled", "error", "timeout", "quota", "empty", "skipped"]
    provider: str = ""
    results: list[WebResult] = Field(default_factory=list)
    message: str = ""  # user-facing when status != ok
    query: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Citations(BaseModel):
    cited: list[int] = Field(default_factory=list)  # knowledge-base articles the answer cites (article numbers)
    valid: list[int] = Field(default_factory=list)  # cited and retrieved
    quoted: list[int] = Field(default_factory=list)  # only named inside a retrieved article's text: kept as quote
    invalid: list[int] = Field(default_factory=list)  # cited, not retrieved: redacted
    irrelevant: list[int] = Field(default_factory=list)  # retrieved but judged irrelevant by the grader
    external: list[str] = Field(default_factory=list)  # other laws' articles found in web text: 网络来源（未核实）
    external_invalid: list[str] = Field(default_factory=list)  # other laws' articles found nowhere: redacted
    valid_keys: list[list[Any]] = Field(default_factory=list)  # (law, article) pairs: what several-law indexes check
    invalid_keys: list[list[Any]] = Field(default_factory=list)  # (law or None, article)
    listed: list[list[Any]] = Field(default_factory=list)  # (law, article) shown verbatim above the analysis

    @property
    def ok(self) -> bool:
        return not self.invalid and not self.external_invalid


class Sentence(BaseModel):
    """A sentence the model wrote, and whether the support check let it through."""

    text: str
    support: float | None = None  # P(supported by the given articles), when scored
    kept: bool = True
    why: str = ""  # why it was dropped


class Ask(BaseModel):
    """One thing the user asked (the question, or one sub-question) and how the answer concludes it."""

    question: str
    label: Label
    rule: str = ""  # which decision rule gave the label (stages/answer/conclusion.py)
    article: str = ""  # id of the governing article whose clause decides it
    clause: str = ""  # that clause, as the statute words it


class Answer(BaseModel):
    """What the answer stage concluded and what the model wrote (the text the user reads is FINAL_ANSWER)."""

    action: Action
    asks: list[Ask] = Field(default_factory=list)
    sentences: list[Sentence] = Field(default_factory=list)


# ----------------------------------------------------------------------------- the conversation
# Caps of what a session remembers: a few turns, short questions, a handful of cited articles.
MAX_TURNS = 3
MAX_QUESTION_CHARS = 200
MAX_CITED = 8
MAX_OPTIONS = 6
MAX_OPTION_CHARS = 60
ContextKind = Literal["first", "self_contained", "follow_up", "clarify_reply", "vague"]


class Turn(BaseModel):
    """One answered question of the conversation, as later turns may use it: never the answer's text."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=MAX_QUESTION_CHARS)  # the standalone question that was answered
    route: RouteKind
    law: str | None = Field(None, max_length=80)  # the law the turn was about (several-law knowledge bases)
    cited: list[tuple[str, int]] = Field(default_factory=list, max_length=MAX_CITED)  # (law, article) shown or cited


class Pending(BaseModel):
    """A question is waiting for the user's reply: a vague question and the options it was offered, or a refused
    question and the nearest articles it listed (`articles`: (law, article) per option, in the options' order)."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=MAX_QUESTION_CHARS)
    options: list[str] = Field(default_factory=list, max_length=MAX_OPTIONS)
    articles: list[tuple[str, int]] = Field(default_factory=list, max_length=MAX_OPTIONS)


class Conversation(BaseModel):
    """What the session remembers between questions. Stored by the workflow at the end of every turn and read back
    only from the workflow's own stored events (`conversation.history`), never from session state: clients of
    `adk api_server` can write any state key."""

    model_config = ConfigDict(extra="forbid")
    turns: list[Turn] = Field(default_factory=list, max_length=MAX_TURNS)
    pending: Pending | None = None


class Contextualised(BaseModel):
    """How the contextualise stage understood the message: the question the pipeline answers, and what it takes
    from the conversation (the previous turn's articles as extra graded candidates, its law as focus)."""

    question: str  # the standalone question (also in QUESTION)
    kind: ContextKind
    # how `question` was obtained; alone: a follow-up the history's reading found nothing for, read on its own
    source: Literal["message", "rule", "llm", "fallback", "alone"] = "message"
    reason: str = ""  # which signal decided the kind
    called: bool = False  # a model call was made (the contextualiser's role)
    history: list[str] = Field(default_factory=list)  # the earlier standalone questions the condensation used
    history_articles: list[tuple[str, int]] = Field(default_factory=list)  # previous turn's (law, article) ids
    focus_laws: list[str] = Field(default_factory=list)  # several laws: the previous turn's law
    # the article the user picked by its number from the nearest articles a refusal listed: looked up, pinned first
    confirmed: list[tuple[str, int]] = Field(default_factory=list, max_length=1)
    error: str | None = None  # why the model's condensation was not used
    # what retrieval searches when it is not the question: a clarification reply's own facts (the vague question's
    # words pulled the dense channel away), a 「除了X，还…」 follow-up without X (X's words pulled retrieval back to X)
    search: str | None = None
    # a follow-up's own words, searched beside the question and fused with it (RRF): the rule form's first question
    # pulls the ranking to the first turn's articles, while most follow-ups ask about another article
    own_words: str | None = None
    # read alone: how the history read the follow-up (the turn's question in the conversation, so that later
    # follow-ups keep the case's facts)
    understood: str | None = None

    @property
    def uses_history(self) -> bool:
        return self.kind in ("follow_up", "clarify_reply") and self.source != "alone"


class Clarification(BaseModel):
    """One clarifying question for a question too vague to retrieve for (issue 19; design 001's 渐进式追问)."""

    question: str  # the vague question
    ask: str  # the targeted question put to the user
    options: list[str] = Field(default_factory=list, max_length=MAX_OPTIONS)  # from the knowledge base's structure
    reason: str = ""


class Slot(Generic[T]):
    """One state key and its type: `get` validates what a reader gets, `delta` serialises what a writer puts."""

    def __init__(self, key: str, type_: Any):
        self.key = key
        self._adapter = TypeAdapter(type_)

    def get(self, state: Any, default: T | None = None) -> T | None:
        raw = state.get(self.key)
        return default if raw is None else self._adapter.validate_python(raw)

    def delta(self, value: T | None) -> dict[str, Any]:
        return {self.key: None if value is None else self._adapter.dump_python(value, mode="json")}


USER_QUERY: Slot[str] = Slot("user_query", str)  # the user's literal message (the workflow's intake)
QUESTION: Slot[str] = Slot("question", str)  # the question the pipeline answers (the contextualise stage)
CONTEXT: Slot[Contextualised] = Slot("contextualise", Contextualised)
CLARIFY: Slot[Clarification] = Slot("clarification", Clarification)
# Not per question: written by the workflow at the end of every turn; read back from its stored events only.
CONVERSATION: Slot[Conversation] = Slot("conversation", Conversation)
KB_LAW: Slot[str] = Slot("kb_law", str)  # the knowledge base's law title; None for a collection of several laws
KB_LAWS: Slot[list[str]] = Slot("kb_laws", list[str])
ROUTE: Slot[Route] = Slot("route", Route)
REWRITE: Slot[Rewrite] = Slot("rewrite", Rewrite)
PLAN: Slot[Plan] = Slot("retrieval_plan", Plan)
# One attempt of the retrieve+grade loop (written by the retrieve and grade stages) …
ATTEMPT_RETRIEVAL: Slot[Retrieval] = Slot("attempt_retrieval", Retrieval)
ATTEMPT_QUALITY: Slot[Quality] = Slot("attempt_quality", Quality)
# … and the attempt the workflow keeps (the best by total): what the answer stands on.
RETRIEVAL: Slot[Retrieval] = Slot("retrieval", Retrieval)
QUALITY: Slot[Quality] = Slot("quality", Quality)
ATTEMPTS: Slot[list[Attempt]] = Slot("attempts", list[Attempt])
WEB: Slot[WebOutcome] = Slot("web_search", WebOutcome)
# the path the workflow chose; the answer stage says how it went (PATH)
BRANCH: Slot[AnswerPath] = Slot("branch", AnswerPath)
NOTICE: Slot[str] = Slot("notice", str)  # the workflow's message for a rejected question or a failure
PATH: Slot[AnswerPath] = Slot("path", AnswerPath)
CITATIONS: Slot[Citations] = Slot("citations", Citations)
ANSWER: Slot[Answer] = Slot("answer", Answer)
FINAL_ANSWER: Slot[str] = Slot("final_answer", str)
TIMINGS: Slot[dict[str, float]] = Slot("timings", dict[str, float])
LLM_CALLS: Slot[int] = Slot("llm_calls", int)
LLM_USAGE: Slot[dict[str, int]] = Slot("llm_usage", dict[str, int])  # prompt / completion / cached tokens
ERRORS: Slot[list[str]] = Slot("errors", list[str])
# Raw LLM outputs, one slot per stage that asks for JSON, kept for inspection (never shown as chat messages).
RAW_CONTEXTUALISE: Slot[str] = Slot("raw_contextualise", str)
RAW_ROUTE: Slot[str] = Slot("raw_route", str)
RAW_REWRITE: Slot[str] = Slot("raw_rewrite", str)
RAW_GRADE: Slot[str] = Slot("raw_grade", str)

# Written per question; cleared by the workflow when the next question of the session starts.
PER_QUESTION: tuple[Slot, ...] = (QUESTION, CONTEXT, CLARIFY, ROUTE, REWRITE, PLAN, ATTEMPT_RETRIEVAL, ATTEMPT_QUALITY,
                                  RETRIEVAL, QUALITY, ATTEMPTS, WEB, BRANCH, NOTICE, PATH, CITATIONS, ANSWER,
                                  FINAL_ANSWER, TIMINGS, LLM_CALLS, LLM_USAGE, ERRORS, RAW_CONTEXTUALISE, RAW_ROUTE,
                                  RAW_REWRITE, RAW_GRADE)


def kb_label(state: Any) -> str:
    """How prompts name the knowledge base: 《law》 for a one-law index, else 知识库."""
    law = KB_LAW.get(state)
    return f"《{law}》" if law else "知识库"


def merge(*deltas: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for d in deltas:
        out.update(d)
    return out


__all__ = [
    "Answer",
    "Article",
    "Ask",
    "Sentence",
    "Attempt",
    "Citations",
    "Clarification",
    "Contextualised",
    "Conversation",
    "Pending",
    "Turn",
    "Plan",
    "Quality",
    "Retrieval",
    "Rewrite",
    "Route",
    "Slot",
    "WebOutcome",
    "WebResult",
]
