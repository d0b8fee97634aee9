"""RetrieveStage over the real index (fake embedder): plan queries, per-sub-question quota, follow-up references."""
from __future__ import annotations

from agentic_rag.stages.retrieve import RetrieveStage, fuse_own_words, merge_per_question
from agentic_rag.state import ATTEMPT_RETRIEVAL, CONTEXT, PLAN, QUESTION, ROUTE, Contextualised, Plan, Route
from tests.fakes.adk import run_agent


def retrieve(fake_settings, fake_retriever, question, route=None, **plan):
    stage = RetrieveStage(name="RetrievalAgent", settings=fake_settings, retriever_factory=lambda: fake_retriever)
    p = Plan(attempt=1, matcher=plan.get("matcher", "ensemble"), main_query=question, top_k=plan.get("top_k", 5))
    state = {QUESTION.key: question, **PLAN.delta(p), **(ROUTE.delta(route) if route else {})}
    return ATTEMPT_RETRIEVAL.get(run_agent(stage, state=state)[0])


PIPL = "中华人民共和国个人信息保护法"


def follow_ups_of(result) -> list[tuple[int, str, int]]:
    """(article, the article that pointed to it, depth) of every follow-up, in order."""
    return [(a.article, a.channels["follow_up"]["from"], a.channels["follow_up"]["depth"])
            for a in result.articles if a.role == "follow_up"]


def test_follow_up_adds_the_articles_an_evidence_article_points_to(fake_settings, fake_retriever):
    # 第四十五条: "有本法第十八条第一款、第三十五条规定情形的除外" → 18 and 35 at depth 1; 第三十五条 points to 第十八条
    # again (already there) and 第十八条 only to "前条" (not a numbered reference): nothing at depth 2.
    result = retrieve(fake_settings, fake_retriever, "第四十五条是什么内容")
    assert result.articles[0].article == 45 and result.articles[0].role == "evidence"
    assert follow_ups_of(result) == [(18, f"{PIPL}#第四十五条", 1), (35, f"{PIPL}#第四十五条", 1)]
    assert {18, 35}.isdisjoint(a.article for a in result.evidence)


def test_follow_ups_come_from_each_of_the_best_three_evidence_articles(fake_settings, fake_retriever):
    # evidence 38, 35, 37 (then 70, 12): 第三十八条 "依照本法第四十条" → 40; 第三十五条 "有本法第十八条第一款" → 18;
    # 第三十七条 names no article
    result = retrieve(fake_settings, fake_retriever, "第三十八条是什么内容")
    assert [a.article for a in result.evidence] == [38, 35, 37, 70, 12]
    assert follow_ups_of(result) == [(40, f"{PIPL}#第三十八条", 1), (18, f"{PIPL}#第三十五条", 1)]


def test_follow_up_is_off_with_the_loop(fake_settings, fake_retriever):
    s = fake_settings.model_copy(update={"agentic_enabled": False})
    result = retrieve(s, fake_retriever, "第四十五条是什么内容")
    assert all(a.role == "evidence" for a in result.articles)


def test_sub_questions_each_keep_a_quota(fake_settings, fake_retriever):
    route = Route(kind="multi", sub_questions=["第十条是什么", "第六十九条是什么"])
    result = retrieve(fake_settings, fake_retriever, "两个问题", route)
    evidence = result.evidence
    assert result.sub_questions == route.sub_questions and len(evidence) == 6
    assert evidence[0].article == 10 and evidence[1].article == 69  # round-robin: each sub-question's best first
    assert len({a.id for a in evidence}) == len(evidence)
    # the gate weighs the whole question's retrieval signals, as it was calibrated (not the defaults: all zero)
    assert result.signals == fake_retriever.retrieve("两个问题", top_k_=5).signals and result.signals.best_cosine > 0


def test_merge_dedups_and_caps(fake_retriever):
    a = fake_retriever.retrieve("第十条", top_k_=5)
    merged = merge_per_question([a, a], ["x", "y"], 5)
    assert len(merged.articles) == 5 and len({x.id for x in merged.articles}) == 5


def ids(articles) -> list[str]:
    return [a.id for a in articles]


