"""The adaptive retry policy: when to stop, what to try next."""
from __future__ import annotations

from agentic_rag.retry_policy import MATCHER_ORDER, first_plan, next_plan, stop_reason
from agentic_rag.state import Attempt, Quality, Rewrite


def quality(total=10, verdict="fail", source="llm"):
    return Quality(scores={}, total=total, threshold=32, passed=verdict == "pass", verdict=verdict, source=source)


def attempt(n, ids, matcher="ensemble"):
    return Attempt(attempt=n, matcher=matcher, query="q", articles=[], ids=ids, total=10, passed=False, source="llm")


def test_stop_reasons():
    one = [attempt(1, ["a", "b"])]
    assert stop_reason(one, quality(verdict="pass"), 3) == "passed"
    assert stop_reason(one, quality(verdict="model_error"), 3) == "model_error"
    assert stop_reason(one, quality(source="rule:low_relevance"), 3) == "off_topic"
    assert stop_reason(one, quality(), 1) == "exhausted"
    assert stop_reason(one, quality(), 3) is None
    assert stop_reason(one + [attempt(2, ["b", "a"], "hybrid")], quality(), 3) == "no_progress"


def test_next_plan_switches_matcher_and_widens_on_the_third_attempt():
    rewrite = Rewrite(main_query="改写", source="retry")
    plan1 = first_plan(Rewrite(main_query="q"), 5)
    assert plan1.matcher == MATCHER_ORDER[0] and plan1.top_k == 5
    first = attempt(1, ["a", "p"])
    first.pinned = ["p"]
    plan2 = next_plan([first], rewrite, plan1)
    assert plan2.matcher == "hybrid" and plan2.top_k == 5 and plan2.main_query == "改写" and "改写查询" in plan2.reason
    assert plan2.exclude == ["a"]  # look further down; a looked-up article stays
    plan3 = next_plan([attempt(1, ["a"]), attempt(2, ["b"], "hybrid")], rewrite, plan2)
    assert plan3.matcher == "bm25" and plan3.top_k == 8 and plan3.attempt == 3 and plan3.exclude == ["a", "b"]
