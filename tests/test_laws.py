"""Several laws in one knowledge base: law names resolved, lookups across laws, the named law favoured, citations
and eval gold as (law, article) pairs. Built from the real LawRefBook text of six laws, with the fast fake embedder."""
from __future__ import annotations

import json

import pytest

from agentic_rag.eval.retrieval import evaluate, gold_keys
from agentic_rag.knowledge.corpus import CorpusError, load_corpus
from agentic_rag.legal.laws import laws_named, national_title, resolve
from agentic_rag.stages.answer.citations import Evidence, check
from tests.conftest import LAWREFBOOK
from tests.conftest import MULTILAW_KB as KB

LABOUR, CONSUMER, PIPL, CIVIL = ("中华人民共和国劳动合同法", "中华人民共和国消费者权益保护法",
                                 "中华人民共和国个人信息保护法", "中华人民共和国民法典")


@pytest.mark.parametrize("named, law", [("劳动合同法", LABOUR), ("消法", CONSUMER), ("个保法", PIPL),
                                        ("《中华人民共和国民法典》", CIVIL), ("请给出个人信息保护法", PIPL),
                                        ("PIPL", PIPL), ("pipl", PIPL), ("CSL", None),  # the 网络安全法: not here
                                        ("劳动法", None), ("刑法", None), ("消防法", None), ("本法", None)])
def test_law_names_resolve_to_knowledge_base_laws_or_to_none(named, law):
    assert resolve(named, KB) == law


def test_another_national_law_is_recognised_as_such():
    assert national_title("劳动法") == "中华人民共和国劳动法" and national_title("公司内部规定") is None


def test_laws_named_anywhere_in_a_question():
    assert laws_named("民法典和个保法对个人信息的定义一样吗", KB) == [CIVIL, PIPL]
    assert laws_named("公司违法辞退我怎么办", KB) == []
    assert laws_named("PIPL和民法典对个人信息的定义一样吗", KB) == [PIPL, CIVIL]
    assert laws_named("APP和SDK收集信息", KB) == []  # Latin words that are no law's alias


@pytest.fixture(scope="module")
def multilaw(fake_multilaw_retriever):
    return fake_multilaw_retriever


def test_the_manifest_lists_the_laws_and_unknown_titles_are_refused(multilaw, tmp_path):
    assert multilaw.index.manifest.laws == sorted(KB) and multilaw.law is None
    with pytest.raises(CorpusError, match="劳动法"):
        load_corpus(LAWREFBOOK, laws=[LABOUR, "劳动法"])


@pytest.mark.parametrize("question, law, article", [("劳动合同法第十九条是什么", LABOUR, 19), ("消法第55条", CONSUMER, 55),
                                                    ("个保法第31条怎么规定", PIPL, 31),
                                                    ("民法典第一千零三十二条讲了什么", CIVIL, 1032),
                                                    ("PIPL第31条讲的啥", PIPL, 31),  # an English abbreviation
                                                    ("What does article 31 of the PIPL say?", PIPL, 31)])
def test_exact_lookup_across_laws(multilaw, question, law, article):
    first = multilaw.retrieve(question).articles[0]
    assert (first.law, first.article) == (law, article) and first.pinned


def test_an_unnamed_article_number_of_many_laws_is_not_guessed(multilaw):
    result = multilaw.retrieve("第五条和个人隐私有什么关系")
    assert not any(a.pinned for a in result.articles) and result.absent == []  # several laws have one


def test_asked_only_for_an_unnamed_article_every_law_s_is_listed(multilaw):
    pinned = [a for a in multilaw.retrieve("第5条是什么").articles if a.pinned]
    assert sorted(a.law for a in pinned) == sorted(KB) and {a.article for a in pinned} == {5}


@pytest.mark.parametrize("question, focus", [("劳动合同法里，第十条说的是什么", ()), ("那第十条呢？", (LABOUR,))])
def test_an_unnamed_article_is_of_the_law_the_question_or_the_conversation_is_about(multilaw, question, focus):
    pinned = [a for a in multilaw.retrieve(question, focus_laws=focus).articles if a.pinned]
    assert [(a.law, a.article) for a in pinned] == [(LABOUR, 10)]


@pytest.mark.parametrize("question, absent", [("民法典第5000条是什么", [5000]), ("消法第100条", [100]),
                                              ("第九千条是什么", [9000]), ("民法典第一千零三十二条", []),
                                              ("刑法第100条是什么", [])])  # a law not here: not this index's to deny
def test_an_article_number_the_named_law_does_not_have_is_absent(multilaw, question, absent):
    assert multilaw.retrieve(question).absent == absent


def test_the_named_law_is_favoured(multilaw):
    result = multilaw.retrieve("劳动合同法里试用期最长可以约定多久")
    assert result.focus_laws == [LABOUR] and {a.law for a in result.articles[:3]} == {LABOUR}


def test_the_retrieval_table_names_the_law_of_every_article(multilaw):
    from agentic_rag.demo import format_retrieval

    table = format_retrieval(multilaw.retrieve("劳动合同法里试用期最长可以约定多久"), single_law=False)
    rows = [line for line in table.split("\n") if line.startswith("   ")]
    assert rows and all(line.startswith("   《") for line in rows) and "《劳动合同法》" in table


