"""RewriteStage: lenient parsing, fallbacks, skipping where a rewrite cannot help, retries from what is missing."""
from __future__ import annotations

import json

from agentic_rag.stages.rewrite.agent import RewriteStage, parse_rewrite
from agentic_rag.state import ATTEMPT_QUALITY, QUESTION, REWRITE, ROUTE, Quality, Rewrite, Route
from tests.fakes.adk import run_agent
from tests.fakes.mock_model import MockModel

Q = "公司把我的手机号卖给别人合法吗？"


def stage(fake_settings, *replies, first_attempt: bool = True):
    settings = fake_settings.model_copy(update={"rewrite_first_attempt": first_attempt})
    return RewriteStage(name="QueryRewriterAgent", settings=settings, model=MockModel.create(*replies))


def test_by_default_a_first_attempt_uses_the_users_words_and_a_retry_is_rewritten(fake_settings):
    reply = json.dumps({"main_query": "出售个人信息的法律责任"}, ensure_ascii=False)
    s = stage(fake_settings, reply, first_attempt=False)
    state, events = run_agent(s, state={QUESTION.key: Q})
    assert REWRITE.get(state).source == "skipped" and REWRITE.get(state).main_query == Q and s._model.requests == []
    assert "首轮按原问题检索" in events[-1].content.parts[0].text
    quality = Quality(scores={}, total=10, threshold=32, passed=False, verdict="fail", source="llm", missing="罚则")
    first = REWRITE.get(state)
    state, _ = run_agent(s, state={QUESTION.key: Q, **ATTEMPT_QUALITY.delta(quality), **REWRITE.delta(first)})
    assert REWRITE.get(state).source == "retry" and "罚则" in s._model.prompts[0]


def test_parse_rewrite_cleans_and_caps():
    r = parse_rewrite('```json\n{"main_query": "出售个人信息", "variants": ["出售个人信息", "a", "a", "b"],'
                      ' "keywords": "提供，个人信息、同意"}\n```', Q)
    assert r.main_query == "出售个人信息" and r.variants == ["a", "b"] and r.keywords == ["提供", "个人信息", "同意"]
    assert parse_rewrite("好的，我来改写", Q).fallback and parse_rewrite("{}", Q).main_query == Q


def test_rewrite_from_the_model(fake_settings):
    s = stage(fake_settings, json.dumps({"main_query": "向他人提供个人信息"}, ensure_ascii=False))
    state, events = run_agent(s, state={QUESTION.key: Q})
    assert REWRITE.get(state).main_query == "向他人提供个人信息" and REWRITE.get(state).source == "llm"
    assert "【任务】查询改写" in s._model.prompts[0] and s._model.requests[0].config.temperature == 0.1
    assert all('"main_query"' not in (e.content.parts[0].text if e.content else "") for e in events)


def test_model_failure_falls_back_to_the_question(fake_settings):
    s = stage(fake_settings, ConnectionError("down"))
    state, _ = run_agent(s, state={QUESTION.key: Q})
    assert REWRITE.get(state).main_query == Q and REWRITE.get(state).fallback and "暂不可用" in REWRITE.get(state).error


def test_lookups_and_compound_questions_are_not_rewritten(fake_settings):
    s = stage(fake_settings, AssertionError("no call"))
    state, _ = run_agent(s, state={QUESTION.key: "第五十七条是什么内容"})
    assert REWRITE.get(state).source == "skipped" and s._model.requests == []
    multi = Route(kind="multi", sub_questions=["a？", "b？"])
    state, _ = run_agent(s, state={QUESTION.key: Q, **ROUTE.delta(multi)})
    assert REWRITE.get(state).source == "skipped"


def test_a_retry_rewrite_is_told_what_was_missing(fake_settings):
    s = stage(fake_settings, json.dumps({"main_query": "出售个人信息的法律责任"}, ensure_ascii=False))
    quality = Quality(scores={}, total=10, threshold=32, passed=False, verdict="fail", source="llm", missing="罚则")
    previous = Rewrite(main_query="向他人提供个人信息")
    state, _ = run_agent(s, state={QUESTION.key: Q, **ATTEMPT_QUALITY.delta(quality), **REWRITE.delta(previous)})
    assert REWRITE.get(state).source == "retry" and "罚则" in s._model.prompts[0]
    assert "向他人提供个人信息" in s._model.prompts[0]


def test_keyword_queries_are_not_rewritten(fake_settings):
    s = stage(fake_settings, AssertionError("no call"))
    for question in ("敏感个人信息 单独同意", "匿名化定义"):
        state, _ = run_agent(s, state={QUESTION.key: question})
        assert REWRITE.get(state).source == "skipped" and s._model.requests == []
