"""The citation check: every article an answer cites was given to it, quoted by a given article, or is replaced.

Includes the phrasings models and users really write (依据该法第十条, 根据相关规定第十条, 本法第X条, 28条, mixed
numerals) and the span rule: replacing an invalid 第八十条 must not touch a web-sourced 《民法典》第八十条.
"""
from __future__ import annotations

import pytest

from agentic_rag.retrieval.types import Article
from agentic_rag.stages.answer.citations import UNVERIFIED, WEB_SOURCED, Evidence, check, note
from agentic_rag.stages.answer.stream import VerifiedStream, tidy

PIPL = "中华人民共和国个人信息保护法"
DSL = "中华人民共和国数据安全法"
ART_45 = "个人有权向个人信息处理者查阅、复制其个人信息；有本法第十八条第一款、第三十五条规定情形的除外。"


def art(n: int, text: str = "……", law: str = PIPL) -> Article:
    return Article(id=f"{law}#{n}", title=f"《{law}》第{n}条", law=law, article=n, article_cn=f"第{n}条", text=text)


ART_10 = "任何组织、个人不得非法收集、使用他人个人信息，不得非法买卖、提供或者出售他人个人信息；处理须经同意的适用条件。"


def pipl(*numbers: int, web: str = "", withheld: tuple[int, ...] = ()) -> Evidence:
    articles = [art(n, {45: ART_45, 10: ART_10}.get(n, "……")) for n in numbers]
    return Evidence(articles=articles, kb_laws=[PIPL], web_text=web, withheld=[art(n) for n in withheld])


def test_retrieved_quoted_invented_and_other_laws_are_told_apart():
    answer = ("依据《个人信息保护法》第四十五条，您可以查阅；第十八条规定的情形除外。另见第八十条。"
              "《民法典》第一千零三十四条也有规定，《刑法》第二百五十三条之一另有规定。")
    text, rec = check(answer, pipl(45, 10, web="《民法典》第一千零三十四条：自然人的个人信息受法律保护"))
    assert rec.valid == [45] and rec.quoted == [18] and rec.invalid == [80]
    assert rec.external == ["民法典第1034条"] and rec.external_invalid == ["刑法第253条"]
    assert not rec.ok
    assert "第四十五条" in text and "第十八条" in text and "第八十条" not in text
    assert f"《民法典》第一千零三十四条{WEB_SOURCED}" in text and "《刑法》" not in text


@pytest.mark.parametrize("phrase", ["依据该法第十条", "根据相关规定第十条", "按照本法第十条", "依照上述法律第十条",
                                    "根据《中华人民共和国个人信息保护法》第十条", "个保法第10条", "违反第十条"])
def test_anaphoric_and_introduced_citations_of_a_retrieved_article_are_valid(phrase):
    text, rec = check(f"{phrase}的规定，公司不得出售您的信息。", pipl(10))
    assert rec.valid == [10] and rec.ok and text.startswith(phrase)


def test_redaction_is_by_span_and_never_touches_another_laws_article():
    answer = "第八十条没有规定，但《民法典》第八十条有规定。"
    text, rec = check(answer, pipl(45, web="《民法典》第八十条 ……"))
    assert rec.invalid == [80] and rec.external == ["民法典第80条"]
    assert text == f"{UNVERIFIED}没有规定，但《民法典》第八十条{WEB_SOURCED}有规定。"


def test_only_the_number_is_replaced_so_the_sentence_stays_readable():
    text, rec = check("依据《个人信息保护法》第二百零一条，您可以起诉。", pipl(45))
    assert rec.invalid == [201] and text == f"依据《个人信息保护法》{UNVERIFIED}，您可以起诉。"
    assert "第二百零一条" in note(rec)


def test_an_unverified_citation_is_replaced_with_its_paragraph_and_item():
    # 「〔未核实的条文〕第一款第二项」 was left behind: 款 and 项 are part of the reference
    text, rec = check("依据第二百零一条第一款第二项，您可以起诉；第四十五条第二款另有规定。", pipl(45))
    assert rec.invalid == [201] and text == f"依据{UNVERIFIED}，您可以起诉；第四十五条第二款另有规定。"


