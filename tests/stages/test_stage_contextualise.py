"""The contextualise stage's cheap signals and its check of the model's line, without a model.

Expected readings are the turn kinds of eval/conversation_eval.jsonl (written by hand, README) and hand-picked
examples; the dev-half rates are a regression guard for the numbers the README reports.
"""
from __future__ import annotations

import json

import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.stages.clarify import aspect, options_from, targeted_question
from agentic_rag.stages.contextualise import signals
from agentic_rag.stages.contextualise.check import check, first_line, new_nouns, numbers
from agentic_rag.state import Article

FOLLOW_UP_KINDS = {"pronoun", "ellipsis", "penalty", "more", "law_change"}


@pytest.mark.parametrize("message", [
    "那我能让它删掉吗？", "要是他们不照做呢？", "还有别的要求吗？", "违反了会被罚多少钱？", "那体检报告呢？",
    "他们事先也没问过我们，这个我能拒绝吗？", "这些摄像头得挂个提示牌吧？", "精神损失能要吗？", "按消费者权益保护法，我能去哪投诉？",
    "我要是下周就不去上班了，会怎么样", "还有，他们要是不删呢？",  # the subject before 要是; 还有， only announces
])
def test_follow_ups_need_the_history(message):
    assert signals.reading(message).follow_up


@pytest.mark.parametrize("message", [
    "公司把我的手机号卖给别人，这合法吗？",  # the 这 judges the act the message itself described
    "我的网名、游戏账号这些也算受保护的个人信息吗？",  # 这些 sums up the nouns before it
    "第五十七条是什么内容？", "敏感个人信息 单独同意", "什么是个人信息？", "你好",
    "医院把我的体检报告给了保险公司，保险公司因此拒保，我可以要求赔偿吗？",
    "还有个事，物业把业主的电话号码贴在电梯里公示欠费，这合法吗？",  # 还有个事， announces a whole new question
])
def test_self_contained_questions_do_not(message):
    assert not signals.reading(message).follow_up


def test_a_topic_switch_marker_is_dropped():
    assert signals.topic_switch("换个问题，我们公司想上一套考勤系统，要走什么流程？") == "我们公司想上一套考勤系统，要走什么流程？"
    assert signals.topic_switch("另外问下，我手机号换了，银行能改吗？") == "我手机号换了，银行能改吗？"
    assert signals.topic_switch("那另外一家公司呢？") is None
    assert not signals.reading("另外，我在公司年会上被同事拍了丑照发朋友圈，这也要管吗？").follow_up


@pytest.mark.parametrize("message, is_vague", [
    ("我被侵权了怎么办？", True), ("这样合法吗？", True), ("公司这么做对吗？", True), ("他们凭什么这么干？", True),
    ("我的信息被泄露了，怎么办啊", True),
    ("病历算敏感信息吗？", False), ("App可以随便读我手机通讯录吗？", False), ("个人信息最多能存多久？", False),
    ("试用期能随便辞退吗？", False), ("第十条这样规定合法吗？", False), ("按个人信息保护法这样合法吗？", False),
    ("公司把我的手机号卖给别人，这合法吗？", False), ("你好", False),
])
def test_vague_first_messages(message, is_vague):
    assert (signals.vague(message) is not None) == is_vague


@pytest.mark.parametrize("message, reply", [
    ("就是我住的酒店，前台把我的房间号告诉了一个陌生人", True), ("是个装修公司，它把我的电话挂到了网上", True),
    ("体检中心把我的体检报告直接给了保险公司", True),  # facts, not a question: a reply
    ("2", True), ("App收集我的人脸信息要单独同意吗？", False), ("换个问题，第十条是什么？", False),
])
def test_replies_to_a_clarifying_question(message, reply):
    assert signals.is_reply(message) == reply


@pytest.mark.parametrize("message, expected", [
    ("除了删掉，我还能要求它干点啥？", ("删掉", "我还能要求它干点啥？")),
    ("店家除了赔钱，还会被怎么处罚？", ("赔钱", "店家还会被怎么处罚？")),  # what stood before 除了 stays
    ("那除了通知以外，平台还应该做些什么？", ("通知", "那平台还应该做些什么？")),
    ("除了罚款，还有吗？", None),  # nothing would be left to retrieve for
    ("能要求删除数据，还能干啥？", None),  # 删除 is not 除了
    ("除此之外，还有什么？", None),
])
def test_what_a_follow_up_asks_beyond(message, expected):
    assert signals.beyond(message) == expected


def test_a_numbered_reply_picks_its_option():
    options = ["甲", "乙", "丙"]
    assert [signals.chosen_option(m, options) for m in ("2", "第3个", "选1", "4", "2号楼")] == ["乙", "丙", "甲", None, None]


