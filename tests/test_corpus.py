"""Corpus parsing: the real chinese_law.txt, malformed law-text lines, and the LawRefBook JSONL(.gz) format."""
from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.knowledge.corpus import (
    CorpusError,
    Document,
    apply_structure,
    corpus_sha256,
    file_sha256,
    load_corpus,
    parse_law_lines,
    parse_lawrefbook,
)

CORPUS = PROJECT_ROOT / "chinese_law.txt"
STRUCTURE = PROJECT_ROOT / "agentic_rag" / "resources" / "pipl_structure.jsonl"
CORPUS_SHA256 = "ddcac26ab9631d4cf6cbc82097e82792530181435b5671314ecef2106cbd6414"
PIPL = "中华人民共和国个人信息保护法"


# ---------------------------------------------------------------------------------------------- the real corpus
def test_corpus_file_is_the_pinned_version():
    assert file_sha256(CORPUS) == CORPUS_SHA256


def test_real_corpus_parses_to_74_numbered_articles_with_structure():
    docs = load_corpus(CORPUS, structure=STRUCTURE)
    assert len(docs) == 74
    assert [d.article for d in docs] == list(range(1, 75))
    assert {d.law for d in docs} == {PIPL}
    assert len({d.id for d in docs}) == 74
    assert all(d.text and d.chapter for d in docs)

    a28 = docs[27]
    assert a28.article_cn == "第二十八条"
    assert a28.id == f"{PIPL}#第二十八条"
    assert a28.chapter.startswith("第二章")
    assert a28.section is not None and a28.section.startswith("第二节")
    assert "不满十四周岁未成年人" in a28.text
    assert not a28.text.startswith("规定")  # the 规定， header is not part of the text
    assert a28.title == f"《{PIPL}》第二十八条"
    assert a28.index_text.startswith(a28.title)
    assert "二十八" not in a28.keyword_text  # the article number stays out of the keyword channels

    assert docs[0].chapter.startswith("第一章") and docs[0].section is None  # chapter 1 has no sections
    assert docs[73].chapter.startswith("第八章")


def test_without_structure_file_chapters_are_empty():
    docs = load_corpus(CORPUS)
    assert len(docs) == 74 and all(d.chapter is None and d.section is None for d in docs)


def test_corpus_sha256_depends_on_ids_and_texts():
    docs = load_corpus(CORPUS)
    h = corpus_sha256(docs)
    assert h == corpus_sha256([Document.from_dict(d.to_dict()) for d in docs])
    changed = [Document.from_dict(d.to_dict()) for d in docs]
    changed[5].text += "。"
    assert corpus_sha256(changed) != h
    assert corpus_sha256(docs[:-1]) != h


