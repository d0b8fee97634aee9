"""The adaptive retry policy (design 001): after a FAIL, what to try next — or why to stop.

One function decides, from the attempts so far and the last grade:

* stop when the grade passed, when the model failed (retrying a dead provider only burns the deadline), when the
  articles were judged off-topic by rule, when the attempts are used up, or when the last attempt retrieved the
  same articles as an earlier one (no progress);
* otherwise look further: the next attempt skips the articles earlier attempts already showed the grader (so it
  judges new candidates, not the same five again), switches matcher (ensemble → hybrid → bm25 → vector → gram,
  skipping those tried), rewrites the query from what the grader said was missing, and on the third attempt also
  takes more candidates.

The workflow keeps the best attempt by total score, not the last.
"""
from __future__ import annotations

from .config import Settings
from .llm.models import embedded
from .retrieval.channels import MATCHERS
from .state import Attempt, Plan, Quality, Rewrite

MATCHER_ORDER = tuple(MATCHERS)  # ensemble, hybrid, bm25, vector, gram
MORE_CANDIDATES = 3
RETRIES_LOCAL, RETRIES_API = 0, 2  # further attempts after a FAIL when AGENTIC_MAX_RETRIES is not set


def attempt_budget(settings: Settings) -> int:
    """How many retrieve+grade rounds a question may take. Retries re-grade other articles, so they help a judge
    that tells relevant from not; with the embedded grader they recovered none of the 10 held-out questions it
    failed, at ~50 s each (eval/results/e2e_local1.5b_v2.json), hence its default of one attempt."""
    if not settings.agentic_enabled:
        return 1
    retries = settings.agentic_max_retries
    if retries is None:
        retries = RETRIES_LOCAL if embedded("evaluator", settings) else RETRIES_API
    return 1 + retries


def first_plan(rewrite: Rewrite, top_k: int) -> Plan:
    return Plan(attempt=1, matcher=MATCHER_ORDER[0], main_query=rewrite.main_query, variants=rewrite.variants,
                keywords=rewrite.keywords, top_k=top_k, reason="首次检索")


def stop_reason(attempts: list[Attempt], quality: Quality, max_attempts: int) -> str | None:
    """Why the loop ends after the last attempt, or None to go on."""
    if quality.passed:
        return "passed"
    if quality.verdict == "model_error":
        return "model_error"
    if quality.source == "rule:low_relevance":
        return "off_topic"
    if quality.source == "rule:no_such_article":
        return "no_such_article"
    last = attempts[-1]
    if any(set(a.ids) == set(last.ids) for a in attempts[:-1]):
        return "no_progress"
    if len(attempts) >= max_attempts:
        return "exhausted"
    return None


def next_plan(attempts: list[Attempt], rewrite: Rewrite, previous: Plan) -> Plan:
    """The next attempt's plan (call it when `stop_reason` is None)."""
    tried = {a.matcher for a in attempts}
    matcher = next((m for m in MATCHER_ORDER if m not in tried), previous.matcher)
    n = len(attempts) + 1
    more = MORE_CANDIDATES if n >= 3 else 0
    why = f"换用 {matcher} 匹配" + ("，按评估意见改写查询" if rewrite.source == "retry" else "") + \
        (f"，候选增至 {previous.top_k + more}" if more else "")
    shown = [i for a in attempts for i in a.ids if i not in a.pinned]
    return Plan(attempt=n, matcher=matcher, main_query=rewrite.main_query, variants=rewrite.variants,
                keywords=rewrite.keywords, top_k=previous.top_k + more, exclude=list(dict.fromkeys(shown)),
                reason=why + "，跳过已评估的条文")
