"""GradeStage: rules first; a validated LLM grade; an outage is its own verdict, never a judgement."""
from __future__ import annotations

import json

import pytest

from agentic_rag.retrieval.types import Article, Retrieval
from agentic_rag.stages.grade.agent import GradeStage, parse_quality, rule_verdict
from agentic_rag.stages.grade.judge import Calibration, calibration, judge
from agentic_rag.state import (
    ATTEMPT_QUALITY,
    ATTEMPT_RETRIEVAL,
    CONTEXT,
    QUESTION,
    RAW_GRADE,
    ROUTE,
    Contextualised,
    Route,
)
from tests.fakes.adk import run_agent
from tests.fakes.mock_model import MockModel, MockScoringModel

DIMS = ("relevance", "completeness", "accuracy", "coverage")


def retrieval(*numbers, query_type="semantic", pinned=(), best=0.5, refs=(), absent=()):
    arts = [Article(id=f"p#{n}", title=f"《法》第{n}条", law="法", article=n, article_cn=f"第{n}条", text="……",
                    channels={"lookup": {"rank": 1, "score": 1.0}} if n in pinned else {}) for n in numbers]
    return Retrieval(query="q", query_type=query_type, matcher="ensemble", articles=arts, max_vector_score=best,
                     refs=list(refs), absent=list(absent))


@pytest.mark.parametrize("scores, total, passed", [((8, 8, 8, 8), 32, True), ((8, 8, 8, 7.9), 31.9, False),
                                                   ((10, 10, 10, 10), 40, True), ((0, 0, 0, 0), 0, False)])
def test_threshold_is_inclusive(scores, total, passed):
    q = parse_quality(json.dumps(dict(zip(DIMS, scores))), 32)
    assert q.total == total and q.passed is passed and q.verdict == ("pass" if passed else "fail")


def test_nested_scores_reasons_and_missing():
    text = json.dumps({d: {"score": 6, "reason": f"{d} ok"} for d in DIMS} | {"missing": "罚则"})
    q = parse_quality(text, 32)
    assert q.total == 24 and q.reasons["coverage"] == "coverage ok" and q.missing == "罚则"


@pytest.mark.parametrize("value", [85, 50, -5, 1e9, "85/100", "满分100分，给90分", None, True, "高"])
def test_a_score_outside_0_to_10_or_not_a_number_makes_the_grade_unreadable(value):
    q = parse_quality(json.dumps({"relevance": value, "completeness": 9, "accuracy": 9, "coverage": 9}), 32)
    assert q.verdict == "unreadable" and not q.passed and q.total == 0


def test_a_score_written_out_of_ten_in_words_is_read():
    q = parse_quality(json.dumps({"relevance": "满分10分，给3分", "completeness": "9/10", "accuracy": "8分",
                                  "coverage": 9}), 32)
    assert q.scores == {"relevance": 3, "completeness": 9, "accuracy": 8, "coverage": 9} and not q.passed


def test_rules():
    assert rule_verdict("q", retrieval(), 32, 0.2).source == "rule:no_results"
    assert rule_verdict("q", retrieval(1, best=0.1), 32, 0.2).source == "rule:low_relevance"
    lookup = rule_verdict("第五十七条是什么", retrieval(57, 3, query_type="exact", pinned=(57,), refs=(57,)), 32, 0.2)
    assert lookup.passed and lookup.source == "rule:exact_lookup" and lookup.relevant == ["p#57"]
    assert rule_verdict("第五十七条和隐私有什么关系", retrieval(57, query_type="exact", pinned=(57,), refs=(57,)),
                        32, 0.2) is None


def test_a_lookup_of_an_article_the_law_does_not_have_fails_at_once_and_says_which():
    missing = rule_verdict("第七十五条是什么？", retrieval(25, 74, query_type="exact", refs=(75,), absent=(75,)), 32, 0.2)
    assert not missing.passed and missing.source == "rule:no_such_article" and "第七十五条" in missing.error
    # one of two named articles exists: the grader decides as for any question
    assert rule_verdict("第七十四条和第七十五条是什么", retrieval(74, 25, query_type="exact", pinned=(74,), refs=(74, 75),
                                                          absent=(75,)), 32, 0.2) is None


