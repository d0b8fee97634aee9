"""The gate's evidence from an API model's logprobs (agentic_rag/llm/api_scoring.py), over the real LiteLLM path
against the fake OpenAI server: one call, d = logprob(是) − logprob(否) per article, the calibrated judge on top;
a provider without logprobs falls back to the JSON grade, once."""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import asyncio
import json

import pytest

from agentic_rag.llm.api_scoring import LogprobLiteLlm, diffs_from_logprobs, token_diff
from agentic_rag.llm.scoring import ScoringUnsupported
from agentic_rag.stages.grade.agent import GradeStage
from agentic_rag.state import ATTEMPT_QUALITY, ATTEMPT_RETRIEVAL, QUESTION
from tests.fakes.adk import run_agent
from tests.fakes.fake_llm import role_of
from tests.fakes.openai_server import FakeOpenAIServer, Scored
from tests.stages.test_stage_grade import retrieval, signals

TAILS = ["【任务】相关性判断：上面的【第10条】能否作为依据？只回答“是”或“否”。",
         "【任务】相关性判断：上面的【第23条】能否作为依据？只回答“是”或“否”。"]
GRADE = json.dumps({"relevance": 9, "completeness": 9, "accuracy": 9, "coverage": 9})


def lines(*answers: tuple[str, float, float]) -> Scored:
    """A reply "1：是\\n2：否": per answer, the sampled token, its logprob and the other answer's logprob."""
    tokens = []
    for i, (tok, lp, other) in enumerate(answers, 1):
        alt = "否" if tok == "是" else "是"
        tokens += [(str(i), -0.01, {}), ("：", -0.01, {}), (tok, lp, {tok: lp, alt: other}), ("\n", -0.01, {})]
    return Scored(tuple(tokens))


def model(srv: FakeOpenAIServer) -> LogprobLiteLlm:
    return LogprobLiteLlm(model="deepseek/deepseek-chat", api_base=srv.base_url, api_key="x",
                          response_format={"type": "json_object"}, num_retries=0)


def test_the_difference_of_logprobs_at_each_answer_token_is_read_in_order():
    content = lines(("是", -0.1, -2.5), ("否", -0.2, -4.0)).logprobs()["content"]
    assert diffs_from_logprobs(content, 2) == pytest.approx([2.4, -3.8])
    with pytest.raises(ScoringUnsupported):
        diffs_from_logprobs(content, 3)


def test_an_answer_missing_from_the_alternatives_is_bounded_by_the_lowest_listed_one():
    entry = {"token": "：是", "logprob": -0.05, "top_logprobs": [{"token": "：是", "logprob": -0.05},
                                                                {"token": "：不", "logprob": -3.0}]}
    assert token_diff(entry) == pytest.approx(2.95)  # 否 not listed: at most as likely as the least likely listed


def test_one_call_with_logprobs_scores_every_article_over_the_real_litellm_path():
    with FakeOpenAIServer(lambda body: lines(("是", -0.1, -2.5), ("否", -0.2, -4.0))) as srv:
        scored = asyncio.run(model(srv).score_tails("系统", "用户问题：问题\n", TAILS))
        body = srv.requests[-1]
    assert scored.diffs == pytest.approx([2.4, -3.8]) and len(srv.requests) == 1
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and "response_format" not in body
    assert "1. 【任务】相关性判断：上面的【第10条】" in body["messages"][-1]["content"]


def test_a_provider_without_logprobs_is_asked_once_then_no_more():
    with FakeOpenAIServer(lambda body: "1：是\n2：否") as srv:
        llm = model(srv)
        for _ in range(2):
            with pytest.raises(ScoringUnsupported):
                asyncio.run(llm.score_tails("系统", "问题", TAILS))
        assert len(srv.requests) == 1


def responder(body: dict):
    prompt = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
    return {"relevance": lines(("是", -0.05, -6.0), ("否", -0.1, -5.0)), "evaluator": GRADE}[role_of(prompt)]


def test_an_api_evaluator_with_logprobs_goes_through_the_calibrated_gate(fake_settings):
    r = retrieval(10, 23)
    r.signals = signals(cos=0.8, margin=0.3, lexical=0.8)
    with FakeOpenAIServer(responder) as srv:
        stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=model(srv))
        state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(r)})
        roles = [role_of(str(b["messages"][-1]["content"])) for b in srv.requests]
    q = ATTEMPT_QUALITY.get(state)
    assert roles == ["relevance"] and q.source == "calibrated"  # no JSON grade asked for
    assert q.article_relevance["p#10"] > 0.5 > q.article_relevance["p#23"] and q.relevant == ["p#10"]


def test_without_logprobs_the_gate_asks_for_the_json_grade(fake_settings):
    with FakeOpenAIServer(lambda body: GRADE if role_of(str(body["messages"][-1]["content"])) == "evaluator"
                          else "1：是\n2：是") as srv:
        stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=model(srv))
        state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(retrieval(10, 23))})
        roles = [role_of(str(b["messages"][-1]["content"])) for b in srv.requests]
    assert roles == ["relevance", "evaluator"] and ATTEMPT_QUALITY.get(state).source == "llm" and ATTEMPT_QUALITY.get(state).passed
