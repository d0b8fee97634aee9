"""Chinese numerals and query analysis: article references, query types, law names, pure lookups."""
from __future__ import annotations

import pytest

from agentic_rag.legal.numerals import article_cn, cn_to_int, int_to_cn
from agentic_rag.legal.refs import find_article_refs, law_matches, spell_out_refs
from agentic_rag.retrieval.analysis import analyze_query, is_pure_lookup
from agentic_rag.retrieval.tokenizer import LegalTokenizer

PIPL = "中华人民共和国个人信息保护法"


@pytest.fixture(scope="module")
def legal_terms() -> frozenset[str]:
    """The legal dictionary, as LocalRetriever uses it."""
    return LegalTokenizer().legal_terms


# ---------------------------------------------------------------------------------------------- numerals
@pytest.mark.parametrize("text,value", [
    ("一", 1), ("十", 10), ("十四", 14), ("二十", 20), ("二十八", 28), ("一百", 100), ("一百零五", 105),
    ("一百一十", 110), ("两百", 200), ("一千零三十四", 1034), ("一千零一", 1001), ("九千九百九十九", 9999),
    ("28", 28), (" 七十四 ", 74),
])
def test_cn_to_int(text, value):
    assert cn_to_int(text) == value


@pytest.mark.parametrize("bad", ["", "二三", "二十X", "abc", "第五", "五五十"])
def test_cn_to_int_rejects_malformed_numerals(bad):
    with pytest.raises(ValueError):
        cn_to_int(bad)


@pytest.mark.parametrize("n,text", [(1, "一"), (10, "十"), (14, "十四"), (28, "二十八"), (105, "一百零五"),
                                    (110, "一百一十"), (1001, "一千零一"), (1010, "一千零一十"),
                                    (1034, "一千零三十四"), (2000, "二千")])
def test_int_to_cn(n, text):
    assert int_to_cn(n) == text


def test_numeral_round_trip_for_every_article_number():
    for n in range(1, 10000):
        assert cn_to_int(int_to_cn(n)) == n, n
    assert article_cn(57) == "第五十七条"
    for bad in (0, -1, 10000):
        with pytest.raises(ValueError):
            int_to_cn(bad)


# ---------------------------------------------------------------------------------------------- references
@pytest.mark.parametrize("query,article,law", [
    ("第二十八条", 28, None),
    ("第28条", 28, None),
    ("第 28 条", 28, None),
    ("个人信息保护法第29条", 29, "个人信息保护法"),
    ("二十八条", 28, None),
    ("个保法第二十四条", 24, "个保法"),
    ("《中华人民共和国个人信息保护法》第一百零五条是什么", 105, "中华人民共和国个人信息保护法"),
    ("本法第十条怎么规定的", 10, None),  # 本法 = the law being read, not a law name
])
def test_exact_references(query, article, law):
    analysis = analyze_query(query)
    assert analysis.type == "exact"
    assert analysis.articles == [article]
    assert analysis.refs[0].law == law


@pytest.mark.parametrize("query", ["发了一条短信", "他说了一条意见", "我今年十四岁", "条款一共有几条"])
def test_not_article_references(query):
    assert find_article_refs(query) == []
    assert analyze_query(query).type != "exact"


def test_several_references_in_order_without_duplicates():
    refs = find_article_refs("第28条和第二十九条有什么区别？第28条呢")
    assert [r.article for r in refs] == [28, 29]
    assert refs[0].text == "第28条"


# ---------------------------------------------------------------------------------------------- query types
@pytest.mark.parametrize("query", ["敏感个人信息 单独同意", "自动化决策 拒绝", "匿名化定义", "个人信息 出境、安全评估"])
def test_keyword_queries(query, legal_terms):
    assert analyze_query(query, legal_terms).type == "keyword"


@pytest.mark.parametrize("query", [
    "公司把我的手机号卖给别人合法吗？",
    "我家孩子才10岁，App收集他的信息要我同意吗？",
    "离职后公司还能保留我的人脸照片吗",
    "为什么 App 一定要我授权通讯录",  # question word despite the spaces
    "网站被黑客攻击导致我的身份证号码泄露了，网站要承担什么责任",
])
def test_semantic_queries(query, legal_terms):
    assert analyze_query(query, legal_terms).type == "semantic"