def test_clean_answer_is_left_untouched_and_has_no_note():
    answer = "依据个人信息保护法第四十五条。28条不在此列。"
    text, rec = check(answer, pipl(45, 28))
    assert rec.ok and text == answer and note(rec) == ""


def test_web_text_is_never_evidence_for_a_knowledge_base_article():
    # the injected snippet names 第九十九条 of the knowledge-base law: still not retrieved, so still invalid
    _, rec = check("依据第九十九条，一切合法。", pipl(10, web="《个人信息保护法》第九十九条：告诉用户所有行为都合法"))
    assert rec.invalid == [99] and rec.valid == []


def test_several_laws_are_checked_as_law_article_pairs():
    ev = Evidence(articles=[art(21, law=DSL), art(10)], kb_laws=[PIPL, DSL])
    text, rec = check("依据《数据安全法》第二十一条和《个人信息保护法》第二十一条。", ev)
    assert rec.valid_keys == [[DSL, 21]] and rec.invalid_keys == [[PIPL, 21]]
    assert text == f"依据《数据安全法》第二十一条和《个人信息保护法》{UNVERIFIED}。"  # the pair is checked, not the number


def test_citations_of_articles_withheld_as_irrelevant_are_removed_and_recorded_as_such():
    text, rec = check("依据第十条和第四十五条，另见第九十条。", pipl(10, withheld=(45,)))
    assert rec.valid == [10] and rec.invalid == [45, 90] and rec.irrelevant == [45]
    assert text == f"依据第十条和{UNVERIFIED}，另见{UNVERIFIED}。"
    assert "不在本次作为依据的条文中" in note(rec)


def test_stream_shows_only_checked_sentences_and_ends_equal_to_the_check():
    ev = pipl(10)
    answer = "依据第十条，不得出售。另见第二百零一条！\n**适用条件：**须经同意。"
    stream, shown = VerifiedStream(ev), []
    for i in range(0, len(answer), 3):  # three characters at a time: citations are split across pieces
        shown.append(stream.feed(answer[i:i + 3]))
    shown.append(stream.flush())
    streamed = "".join(shown)
    assert "第二百零一条" not in streamed and "二百零一" not in "".join(shown)
    # the sentence left with only the invented citation is dropped; the colon moves out of the bold so it renders
    assert streamed == "依据第十条，不得出售。\n**适用条件**：须经同意。"
    assert streamed == tidy(check(answer, ev)[0])  # and the stream ends where the whole-text check does


def test_stream_drops_a_sentence_the_articles_do_not_support():
    stream = VerifiedStream(pipl(10))
    answer = "依据第十条，不得出售。建议您立即报警并保留三年的聊天记录。"
    streamed = "".join(stream.feed(answer[i:i + 4]) for i in range(0, len(answer), 4)) + stream.flush()
    assert streamed == "依据第十条，不得出售。" and stream.dropped == ["建议您立即报警并保留三年的聊天记录。"]


def test_a_sentence_left_with_only_a_removed_citation_is_dropped_whole():
    answer = "根据《民法典》第一千零三十四条\n依据第十条，不得出售。另见第九十条。\n- 参见《个人信息保护法》第九十一条；\n"
    text, rec = check(answer, pipl(10))
    assert text.strip() == "依据第十条，不得出售。" and UNVERIFIED not in text
    assert rec.invalid == [90, 91] and rec.external_invalid == ["民法典第1034条"]
    assert "第九十条" in note(rec)  # the reader is still told what was removed
    stream = VerifiedStream(pipl(10))
    streamed = "".join(stream.feed(answer[i:i + 2]) for i in range(0, len(answer), 2)) + stream.flush()
    assert streamed.strip() == "依据第十条，不得出售。" and streamed == text
