"""The citation check: every article an answer cites was retrieved, quoted by a retrieved article, or is flagged."""
from __future__ import annotations

from agentic_rag.citations import check_citations, redact_invalid

PIPL = "中华人民共和国个人信息保护法"
ART_45 = "个人有权向个人信息处理者查阅、复制其个人信息；有本法第十八条第一款、第三十五条规定情形的除外。"


def test_retrieved_quoted_invented_and_other_laws_are_told_apart():
    answer = ("依据《个人信息保护法》第四十五条，您可以查阅；第十八条规定的情形除外。另见第八十条。"
              "《民法典》第一千零三十四条也有规定，《刑法》第二百五十三条之一另有规定。")
    check = check_citations(answer, PIPL, [45, 10], [ART_45, "…"], web_text="《民法典》第一千零三十四条：自然人的个人信息受法律保护")
    assert check.valid == [45] and check.quoted == [18] and check.invalid == [80]
    assert check.external == ["民法典第1034条"] and check.external_invalid == ["刑法第253条"]
    assert not check.ok


def test_redaction_replaces_only_the_unverified_citations_and_says_so():
    answer = "依据第四十五条和第80条，参见《刑法》第二百五十三条。"
    check = check_citations(answer, PIPL, [45], [ART_45])
    text = redact_invalid(answer, check)
    assert "第四十五条" in text and "第80条" not in text and "《刑法》第二百五十三条" not in text
    assert text.count("〔未核实的条文〕") == 2 and "核对说明" in text and "第八十条" in text


def test_clean_answer_is_left_untouched():
    answer = "依据个人信息保护法第四十五条。"
    check = check_citations(answer, PIPL, [45], [ART_45])
    assert check.ok and redact_invalid(answer, check) == answer


def test_collection_of_several_laws_checks_article_numbers_only():
    # kb_law None: 《数据安全法》第二十一条 may be in the collection, so a named law is checked by its number.
    check = check_citations("依据《数据安全法》第二十一条和《民法典》第九百九十条。", None, [21], [])
    assert check.valid == [21] and check.invalid == [990] and check.external == []