# ---------------------------------------------------------------------------------------------- malformed lines
GOOD_1 = "《个人信息保护法》第一条规定，为了保护个人信息权益，制定本法。"
GOOD_4 = "《个人信息保护法》第四条规定，个人信息是与已识别的自然人有关的各种信息。"
MALFORMED = [
    GOOD_1,  # 1
    "",  # 2: blank lines are separators, not problems
    "个人信息保护法第二条规定，没有书名号的标题。",  # 3: no 《》 header
    "《个人信息保护法》第二三条规定，编号不是合法的中文数字。",  # 4: bad numeral
    "《个人信息保护法》第三条规定，",  # 5: empty text
    "《个人信息保护法》第一条规定，重复的第一条。",  # 6: duplicate of line 1
    GOOD_4,  # 7
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_parse_reports_each_malformed_line_with_its_number():
    result = parse_law_lines(MALFORMED)
    assert [d.article for d in result.documents] == [1, 4]
    assert result.documents[0].text == "为了保护个人信息权益，制定本法。"
    problems = {p.line_no: p.reason for p in result.problems}
    assert sorted(problems) == [3, 4, 5, 6]
    assert "《法律名》" in problems[3]
    assert "bad article number" in problems[4] and "二三" in problems[4]
    assert "no text" in problems[5]
    assert "duplicate of line 1" in problems[6]


def test_malformed_corpus_raises_corpus_error_listing_line_numbers(tmp_path):
    path = _write(tmp_path / "law.txt", MALFORMED)
    with pytest.raises(CorpusError) as exc:
        load_corpus(path)
    assert [p.line_no for p in exc.value.problems] == [3, 4, 5, 6]
    message = str(exc.value)
    for n in (3, 4, 5, 6):
        assert f"line {n}:" in message
    assert "line 7" not in message and "line 1:" not in message
    assert "--allow-malformed" in message


def test_allow_malformed_keeps_the_good_lines_and_logs_each_skipped(tmp_path, caplog):
    path = _write(tmp_path / "law.txt", MALFORMED)
    with caplog.at_level(logging.WARNING, logger="agentic_rag.knowledge.corpus"):
        docs = load_corpus(path, allow_malformed=True)
    assert [(d.article, d.article_cn) for d in docs] == [(1, "第一条"), (4, "第四条")]
    assert all(d.source == "law.txt" for d in docs)
    skipped = [r.getMessage() for r in caplog.records if "skipped malformed" in r.getMessage()]
    assert len(skipped) == 4
    assert any("line 6" in m for m in skipped)


def test_clean_file_with_bom_and_ascii_numbers_and_zhi_articles():
    lines = ["\ufeff" + GOOD_1, "《个人信息保护法》第12条：阿拉伯数字编号。", "《刑法》第二百五十三条之一规定，侵犯公民个人信息罪。"]
    result = parse_law_lines(lines)
    assert result.problems == []
    assert [(d.law, d.article, d.article_cn) for d in result.documents] == [
        ("个人信息保护法", 1, "第一条"), ("个人信息保护法", 12, "第12条"), ("刑法", 253, "第二百五十三条之一")]


def test_bad_structure_row_is_a_corpus_error(tmp_path):
    docs = parse_law_lines([GOOD_1, GOOD_4]).documents
    structure = tmp_path / "structure.jsonl"
    structure.write_text('{"article": 1, "chapter": "第一章", "section": null}\n{"chapter": "no article"}\n',
                         encoding="utf-8")
    with pytest.raises(CorpusError) as exc:
        apply_structure(docs, structure)
    assert exc.value.problems[0].line_no == 2


def test_structure_attaches_by_article_number_and_warns_on_missing(tmp_path, caplog):
    docs = parse_law_lines([GOOD_1, GOOD_4]).documents
    structure = tmp_path / "structure.jsonl"
    structure.write_text('{"article": 4, "chapter": "第一章 总则", "section": "第一节"}\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="agentic_rag.knowledge.corpus"):
        apply_structure(docs, structure)
    assert (docs[0].chapter, docs[1].chapter, docs[1].section) == (None, "第一章 总则", "第一节")
    assert any("第一条" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------------------------- LawRefBook
LRB_ROWS = [
    {"law": "中华人民共和国民法典", "category": "民法典", "path": "民法典/民法典.md", "article": "第一千零三十四条",
     "seq": 1, "text": "自然人的个人信息受法律保护。"},
    {"law": "中华人民共和国民法典", "category": "民法典", "path": "民法典/民法典.md", "article": "第一千零三十五条",
     "seq": 2, "text": "处理个人信息的，应当遵循合法、正当、必要原则。"},
    {"law": "某省数据条例", "category": "DLC/地方性法规", "path": "DLC/某省/数据条例.md", "article": "第三条",
     "seq": 1, "text": "本省行政区域内的数据处理活动适用本条例。"},
    {"law": "中华人民共和国刑法", "category": "刑法", "path": "刑法/刑法.md", "article": "第二百五十三条之一",
     "seq": 1, "text": "违反国家有关规定，向他人出售或者提供公民个人信息，情节严重的，处三年以下有期徒刑。"},
]


def _write_lrb(path: Path, rows: list, bad_line: str | None = None, bad_at: int | None = None) -> Path:
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    if bad_line is not None:
        lines.insert(bad_at, bad_line)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def test_lawrefbook_gz_parses_all_rows(tmp_path):
    path = _write_lrb(tmp_path / "laws.jsonl.gz", LRB_ROWS)
    docs = load_corpus(path)
    assert [d.id for d in docs] == [f"{r['path']}#{r['article']}" for r in LRB_ROWS]
    assert [d.article for d in docs] == [1034, 1035, 3, 253]
    assert docs[2].extra == {"category": "DLC/地方性法规"}
    assert docs[0].source == "民法典/民法典.md" and docs[0].law == "中华人民共和国民法典"


def test_lawrefbook_keys_filter_and_national_only(tmp_path):
    path = _write_lrb(tmp_path / "laws.jsonl.gz", LRB_ROWS)
    keys = tmp_path / "keys.jsonl"
    keys.write_text("\n".join(json.dumps({"path": r["path"], "article": r["article"]}, ensure_ascii=False)
                              for r in (LRB_ROWS[1], LRB_ROWS[2])) + "\n\n", encoding="utf-8")
    assert [d.article for d in load_corpus(path, keys_file=keys)] == [1035, 3]
    assert [d.article for d in load_corpus(path, keys_file=keys, national_only=True)] == [1035]
    assert [d.article for d in load_corpus(path, national_only=True)] == [1034, 1035, 253]


def test_lawrefbook_bad_json_line_is_reported_with_its_number(tmp_path):
    path = _write_lrb(tmp_path / "laws.jsonl.gz", LRB_ROWS, bad_line='{"law": "x", "path": ', bad_at=2)
    result = parse_lawrefbook(path)
    assert [p.line_no for p in result.problems] == [3]
    assert "bad JSON" in result.problems[0].reason
    assert len(result.documents) == 4
    with pytest.raises(CorpusError) as exc:
        load_corpus(path)
    assert "line 3:" in str(exc.value)
    assert len(load_corpus(path, allow_malformed=True)) == 4


def test_lawrefbook_missing_key_and_empty_text_are_problems(tmp_path):
    rows = [LRB_ROWS[0], {"law": "x", "path": "p", "article": "第一条"},  # no "text" key
            {**LRB_ROWS[1], "text": "   "}]
    path = tmp_path / "laws.jsonl"  # plain .jsonl works too
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    result = parse_lawrefbook(path)
    assert [d.article for d in result.documents] == [1034]
    assert [(p.line_no, "no text" in p.reason) for p in result.problems] == [(2, False), (3, True)]


def test_the_default_pipl_structure_gives_another_corpus_no_chapters(caplog):
    # CORPUS_PATH pointed at one's own statutes keeps the default CORPUS_STRUCTURE (the PIPL's): its chapters must
    # not be stamped onto other articles by number.
    other = parse_law_lines(["《劳动合同法》第一条规定，为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，制定本法。"]).documents
    assert other and other[0].article == 1
    with caplog.at_level(logging.WARNING, logger="agentic_rag.knowledge.corpus"):
        apply_structure(other, STRUCTURE)
    assert other[0].chapter is None and any("describes none" in r.getMessage() for r in caplog.records)