def test_the_voted_law_is_lifted_only_when_asked(multilaw):
    from agentic_rag.retrieval.retriever import LocalRetriever

    question = "试用期最长可以约定多久"  # no law named
    plain = multilaw.retrieve(question)
    assert plain.focus_laws == []  # LAW_VOTE_BOOST=1 by default: the fused order stands
    lifted = LocalRetriever(multilaw.index, multilaw.embedder, multilaw.tokenizer, None,
                            multilaw.settings.model_copy(update={"law_vote_boost": 3.0}))
    result = lifted.retrieve(question)
    assert len(result.focus_laws) == 1 and all(a.law == result.focus_laws[0] for a in result.articles)
    assert {a.law for a in plain.articles} != {a.law for a in result.articles}  # the lift changed the top


def test_citations_are_checked_as_pairs_across_laws(multilaw):
    result = multilaw.retrieve("消法第55条")
    ev = Evidence(articles=result.articles, kb_laws=multilaw.laws)
    text, rec = check("依据《消费者权益保护法》第五十五条，可以要求三倍赔偿；另见《劳动合同法》第五十五条。", ev)
    assert rec.valid_keys == [[CONSUMER, 55]] and rec.invalid_keys == [[LABOUR, 55]]
    assert text == "依据《消费者权益保护法》第五十五条，可以要求三倍赔偿；"  # "另见〔removed〕。" is dropped whole


def test_eval_gold_as_law_article_pairs(multilaw):
    rows = [{"id": "1", "query": "消法第55条", "type": "exact", "gold": [{"law": CONSUMER, "article": 55}]},
            {"id": "2", "query": "劳动合同法第十九条", "type": "exact", "gold": [{"law": LABOUR, "article": 19}]}]
    assert gold_keys(rows[0]["gold"]) == {(CONSUMER, 55)}
    result = evaluate(multilaw, rows, ["bm25"], depth=5)
    assert result["matchers"]["bm25"]["recall@1"] == 1.0


def test_the_agent_answers_and_cites_by_law_and_article_over_several_laws(multilaw, fake_settings):
    from agentic_rag.state import CITATIONS, FINAL_ANSWER, KB_LAW, KB_LAWS, PATH, ROUTE
    from agentic_rag.workflow import ConditionalWorkflowAgent
    from tests.fakes.adk import run_agent
    from tests.fakes.fake_llm import FakeLlm, install

    grade = json.dumps({**dict.fromkeys(("relevance", "completeness", "accuracy", "coverage"), 9),
                        "relevant": ["《劳动合同法》第十九条"]})
    install({"evaluator": grade, "answer": "视情况，依据《劳动合同法》第十九条看合同期限；另见《劳动合同法》第二百条。"})
    agent = ConditionalWorkflowAgent(settings=fake_settings, retriever_factory=lambda: multilaw)
    lookup, _ = run_agent(agent, "劳动合同法第十九条是什么？")  # a pure lookup: the article itself, no model call
    assert ROUTE.get(lookup).kind == "kb" and KB_LAW.get(lookup) is None and len(KB_LAWS.get(lookup)) == 6
    assert PATH.get(lookup) == "pass" and CITATIONS.get(lookup).listed == [[LABOUR, 19]]
    assert FINAL_ANSWER.get(lookup).startswith("**《中华人民共和国劳动合同法》第十九条**：") and FakeLlm.calls == []
    state, _ = run_agent(agent, "劳动合同法第十九条说的试用期最长能约定多久？")
    assert PATH.get(state) == "pass" and CITATIONS.get(state).listed[0] == [LABOUR, 19]
    assert CITATIONS.get(state).invalid_keys == [[LABOUR, 200]]  # the sentence citing it was dropped, and recorded
    assert "第二百条" not in FINAL_ANSWER.get(state) and "已删去" in FINAL_ANSWER.get(state)
    assert "《中华人民共和国劳动合同法》第十九条规定：“" in FINAL_ANSWER.get(state)
    prompt = FakeLlm.calls[-1][1]
    assert "【《中华人民共和国劳动合同法》第十九条】" in prompt  # several laws: every article is named with its law


def test_the_law_map_holds_the_knowledge_base_laws_and_the_national_catalogue(multilaw):
    import numpy as np

    from agentic_rag.knowledge.law_map import LawMap

    law_map = multilaw.index.law_map
    kb_titles = {t for t, k in zip(law_map.titles, law_map.in_kb) if k}
    assert kb_titles == set(KB) and len(law_map.titles) > 250 and law_map.vectors.shape[0] == len(law_map.titles)
    assert "中华人民共和国刑法" in law_map.titles and law_map.titles.count(LABOUR) == 1  # the KB's own entry only
    nearest = multilaw.nearest_laws("劳动合同法里试用期最长可以约定多久")
    assert nearest["kb_law"] in KB and nearest["other_law"] not in KB
    toy = LawMap(["甲", "乙", "丙"], np.array([True, False, False]), np.eye(3, dtype=np.float32))
    assert toy.nearest(np.array([0.1, 0.9, 0.3], dtype=np.float32)) == {
        "kb_law": "甲", "kb_cosine": pytest.approx(0.1), "other_law": "乙", "other_cosine": pytest.approx(0.9)}


def test_retrieval_can_skip_articles_an_earlier_attempt_showed(multilaw):
    first = multilaw.retrieve("网购的衣服不喜欢能退货吗", top_k_=5)
    again = multilaw.retrieve("网购的衣服不喜欢能退货吗", top_k_=5, exclude=[a.id for a in first.articles])
    assert len(again.articles) == 5 and not {a.id for a in again.articles} & {a.id for a in first.articles}
    lookup = multilaw.retrieve("消法第25条", exclude=["民法商法/消费者权益保护法(2013-10-25).md#第二十五条"])
    assert lookup.articles[0].pinned and lookup.articles[0].article == 25  # a looked-up article is never skipped