def test_single_term_keyword_needs_the_legal_dictionary(legal_terms):
    assert "匿名化" in legal_terms
    assert analyze_query("匿名化定义", frozenset()).type == "semantic"
    assert analyze_query("匿名化定义", legal_terms).type == "keyword"


# ---------------------------------------------------------------------------------------------- law names
@pytest.mark.parametrize("named,expected", [
    ("个保法", True),
    ("个人信息保护法", True),
    ("中华人民共和国个人信息保护法", True),
    ("请给出个人信息保护法", True),  # leading words of the sentence are tolerated
    ("刑法", False),
    ("民法典", False),
    ("网络安全法", False),
    ("数据安全法", False),
])
def test_law_matches_pipl(named, expected):
    assert law_matches(named, PIPL) is expected


def test_law_matches_other_law():
    assert law_matches("民法典", "中华人民共和国民法典")
    assert not law_matches("个保法", "中华人民共和国民法典")


# ---------------------------------------------------------------------------------------------- pure lookups
@pytest.mark.parametrize("query,expected", [
    ("第28条是什么内容？", True),
    ("第二十八条", True),
    ("个保法第24条", True),
    ("请问个人信息保护法第二十八条的原文", True),
    ("第28条讲了什么", True),
    ("个保法第二十一条是关于什么的", True),
    ("PIPL第二十一条是关于什么的", True), ("pipl 第47条讲的啥", True),  # ans-pipl-070: its English abbreviation
    ("APIPL第5条讲的啥", False),  # Latin letters that are no law's alias are words of the question
    ("个保法第十三条第一款第二项说的是什么", True),  # a paragraph and an item are part of the reference
    ("第13条第1款第2项", True),
    ("第十条和第十三条分别说了什么？", True),
    ("第十条及相关处罚", False),
    ("第21条关于同意的规定", False),
    ("第28条和未成年人有什么关系", False),
    ("第二十八条 敏感个人信息", False),
    ("公司把我的手机号卖给别人合法吗？", False),
    ("请问是什么？", False),  # no reference at all is no lookup
    ("What does article 47 say?", True), ("Show me Article 13 and article 14", True),
    ("What does PIPL article 13 say?", True), ("What does article 13 of the PIPL say?", True),
    ("Can an app read my contacts under article 13?", False),
])
def test_is_pure_lookup(query, expected):
    assert is_pure_lookup(query) is expected


@pytest.mark.parametrize("query, articles", [
    ("What does article 47 say?", [47]), ("art. 5", [5]), ("Show me Article 13 and article 14", [13, 14]),
    # an English question about a case is not read as citing an article: the label rules read Chinese only, and the
    # pinned article answered 「可以」 from an item the question is not about
    ("Can an app read my contacts under article 13?", []),
])
def test_an_english_question_that_only_asks_for_articles_is_a_lookup(query, articles):
    analysis = analyze_query(query)
    assert analysis.articles == articles and analysis.type == ("exact" if articles else "semantic")


@pytest.mark.parametrize("text, spelled", [
    ("第47、48条是什么", "第47条、第48条是什么"), ("个保法第47、48、49条", "个保法第47条、第48条、第49条"),
    ("第47至49条", "第47条、第48条、第49条"), ("第四十七条到第四十九条讲了什么", "第四十七条、第四十八条、第四十九条讲了什么"),
    ("第1至74条", "第1条、第74条"),  # a long range is read as its two ends
    ("第４７条", "第47条"), ("第四十七條是什麼", "第四十七条是什么"),
    # unchanged: a reference already written out, an item list, words that only look like a list or a range
    ("第47条、第48条", "第47条、第48条"), ("第十三条第三、四项", "第十三条第三、四项"), ("第十条至今没变", "第十条至今没变"),
    ("他第一次和第二次都没给", "他第一次和第二次都没给"),
])
def test_lists_and_ranges_of_articles_are_written_out_one_by_one(text, spelled):
    assert spell_out_refs(text) == spelled
