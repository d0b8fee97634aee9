"""Definition questions (`legal/definitions.py`): the terms a statute defines, the questions that ask what one means,
and the retriever looking the defining article up like a numbered one."""
from __future__ import annotations

import pytest

from agentic_rag.legal.definitions import asked_term, defined_terms, matching

PIPL_73 = ("本法下列用语的含义：（一）个人信息处理者，是指在个人信息处理活动中自主决定处理目的、处理方式的组织、个人。"
           "（二）自动化决策，是指通过计算机程序自动分析、评估个人的行为习惯、兴趣爱好或者经济、健康、信用状况等，并进行决策"
           "的活动。（三）去标识化，是指个人信息经过处理，使其在不借助额外信息的情况下无法识别特定自然人的过程。（四）匿名化，"
           "是指个人信息经过处理无法识别特定自然人且不能复原的过程。")


def test_the_terms_a_definitions_article_defines():
    assert defined_terms(PIPL_73) == ["个人信息处理者", "自动化决策", "去标识化", "匿名化"]
    assert defined_terms("本法所称数据，是指任何以电子或者其他方式对信息的记录。") == ["数据"]
    assert defined_terms("前款规定的临时性工作岗位是指存续时间不超过六个月的岗位") == ["临时性工作岗位"]
    assert defined_terms("个人信息处理者应当指定个人信息保护负责人") == []


@pytest.mark.parametrize("question, term", [
    ("个人信息处理者是什么意思？", "个人信息处理者"), ("什么是匿名化？", "匿名化"), ("什么叫去标识化", "去标识化"),
    ("请问自动化决策指的是什么", "自动化决策"), ("数据安全法里的数据是什么", "数据安全法里的数据"),
    ("公司把我的手机号卖给别人合法吗？", None), ("App收集人脸要单独同意吗？", None), ("这是什么", None),
])
def test_the_term_a_question_asks_the_meaning_of(question, term):
    assert asked_term(question) == term


def test_a_term_named_with_where_it_is_defined_matches_but_not_a_longer_term():
    assert matching("个保法里的自动化决策", ["自动化决策", "决策"]) == ["自动化决策"]
    assert matching("匿名化", ["匿名化"]) == ["匿名化"] and matching("匿名化处理", ["匿名化"]) == []


def test_the_defining_article_is_looked_up_first(fake_retriever):
    # ranked alone, 第五十二条 (which uses the term) came before 第七十三条 (which defines it)
    first = fake_retriever.retrieve("个人信息处理者是什么意思？").articles[0]
    assert first.article == 73 and first.pinned
    assert not any(a.pinned for a in fake_retriever.retrieve("个人信息处理者应当做什么？").articles)


def test_in_several_laws_the_law_the_question_names_defines(fake_multilaw_retriever):
    first = fake_multilaw_retriever.retrieve("数据安全法里的数据是什么意思？").articles[0]
    assert (first.law, first.article, first.pinned) == ("中华人民共和国数据安全法", 3, True)
    first = fake_multilaw_retriever.retrieve("什么是非全日制用工？").articles[0]
    assert (first.law, first.article, first.pinned) == ("中华人民共和国劳动合同法", 68, True)
