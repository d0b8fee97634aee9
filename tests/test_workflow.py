"""The whole ConditionalWorkflowAgent through InMemoryRunner, with a scripted fake LLM and the real index.

Each test drives one branch of the design (PASS, FAIL → web, FAIL without web, malformed grader output, empty
retrieval, exact lookup, failing models) and asserts the persisted state and the final text's structure.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from google.adk.runners import InMemoryRunner
from google.genai import types

from agentic_rag.agent import ConditionalWorkflowAgent
from agentic_rag.retriever import RetrievalResult
from tests.fakes.fake_llm import FakeLlm, install
from tests.fakes.serpapi_server import FakeSerpApi

REWRITE = json.dumps({"main_query": "向他人提供个人信息是否需要同意", "variants": ["出售个人信息", "非法买卖个人信息"],
                      "keywords": ["提供", "个人信息", "同意"], "domain": "个人信息保护", "complexity": "simple"},
                     ensure_ascii=False)
GOOD = json.dumps({"relevance": 9, "relevance_reason": "直接相关", "completeness": 8, "accuracy": 9, "coverage": 8})
BAD = json.dumps({"relevance": 3, "completeness": 2, "accuracy": 4, "coverage": 2})
ANSWER = ("# 法律咨询意见\n## 问题分析\n公司出售手机号属于向他人提供个人信息。\n## 相关法条\n第十条、第二十三条。\n"
          "## 法律解释\n……\n## 建议措施\n……\n**免责声明：**本咨询基于现有法律条文。")
QUESTION = "公司把我的手机号卖给别人合法吗？"


def run_workflow(settings, retriever_factory, question: str = QUESTION) -> tuple[dict, list]:
    agent = ConditionalWorkflowAgent(settings=settings, retriever_factory=retriever_factory)

    async def go():
        runner = InMemoryRunner(agent=agent, app_name="t")
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        events = [ev async for ev in runner.run_async(
            user_id="u", session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=question)]))]
        session = await runner.session_service.get_session(app_name="t", user_id="u", session_id=session.id)
        return dict(session.state), events

    return asyncio.run(go())


def texts(events) -> list[tuple[str, str]]:
    return [(e.author, e.content.parts[0].text) for e in events if e.content and e.content.parts and e.content.parts[0].text]


@pytest.fixture
def settings(pipl_settings):
    return pipl_settings.model_copy(update={"agentic_rag_model": "fake/script", "serpapi_api_key": None})


@pytest.fixture
def factory(retriever):
    return lambda: retriever


def retrieved_numbers(state) -> set[int]:
    return {a["article"] for a in state["retrieval"]["articles"]}


def test_pass_path_answers_from_local_articles(settings, factory):
    install({"rewriter": REWRITE, "evaluator": GOOD, "answer": ANSWER})
    state, events = run_workflow(settings, factory)
    assert state["path"] == "pass"
    assert state["quality_passed"] is True and state["quality_score"] == 34
    assert state["quality"]["source"] == "llm" and state["quality"]["scores"]["relevance"] == 9
    assert state["rewrite"]["main_query"] == "向他人提供个人信息是否需要同意" and not state["rewrite"]["fallback"]
    assert 10 in retrieved_numbers(state)  # the article on selling personal information
    assert state["final_answer"].startswith("# 法律咨询意见") and "## 相关法条" in state["final_answer"]
    assert set(state["citations"]["valid"]) <= retrieved_numbers(state) and not state["citations"]["invalid"]
    assert state["llm_calls"] == 3 and set(state["timings"]) >= {"rewrite", "retrieve", "evaluate", "answer", "total"}
    assert [r for r, _ in FakeLlm.calls] == ["rewriter", "evaluator", "answer"]
    assert QUESTION in FakeLlm.calls[0][1]  # the rewriter sees the user's question (include_contents="none")
    assert state["kb_law"] == "中华人民共和国个人信息保护法" and "《中华人民共和国个人信息保护法》" in FakeLlm.calls[0][1]
    assert "【第十条】" in FakeLlm.calls[1][1]  # the grader sees the retrieved articles
    authors = [a for a, _ in texts(events)]
    assert "RetrievalAgent" in authors and authors[-1] == "AnswerGeneratorAgent"
    assert state["web_search"] is None


def test_invented_citation_is_removed_and_recorded(settings, factory):
    install({"rewriter": REWRITE, "evaluator": GOOD, "answer": ANSWER + "\n另见第九十九条。"})
    state, _ = run_workflow(settings, factory)
    assert state["citations"]["invalid"] == [99]
    assert "第九十九条" not in state["final_answer"].split("核对说明")[0]
    assert "〔未核实的条文〕" in state["final_answer"]


def test_fail_goes_to_web_and_fuses(settings, factory):
    install({"rewriter": REWRITE, "evaluator": BAD,
             "answer": lambda p: ANSWER + "\n参考：" + ("https://" if "http://127.0.0.1" not in p else "网络结果")})
    with FakeSerpApi(mode="ok") as serp:
        s = settings.model_copy(update={"serpapi_api_key": "test-key", "serpapi_base_url": serp.base_url})
        state, events = run_workflow(s, factory)
        assert len(serp.requests) == 1
    assert state["path"] == "web" and state["quality_passed"] is False and state["quality_score"] == 11
    assert state["web_search"]["status"] == "ok" and len(state["web_search"]["results"]) == 3
    answer_prompt = FakeLlm.calls[-1][1]
    assert "网络搜索结果" in answer_prompt and answer_prompt.index("本地检索到的法条") < answer_prompt.index("网络搜索结果")
    assert state["final_answer"].startswith("# 法律咨询意见")
    assert any(a == "WebSearchAgent" for a, _ in texts(events))


def test_fail_without_web_key_gives_standard_reply(settings, factory):
    install({"rewriter": REWRITE, "evaluator": BAD, "answer": AssertionError("answer model must not be called")})
    state, events = run_workflow(settings, factory)
    assert state["path"] == "none"
    assert state["web_search"]["status"] == "no_key"
    assert "无法在《中华人民共和国个人信息保护法》中找到足够准确的法律条文" in state["final_answer"]
    assert "未能进行网络检索" in state["final_answer"] and "SERPAPI_API_KEY" in state["final_answer"]
    assert [r for r, _ in FakeLlm.calls] == ["rewriter", "evaluator"]
    assert texts(events)[-1][1] == state["final_answer"]


def test_malformed_grader_output_fails_safely(settings, factory):
    install({"rewriter": REWRITE, "evaluator": "相关性很好，我觉得可以。", "answer": ANSWER})
    state, _ = run_workflow(settings, factory)
    assert state["quality_passed"] is False and state["quality"]["source"] == "error"
    assert "无法解析" in state["quality"]["error"] and state["path"] == "none"
    assert any("无法解析" in e for e in state["errors"])


def test_malformed_rewrite_falls_back_to_question(settings, factory):
    install({"rewriter": "好的，我来改写：", "evaluator": GOOD, "answer": ANSWER})
    state, _ = run_workflow(settings, factory)
    assert state["rewrite"]["fallback"] is True and state["rewrite"]["main_query"] == QUESTION
    assert state["path"] == "pass" and 10 in retrieved_numbers(state)


def test_exact_article_question_skips_the_grader(settings, factory):
    install({"rewriter": json.dumps({"main_query": "第五十七条", "variants": [], "keywords": []}),
             "evaluator": AssertionError("grader must not be called"), "answer": "第五十七条规定……"})
    state, _ = run_workflow(settings, factory, "第五十七条是什么内容？")
    assert state["retrieval"]["articles"][0]["article"] == 57
    assert state["quality"]["source"] == "rule:exact_lookup" and state["path"] == "pass"
    assert state["citations"]["valid"] == [57]
    assert "evaluator" not in [r for r, _ in FakeLlm.calls]
    answer_prompt = FakeLlm.calls[-1][1]
    assert "【第五十七条】" in answer_prompt and answer_prompt.count("【第") == 1  # only the looked-up article


def test_off_topic_question_fails_by_rule_without_grading(settings, factory):
    install({"rewriter": "{}", "evaluator": AssertionError("no grading of off-topic retrieval"), "answer": ANSWER})
    state, _ = run_workflow(settings, factory, "今天天气怎么样？")
    assert state["retrieval"]["max_vector_score"] < settings.min_vector_score
    assert state["quality"]["source"] == "rule:low_relevance" and "相关度过低" in state["quality"]["error"]
    assert state["path"] == "none" and "无法在《中华人民共和国个人信息保护法》中找到" in state["final_answer"]


class EmptyRetriever:
    law = None  # like an index of several laws

    def retrieve(self, query, **kw):
        return RetrievalResult(query=query, query_type="semantic", matcher=kw.get("matcher", "ensemble"), articles=[])


def test_empty_retrieval_fails_without_llm_grading(settings):
    install({"rewriter": REWRITE, "evaluator": AssertionError("no grading of nothing"), "answer": ANSWER})
    state, _ = run_workflow(settings, lambda: EmptyRetriever())
    assert state["quality"]["source"] == "rule:no_results" and state["quality_score"] == 0
    assert state["path"] == "none" and "最接近的条文" not in state["final_answer"]


def test_failing_models_degrade_to_clear_messages(settings, factory):
    install({"rewriter": TimeoutError("model timed out"), "evaluator": GOOD,
             "answer": ConnectionError("provider down")})
    state, events = run_workflow(settings, factory)
    assert state["rewrite"]["fallback"] is True and "TimeoutError" in state["rewrite"]["error"]
    assert state["path"] == "pass"
    assert "答案生成模型暂时不可用" in state["final_answer"] and "第十条" in state["final_answer"]
    assert any("ConnectionError" in e for e in state["errors"])
    assert set(state["citations"]["valid"]) <= retrieved_numbers(state)


@pytest.mark.parametrize("question, expected", [("   ", "问题为空"), ("个人信息" * 400, "问题过长")])
def test_bad_questions_are_rejected_with_a_message(settings, factory, question, expected):
    install({})
    state, events = run_workflow(settings, factory, question)
    assert state["path"] == "rejected" and expected in state["final_answer"]
    assert FakeLlm.calls == []


def test_missing_index_is_a_message_not_a_crash(settings, tmp_path):
    from agentic_rag.retriever import LocalRetriever

    install({"rewriter": REWRITE})
    s = settings.model_copy(update={"data_dir": tmp_path / "nothing"})
    state, _ = run_workflow(s, lambda: LocalRetriever.from_settings(s))
    assert state["path"] == "error" and "init_index.py" in state["final_answer"]
    assert FakeLlm.calls == []  # the index is opened before any LLM call is spent


def test_knowledge_base_law_comes_from_the_setting_or_the_index(settings, factory):
    install({"rewriter": REWRITE, "evaluator": BAD})
    state, _ = run_workflow(settings.model_copy(update={"kb_law": "中华人民共和国数据安全法"}), factory)
    assert state["kb_law"] == "中华人民共和国数据安全法" and "检索《中华人民共和国数据安全法》条文" in FakeLlm.calls[0][1]
    assert state["path"] == "none" and "无法在《中华人民共和国数据安全法》中" in state["final_answer"]

    install({"rewriter": REWRITE})
    state, _ = run_workflow(settings, lambda: EmptyRetriever())
    assert state["kb_law"] is None and "检索知识库条文" in FakeLlm.calls[0][1]
    assert "无法在知识库中" in state["final_answer"]


def test_best_attempt_is_kept_when_retrying(settings, factory):
    grades = iter([json.dumps({"relevance": 6, "completeness": 5, "accuracy": 6, "coverage": 5}), BAD])
    install({"rewriter": REWRITE, "evaluator": lambda p: next(grades), "answer": ANSWER})
    s = settings.model_copy(update={"max_attempts": 2})
    state, _ = run_workflow(s, factory)
    assert [a["matcher"] for a in state["attempts"]] == ["ensemble", "hybrid"]
    assert state["quality_score"] == 22  # the better first attempt, not the last one