def test_the_floor_judges_the_question_the_router_let_through_not_the_reply_searched_in_its_place(fake_settings):
    # stop 40: a clarification reply's facts are searched alone; three replies with a gold article first were refused
    # by the floor at cosine 0.18-0.21 while the merged question the router passed stood at ≥ 0.29
    question = "原问题：我被侵权了怎么办？；补充：快递公司把我的收件地址给了别人"
    low = {QUESTION.key: question, **ATTEMPT_RETRIEVAL.delta(retrieval(10, 23, best=0.19)),
           **ROUTE.delta(Route(kind="kb", signals={"best_similarity": 0.31}))}
    reply = Contextualised(question=question, kind="clarify_reply", source="rule", search="快递公司把我的收件地址给了别人")
    fake_settings = fake_settings.model_copy(update={"min_vector_score": 0.22})  # the shipped floor
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings,
                       model=MockModel.create(json.dumps(dict.fromkeys(DIMS, 9))))
    graded = ATTEMPT_QUALITY.get(run_agent(stage, state={**low, **CONTEXT.delta(reply)})[0])
    assert graded.source != "rule:low_relevance" and graded.passed
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=MockModel.create("{}"))
    alone = ATTEMPT_QUALITY.get(run_agent(stage, state=low)[0])  # the question itself searched: the floor holds
    assert alone.source == "rule:low_relevance" and not alone.passed


def grade(fake_settings, reply, state_extra=None):
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=MockModel.create(reply))
    state = {QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(retrieval(10, 23)), **(state_extra or {})}
    return stage, run_agent(stage, state=state)[0]


def test_grade_from_the_model_sees_the_articles_and_the_sub_questions(fake_settings):
    route = Route(kind="multi", sub_questions=["能收集吗？", "怎么赔？"])
    stage, state = grade(fake_settings, json.dumps(dict.fromkeys(DIMS, 9)), ROUTE.delta(route))
    assert ATTEMPT_QUALITY.get(state).passed and ATTEMPT_QUALITY.get(state).source == "llm"
    prompt = stage._model.prompts[0]
    assert "【第10条】" in prompt or "【《法》第10条】" in prompt
    assert "1. 能收集吗？" in prompt and "2. 怎么赔？" in prompt


def test_an_outage_is_a_model_error_not_a_fail(fake_settings):
    _, state = grade(fake_settings, TimeoutError("slow"))
    q = ATTEMPT_QUALITY.get(state)
    assert q.verdict == "model_error" and not q.passed and "超时" in q.error


# ------------------------------------------------------------------------------------------ the calibrated gate

CAL = Calibration(relevance=(-1.0, 2.0, 0.0, 0.0), accuracy=(-2.0, 1.5, 6.0), completeness=(-4.0, 12.0, 5.0, 2.0, 3.0),
                  relevant_threshold=0.5)


def signals(cos=0.6, margin=0.2, lexical=0.5, exact=0.0):
    from agentic_rag.retrieval.types import RetrievalSignals

    return RetrievalSignals(best_cosine=cos, cosine_margin=margin, lexical_overlap=lexical, exact_hit=exact)


# Expected values by hand, σ(x) = 1 / (1 + e^-x); P(relevant) = σ(-1 + 2d) with CAL (rank and cosine weigh 0).

def test_judge_combines_article_relevance_and_retrieval_signals_as_documented():
    r = retrieval(10, 23, 45)
    r.signals = signals()
    q = judge(r, r.articles, [3.0, -2.0, 0.5], 32, CAL)
    # P = σ(5) = 0.9933, σ(-5) = 0.0067, σ(0) = 0.5 (reaches relevant_threshold 0.5)
    assert q.article_relevance == {"p#10": 0.9933, "p#23": 0.0067, "p#45": 0.5}
    assert q.relevant == ["p#10", "p#45"]
    # relevance = coverage = 10·σ(5) = 9.93; accuracy = 10·σ(-2 + 1.5·3 + 6·0.6) = 10·σ(6.1) = 9.98;
    # completeness = 10·σ(-4 + 12·0.6 + 5·0.2 + 2·0.5 + 3·0) = 10·σ(5.2) = 9.95
    assert q.scores == {"relevance": 9.9, "completeness": 9.9, "accuracy": 10.0, "coverage": 9.9}
    assert q.total == 39.7 and q.passed and q.verdict == "pass" and q.source == "calibrated"