def test_a_follow_ups_own_words_are_fused_with_the_question(fake_retriever):
    """The rule form's first question pulls its ranking to the first turn's articles: the follow-up's own search
    brings its own first article in, the question's evidence and signals are kept for the gate."""
    question = fake_retriever.retrieve("上一问题：公司把我的手机号卖给了别人；追问：他们不照做我能投诉吗？", top_k_=5)
    own = fake_retriever.retrieve("他们不照做我能投诉吗？", top_k_=5)
    assert own.evidence[0].id not in ids(question.evidence)  # otherwise the test shows nothing
    fused = fuse_own_words(question, own)
    assert len(fused.evidence) == len(question.evidence) and fused.signals == question.signals
    assert set(ids(fused.evidence)) <= set(ids(question.evidence)) | set(ids(own.evidence))
    # the two first articles tie: the question's comes first (it reads the follow-up with its context)
    assert ids(fused.evidence)[:2] == [question.evidence[0].id, own.evidence[0].id]
    kept = next(a for a in fused.evidence if a.id == question.evidence[0].id)
    assert kept.channels == question.evidence[0].channels  # the question's evidence, not the own search's


def test_a_looked_up_article_stays_first_when_own_words_are_fused(fake_retriever):
    question = fake_retriever.retrieve("上一问题：第十条是什么内容；追问：违反了怎么罚？", top_k_=5)
    assert question.evidence[0].pinned and question.evidence[0].article == 10
    fused = fuse_own_words(question, fake_retriever.retrieve("违反了怎么罚？", top_k_=5))
    assert fused.evidence[0].id == question.evidence[0].id


def test_the_stage_searches_a_follow_ups_own_words_unless_it_searches_other_words(fake_settings, fake_retriever):
    question, words = "上一问题：公司把我的手机号卖给了别人；追问：他们不照做我能投诉吗？", "他们不照做我能投诉吗？"
    stage = RetrieveStage(name="RetrievalAgent", settings=fake_settings, retriever_factory=lambda: fake_retriever)
    plan = Plan(attempt=1, matcher="ensemble", main_query=question, top_k=5)

    def run(**context):
        c = Contextualised(question=question, kind="follow_up", source="rule", **context)
        state = {QUESTION.key: question, **PLAN.delta(plan), **CONTEXT.delta(c)}
        return ATTEMPT_RETRIEVAL.get(run_agent(stage, state=state)[0])

    fused = fuse_own_words(fake_retriever.retrieve(question, top_k_=5), fake_retriever.retrieve(words, top_k_=5))
    assert ids(run(own_words=words).evidence) == ids(fused.evidence)
    assert ids(run().evidence) == ids(fake_retriever.retrieve(question, top_k_=5).evidence)
    searched = run(own_words=words, search="公司卖了我的手机号")  # a search text replaces the question: no fusion
    assert ids(searched.evidence) == ids(fake_retriever.retrieve("公司卖了我的手机号", top_k_=5).evidence)


def test_asked_the_sanction_after_an_article_its_sanction_by_number_is_a_candidate(fake_settings, fake_multilaw_retriever):
    dsl = "中华人民共和国数据安全法"
    assert [fake_multilaw_retriever.documents[i].article for i in fake_multilaw_retriever.sanctioning(dsl, 36)] == [48]
    stage = RetrieveStage(name="RetrievalAgent", settings=fake_settings,
                          retriever_factory=lambda: fake_multilaw_retriever)

    def run(follow_up):
        question = f"上一问题：国外法院要我们把境内服务器上的数据交给他们；追问：{follow_up}"
        plan = Plan(attempt=1, matcher="ensemble", main_query=question, top_k=5)
        c = Contextualised(question=question, kind="follow_up", source="rule", history_articles=[(dsl, 36)])
        state = {QUESTION.key: question, **PLAN.delta(plan), **CONTEXT.delta(c)}
        return ATTEMPT_RETRIEVAL.get(run_agent(stage, state=state)[0]).articles

    # 第四十八条 sanctions 「违反本法第三十六条规定…」 in its second paragraph: a search need not find it
    sanction = [a for a in run("要是没批准就给了，会怎么处理？") if a.search_type == "sanction"]
    assert [(a.law, a.article, a.role) for a in sanction] == [(dsl, 48, "follow_up")]
    assert not [a for a in run("那要经过谁批准？") if a.search_type == "sanction"]  # not asked the sanction