def rows():
    with open(PROJECT_ROOT / "eval" / "conversation_eval.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_signals_on_the_dev_half_of_the_conversation_eval_set():
    """Follow-up detection (turns after the first, clarify replies aside; first turns count as self-contained
    messages too) and vague-opener detection, on dev only."""
    tp = fp = fn = 0
    vague_hits = vague_false = vague_total = 0
    for row in (r for r in rows() if r["split"] == "dev"):
        for turn in row["turns"]:
            kind, user = turn["kind"], turn["user"]
            if kind in ("vague_first", "first"):
                flagged = signals.vague(user) is not None
                vague_total += kind == "vague_first"
                vague_hits += flagged and kind == "vague_first"
                vague_false += flagged and kind == "first"
            if kind == "clarify_reply" or kind == "vague_first":
                continue
            predicted, gold = signals.reading(user).follow_up, kind in FOLLOW_UP_KINDS
            tp, fp, fn = tp + (predicted and gold), fp + (predicted and not gold), fn + (gold and not predicted)
    assert tp / (tp + fp) >= 0.95 and tp / (tp + fn) >= 0.95
    assert vague_hits == vague_total and vague_false == 0


# ----------------------------------------------------------------------------- the check
HISTORY = ["健身房没经我同意把我的手机号给了培训机构，这样可以吗？"]
TITLES = ["个人信息保护法第二十三条"]


def test_numbers_and_new_nouns():
    assert numbers("那要是总共才99块呢？") == ["99"] and numbers("衣服是一千二买的，保存三年") == ["一千二", "三"]
    assert numbers("一个人问一下") == []
    assert new_nouns("那我能让他们把我的资料删掉吗？", "\n".join(HISTORY)) == ["资料"]
    assert new_nouns("那健身房会被罚吗？", "\n".join(HISTORY)) == []


@pytest.mark.parametrize("raw, problem", [
    ("改写：健身房未经同意把我的手机号给了培训机构，我能要求健身房删掉我的资料吗？", ""),
    ("「健身房把我的手机号给了培训机构，我能要求它删除我的资料吗？」\n解释：……", ""),
    ("", "输出为空"), ("我能要求删掉吗？", "丢失了追问中的词：资料"), ("可以删除资料。", "输出不是一个问题"),
    (HISTORY[0], "输出与上一问题相同"), ("资料" * 61 + "吗？", "输出过长"),
    ("依据第四十七条，我能要求健身房删掉资料吗？", "加入了追问和上文都没有的条文"),
    # the prompt's first example, copied instead of rewriting this conversation (seen with both shipped models)
    ("快递公司把我的收件地址给了广告公司，我能要求快递公司删掉我的资料吗？", "抄了示例里的词"),
])
def test_the_check_of_the_models_line(raw, problem):
    checked = check(raw, "那我能让他们把我的资料删掉吗？", HISTORY, TITLES)
    assert checked.problem.startswith(problem) if problem else checked.question is not None
    assert (checked.question is None) == bool(problem)


def test_a_named_law_and_numbers_must_survive():
    assert check("公司要赔多少？", "按劳动合同法，那要是加班超过36小时呢？", HISTORY, []).problem.startswith("丢失了追问中的数字")
    line = "公司让员工加班超过36小时要赔多少？"
    assert check(line, "按劳动合同法，那要是加班超过36小时呢？", HISTORY, []).problem == "丢失了追问中的法律名称"
    assert check("按劳动合同法，" + line, "按劳动合同法，那要是加班超过36小时呢？", HISTORY, []).question


def test_a_word_of_the_examples_is_fine_when_the_conversation_has_it():
    history = ["小区物业把业主的人脸信息给了广告公司，合法吗？"]
    assert check("小区物业把人脸信息给了广告公司，我能让物业删掉我的资料吗？", "那我能让他们把我的资料删掉吗？",
                 history, []).question


def test_first_line_strips_labels_and_quotes():
    assert first_line("\n\n改写后的问题：“甲能否乙？”\n多余") == "甲能否乙？"


# ----------------------------------------------------------------------------- the clarifying question's parts
def article(n: int, chapter: str | None, section: str | None = None, law: str = "中华人民共和国个人信息保护法") -> Article:
    return Article(id=f"{law}#{n}", title=f"第{n}条", law=law, article=n, article_cn=f"第{n}条", text="…",
                   chapter=chapter, section=section)


def test_options_come_from_the_knowledge_base():
    arts = [article(1, "第一章 总 则"), article(28, "第二章 个人信息处理规则", "第二节 敏感个人信息的处理规则"),
            article(13, "第二章 个人信息处理规则", "第一节 一般规定"), article(47, "第四章 个人在个人信息处理活动中的权利"),
            article(29, "第二章 个人信息处理规则", "第二节 敏感个人信息的处理规则")]
    assert aspect(arts[1]) == "敏感个人信息的处理规则" and aspect(arts[2]) == "个人信息处理规则"
    assert options_from(arts, ["中华人民共和国个人信息保护法"]) == [
        "敏感个人信息的处理规则", "个人信息处理规则", "个人在个人信息处理活动中的权利"]
    assert options_from(arts[:2], ["中华人民共和国个人信息保护法"]) == []  # one aspect is no choice
    assert options_from([article(1, None)], ["中华人民共和国个人信息保护法"]) == []  # no structure: no options
    laws = ["中华人民共和国劳动合同法", "中华人民共和国民法典", "中华人民共和国消费者权益保护法"]
    assert options_from([article(3, None, law=laws[2])], laws) == ["《消费者权益保护法》", "《劳动合同法》", "《民法典》"]


def test_the_question_asked_back_fits_the_form():
    assert "发生了什么" in targeted_question("我被侵权了怎么办？")
    assert "哪种做法" in targeted_question("这样合法吗？")