def test_the_gate_shift_moves_the_four_scores_not_which_articles_are_relevant():
    r = retrieval(10, 23, 45)
    r.signals = signals()
    shifted = Calibration(relevance=CAL.relevance, accuracy=CAL.accuracy, completeness=CAL.completeness,
                          relevant_threshold=0.5, gate_shift=-5.0)
    q = judge(r, r.articles, [3.0, -2.0, 0.5], 32, shifted)
    # relevance = coverage = 10·σ(5 - 5) = 5.0; accuracy = 10·σ(6.1 - 5) = 7.50; completeness = 10·σ(5.2 - 5) = 5.50
    assert q.scores == {"relevance": 5.0, "completeness": 5.5, "accuracy": 7.5, "coverage": 5.0}
    assert q.total == 23.0 and not q.passed and q.verdict == "fail" and q.missing
    assert q.relevant == ["p#10", "p#45"] and q.article_relevance["p#10"] == 0.9933  # unshifted


def test_judge_fails_when_no_article_is_relevant_and_still_names_the_best():
    r = retrieval(10, 23)
    r.signals = signals(cos=0.3, margin=0.02, lexical=0.1)
    q = judge(r, r.articles, [-3.0, -1.0], 32, CAL)
    # P = σ(-7) = 0.0009, σ(-3) = 0.0474: none reaches 0.5, the best (p#23) is named anyway
    assert q.relevant == ["p#23"] and q.article_relevance == {"p#10": 0.0009, "p#23": 0.0474}
    # relevance = coverage = 0.47; accuracy = 10·σ(-2 - 4.5 + 1.8) = 10·σ(-4.7) = 0.09;
    # completeness = 10·σ(-4 + 3.6 + 0.1 + 0.2) = 10·σ(-0.1) = 4.75
    assert q.scores == {"relevance": 0.5, "completeness": 4.8, "accuracy": 0.1, "coverage": 0.5}
    assert q.total == 5.9 and not q.passed and q.missing


def test_coverage_is_the_weakest_sub_question():
    r = retrieval(10, 23, 45, 69)
    for a, sub in zip(r.articles, (0, 1, 0, 1)):
        a.sub_question = sub
    q = judge(r, r.articles, [4.0, -3.0, 0.0, -2.0], 32, CAL)
    # sub-question 0: σ(7) = 0.9991 (p#10), σ(-1) = 0.2689 (p#45); sub-question 1: σ(-7), σ(-5) = 0.0067 (p#69)
    assert q.scores["relevance"] == 10.0 and q.scores["coverage"] == 0.1  # 10·0.9991, 10·0.0067


def test_articles_of_no_sub_question_do_not_set_a_multi_intent_questions_coverage():
    """An article the evidence refers to (role follow_up, no sub-question) scored low: both sub-questions have a
    relevant article, so coverage is theirs (the weaker: σ(5) = 0.9933), not the follow-up's σ(-7)."""
    r = retrieval(10, 23, 45)
    r.articles[0].sub_question, r.articles[1].sub_question = 0, 1
    r.articles[2].role = "follow_up"
    q = judge(r, r.articles, [4.0, 3.0, -3.0], 32, CAL)
    assert q.scores["coverage"] == 9.9


def test_the_embedded_model_grades_by_scoring_one_tail_per_article(fake_settings):
    model = MockScoringModel(diffs=[4.0, -3.0])
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=model)
    r = retrieval(10, 23)
    r.signals = signals(cos=0.8, margin=0.3, lexical=0.8)
    state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(r)})
    q = ATTEMPT_QUALITY.get(state)
    assert q.source == "calibrated" and model.requests == []  # no generation, one scoring call
    (prefix, tails), = model.scored
    assert prefix.startswith("用户问题：问题\n\n检索到的法条：\n") and len(tails) == 2
    # the task is the end of the prefix (evaluated once); each article adds only a short tail that names it
    assert prefix.endswith("只回答“是”或“否”。\n") and "第10条" in tails[0] and "第23条" in tails[1]
    assert max(map(len, tails)) < 20
    assert "logit" in RAW_GRADE.get(state)


def test_the_signals_gate_judges_without_a_model_call(fake_settings):
    """GATE_MODE=signals: the retrieval evidence alone, no model call."""
    model = MockScoringModel(diffs=[4.0, -3.0])
    settings = fake_settings.model_copy(update={"gate_mode": "signals"})
    stage = GradeStage(name="QualityEvaluatorAgent", settings=settings, model=model)
    r = retrieval(10, 23)
    r.signals = signals(cos=0.8, margin=0.3, lexical=0.8)
    state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(r)})
    q = ATTEMPT_QUALITY.get(state)
    assert model.scored == [] and model.requests == [] and "无模型调用" in RAW_GRADE.get(state)
    assert q.source == "calibrated" and q == judge(r, r.articles, [0.0, 0.0], 32, calibration("signals"))
    assert q.article_relevance["p#10"] > q.article_relevance["p#23"]  # rank and cosine, not a logit


