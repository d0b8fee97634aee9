"""What retrieval returns: articles with per-channel evidence. Pydantic, because they are also the state contract."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

QueryType = Literal["exact", "keyword", "semantic"]
Role = Literal["evidence", "follow_up", "history"]


class Article(BaseModel):
    """One retrieved statute article and why it was retrieved."""

    id: str
    title: str  # 《law》第X条, how answers cite it
    law: str
    article: int | None
    article_cn: str
    text: str
    chapter: str | None = None
    section: str | None = None
    score: float = 0.0  # final: rerank score when reranked, else the fused RRF score (pinned lookups: 1 + rrf)
    rrf_score: float = 0.0
    rerank_score: float | None = None
    # {"vector": {"rank": 1, "score": 0.62}, "bm25": {...}, "lookup": {...}, "follow_up": {"from": "id"}}
    channels: dict[str, dict[str, float | int | str]] = Field(default_factory=dict)
    search_type: str = ""
    # follow_up: added because an evidence article points to it (依照本法第X条); history: cited by the previous turn
    # of the conversation, added as a candidate the grader still judges
    role: Role = "evidence"
    sub_question: int | None = None  # index of the sub-question it was retrieved for (multi-intent)
    relevance: float | None = None  # the grader's P(relevant), when it judged this article

    @property
    def key(self) -> tuple[str, int | None]:
        """(law, article): what a citation names."""
        return self.law, self.article

    @property
    def pinned(self) -> bool:
        return "lookup" in self.channels


class RetrievalSignals(BaseModel):
    """What retrieval measured about the question as a whole, for the gate and its calibration script: how close
    and how peaked the dense match is, how many of the question's words the top article has, an exact lookup."""

    best_cosine: float = 0.0  # the best dense cosine of the question
    cosine_margin: float = 0.0  # the best cosine minus the fifth
    lexical_overlap: float = 0.0  # share of the question's words the top article has
    exact_hit: float = 0.0  # 1 when an article was looked up by number

    def vector(self, names: tuple[str, ...]) -> list[float]:
        return [float(getattr(self, n)) for n in names]


class Retrieval(BaseModel):
    query: str
    query_type: QueryType
    matcher: str
    articles: list[Article] = Field(default_factory=list)
    refs: list[int] = Field(default_factory=list)  # article numbers the question names
    absent: list[int] = Field(default_factory=list)  # … of them, those no article here has (第七十五条 of 74)
    max_vector_score: float | None = None  # best cosine of the user's question: an absolute relevance signal
    signals: RetrievalSignals = Field(default_factory=RetrievalSignals)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    sub_questions: list[str] = Field(default_factory=list)
    focus_laws: list[str] = Field(default_factory=list)  # several laws: the law(s) the question names or implies

    @property
    def evidence(self) -> list[Article]:
        return [a for a in self.articles if a.role == "evidence"]

    def numbers(self) -> list[int]:
        return [a.article for a in self.articles if a.article is not None]