def evidence(cos: float, margin: float, lexical: float) -> Retrieval:
    """Two articles with dense cosines `cos` and `cos - margin`, and the retrieval's signals to match."""
    r = retrieval(10, 23)
    for article, c in zip(r.articles, (cos, cos - margin)):
        article.channels = {"vector": {"score": c}}
    r.signals = signals(cos=cos, margin=margin, lexical=lexical)
    return r


EMBEDDED = "local/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"  # the evaluator the bounds were measured against


def grade_auto(fake_settings, r: Retrieval, **settings):
    model = MockScoringModel(diffs=[4.0, -3.0])
    stage = GradeStage(name="QualityEvaluatorAgent", model=model, settings=fake_settings.model_copy(
        update={"gate_mode": "auto", "evaluator_model": EMBEDDED, **settings}))
    state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(r)})
    return ATTEMPT_QUALITY.get(state), RAW_GRADE.get(state), model


@pytest.mark.parametrize("cos, margin, lexical, passed", [(0.3, 0.02, 0.3, False), (0.6, 0.15, 0.8, True)])
def test_auto_decides_a_clear_case_on_retrieval_evidence_without_the_model(fake_settings, cos, margin, lexical, passed):
    r = evidence(cos, margin, lexical)
    q, raw, model = grade_auto(fake_settings, r)
    skip = calibration().skip_model
    assert model.scored == [] and model.requests == [] and "未调用模型" in raw
    assert q == judge(r, r.articles, [0.0, 0.0], 32, calibration("signals"))
    assert q.passed is passed and (q.total > skip.pass_above if passed else q.total < skip.fail_below)


def test_auto_asks_the_model_between_the_bounds_or_at_another_threshold(fake_settings):
    middle = evidence(0.4, 0.05, 0.45)
    q, raw, model = grade_auto(fake_settings, middle)
    assert calibration().skip_model.fail_below <= judge(middle, middle.articles, [0.0, 0.0], 32,
                                                        calibration("signals")).total <= calibration().skip_model.pass_above
    assert len(model.scored) == 1 and q == judge(middle, middle.articles, [4.0, -3.0], 32) and "logit" in raw
    # the bounds were chosen for PASS ≥ 32: at another threshold the model decides even a clear case
    q, raw, model = grade_auto(fake_settings, evidence(0.6, 0.15, 0.8), quality_threshold=30)
    assert len(model.scored) == 1 and "logit" in raw
    # ... and they were measured against the embedded model's gate: an API evaluator is always asked
    q, raw, model = grade_auto(fake_settings, evidence(0.6, 0.15, 0.8), evaluator_model="deepseek/deepseek-chat")
    assert len(model.scored) == 1 and "logit" in raw


def test_auto_leaves_a_hedge_to_the_model(fake_settings):
    """A multi-intent question: one sub-question's article is near, the other's far. Retrieval evidence alone puts
    the total below the bound but would hedge from the near article; whether to hedge is the model's gate's call."""
    r = evidence(0.6, 0.5, 0.3)
    r.articles[0].sub_question, r.articles[1].sub_question = 0, 1
    alone = judge(r, r.articles, [0.0, 0.0], 32, calibration("signals"))
    assert alone.total < calibration().skip_model.fail_below and alone.action == "ambiguous"
    q, raw, model = grade_auto(fake_settings, r)
    assert len(model.scored) == 1 and "logit" in raw


def test_the_shipped_bounds_sit_around_the_pass_threshold():
    skip = calibration().skip_model
    assert skip.fail_below < 32 < skip.pass_above and skip.threshold == 32
    assert calibration().provenance["model_logit"] and not calibration("signals").skip_model


def test_the_shipped_signals_calibration_has_no_logit_weight():
    cal = calibration("signals")
    assert cal.relevance[1] == 0.0 and cal.accuracy[1] == 0.0 and cal.provenance["model_logit"] is False


def test_a_scoring_failure_is_a_model_error(fake_settings):
    model = MockScoringModel(diffs=[])
    model.diffs = TimeoutError("slow")  # type: ignore[assignment]
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings, model=model)
    state, _ = run_agent(stage, state={QUESTION.key: "问题", **ATTEMPT_RETRIEVAL.delta(retrieval(10))})
    assert ATTEMPT_QUALITY.get(state).verdict == "model_error"


def test_a_json_grade_names_articles_of_its_own_law_only():
    from agentic_rag.stages.grade.json_grade import relevant_ids
    from agentic_rag.state import Article

    def art(law, n):
        return Article(id=f"{law}#{n}", title=f"《{law}》第{n}条", law=law, article=n, article_cn=f"第{n}条", text="…")

    given = [art("中华人民共和国数据安全法", 21), art("中华人民共和国个人信息保护法", 21), art("中华人民共和国个人信息保护法", 10)]
    assert relevant_ids(["《数据安全法》第二十一条"], given) == ["中华人民共和国数据安全法#21"]
    assert relevant_ids(["第十条", "《刑法》第二十一条"], given) == ["中华人民共和国个人信息保护法#10"]
    assert relevant_ids(["21"], given) == ["中华人民共和国数据安全法#21", "中华人民共和国个人信息保护法#21"]  # no law named


PIPL = "中华人民共和国个人信息保护法"
SANCTION_66 = ("违反本法规定处理个人信息，或者处理个人信息未履行本法规定的个人信息保护义务的，由履行个人信息保护职责的部门"
               "责令改正，给予警告，没收违法所得；拒不改正的，并处一百万元以下罚款。")
SANCTION_78 = ("电子商务经营者违反本法第二十一条规定，未向消费者明示押金退还的方式、程序，对押金退还设置不合理条件，"
               "或者不及时退还押金的，由有关主管部门责令限期改正，可以处五万元以上二十万元以下的罚款。")
ONE_CONDUCT = "违反本法规定，未经许可，擅自经营劳务派遣业务的，由劳动行政部门责令停止违法行为，没收违法所得，并处罚款。"


def law_article(law: str, n: int, text: str) -> Article:
    return Article(id=f"{law}#{n}", title=f"《{law}》第{n}条", law=law, article=n, article_cn=f"第{n}条", text=text)


@pytest.mark.parametrize("previous, articles, relevant", [
    # 「第十条是什么？」 → 「违反了会怎么样？」: the law's sanction of any breach governs
    ((PIPL, 10), [law_article(PIPL, 10, "任何组织、个人不得非法收集…"), law_article(PIPL, 66, SANCTION_66)],
     [f"{PIPL}#66", f"{PIPL}#10"]),
    # the sanction that names the article breached wins over one of the law at large
    (("电子商务法", 21), [law_article("电子商务法", 78, SANCTION_78), law_article("电子商务法", 66, SANCTION_66),
                        law_article("电子商务法", 21, "电子商务经营者按照约定向消费者收取押金的，应当明示押金退还的方式、程序")],
     ["电子商务法#78", "电子商务法#21"]),
    # a sanction of one conduct, or of another law, is not the sanction of the article asked about
    (("劳动合同法", 58), [law_article("劳动合同法", 92, ONE_CONDUCT)], None),
    (("数据安全法", 27), [law_article(PIPL, 66, SANCTION_66)], None),
])
def test_a_sanction_follow_up_is_answered_from_the_sanction_of_the_article_the_conversation_is_about(
        fake_settings, previous, articles, relevant):
    state = {QUESTION.key: "上一问题：第十条是什么？；追问：违反了会怎么样？",
             **ATTEMPT_RETRIEVAL.delta(Retrieval(query="q", query_type="semantic", matcher="ensemble",
                                                 articles=articles, max_vector_score=0.5)),
             **CONTEXT.delta(Contextualised(question="q", kind="follow_up", source="rule",
                                            history_articles=[previous]))}
    stage = GradeStage(name="QualityEvaluatorAgent", settings=fake_settings,
                       model=MockModel.create(json.dumps(dict.fromkeys(DIMS, 1))))
    graded = ATTEMPT_QUALITY.get(run_agent(stage, state=state)[0])
    if relevant is None:
        assert graded.source != "rule:sanction_follow_up"
    else:
        assert graded.passed and graded.source == "rule:sanction_follow_up" and graded.relevant == relevant
    # the same retrieval on a first question, or on a follow-up that does not ask the sanction, is the grader's
    first = {**state, CONTEXT.key: None}
    assert ATTEMPT_QUALITY.get(run_agent(stage, state=first)[0]).source != "rule:sanction_follow_up"
    other = {**state, QUESTION.key: "上一问题：第十条是什么？；追问：那第十三条呢？"}
    assert ATTEMPT_QUALITY.get(run_agent(stage, state=other)[0]).source != "rule:sanction_follow_up"
