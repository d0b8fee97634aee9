"""Cheap signals about a message, computed before any model call: does it need the conversation to be understood
(a follow-up), does it start a new topic, is it too vague to retrieve for, does it answer a clarifying question?

Follow-up (the history is needed): a marker that points back — a pronoun or demonstrative in the opening clause
(它 / 他们 / 这个 / 这样 …, anywhere in a short message), an opening connective (那 / 要是 / 如果 / 还 / 除了 …),
an ellipsis ending in 呢, a penalty or "anything else" phrase without its subject (会被罚 / 罚多少 / 违反了 / 还有别的),
or a message too short to stand alone once law names and particles are removed. Self-contained: none of these, or
an explicit topic switch (换个问题 / 另外问下 …), which also drops the marker from the question.
A follow-up 「除了X，还…」 asks for what lies beyond X (`beyond`): retrieval searches without X's words.

Vague (a first message only): a generic form (怎么办 / 合法吗 / 对吗 / 凭什么 / 帮我看看 …) with no content noun
(a thing, data, party or act the knowledge base could be searched for: 公司 / 信息 / 情况 are not enough), no
article number and no named law. Short clear openers such as 病历算敏感信息吗 name their subject and are answered.

The rules were written from the turn kinds of eval/conversation_eval.jsonl's README and checked on its dev half;
`eval/conversation` reports their precision and recall on either half.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...legal.laws import LAW_NAME, national_title
from ...legal.refs import NUMBER, find_article_refs
from ...retrieval.analysis import analyze_query, is_pure_lookup
from ...retrieval.tokenizer import default_legal_terms
from ..router.signals import is_chitchat

# ----------------------------------------------------------------------------- lexicons
_SWITCH = re.compile(r"^\s*(?:换个问题|换一个问题|换个话题|换个事|换件事|另外问(?:下|一下|个事|个问题|一个问题)?|另外[，,：:]|"
                     r"再问(?:个|一个|一下)(?:问题|事)?|顺便问(?:一?下|个事)?|还有个问题|还有一个问题|新问题|问个别的)"
                     r"[，,：:。\s]*")
# Opening connectives that continue what was said before (对 / 嗯 are replies, not questions of their own).
_OPENING = re.compile(r"^\s*(?:(?:我们?|那我们?)(?=要是|如果|假如|万一))?(?:那么|那要是|那如果|那|要是|如果|假如|万一|还(?!款|钱|贷)|除了|除此之外|此外|然后|可是|但是|而且|并且|另外还|同样|"
                      r"所以|这样的话|那样的话)")
# Pronouns and demonstratives that stand for something said before (他人 / 其他 are not: they name no referent).
_POINTER = re.compile(r"它们?|(?<!其)他们?(?!人)|她们?|这些|那些|这个|那个|那条|这条|这种|那种|这类|那类|这样|那样|这么|那么|"
                      r"这事|这件事|此事|上述|上面说|刚才|前面说|之前说|该公司|对方|这(?=[^里儿])")
_PHRASES = re.compile(r"会被罚|被罚|罚多少|罚款吗|怎么罚|怎么处罚|违反了|违规了|担什么责任|担责吗|要担责|负责吗|负什么责任|"
                      r"还有别的|还有其他|还有哪些|还有什么|别的要求|其他要求|还要注意|还应该|还得|能拿多少|赔多少|能要吗|能告吗")
_ELLIPSIS_END = re.compile(r"呢\s*[？?]?\s*$")
_PUNCT = re.compile(r"[\s，,。．.！!？?；;：:、“”\"'‘’（）()《》【】\[\]…—-]+")
_FILLER = re.compile(r"[吗呢吧啊呀哦嘛了的]")
VAGUE_MAX_CHARS = 40  # a longer first message tells a story: retrieval, not a question back
SHORT_CHARS = 12  # content characters below which a message cannot stand alone (那体检报告呢 → 4)
SHORT_POINTER_CHARS = 20  # a pointer anywhere in a message this short refers back
_SUMMING = frozenset({"这些", "那些", "这种", "那种", "这类", "那类"})
_JUDGED = re.compile(r"样?(?:做|操作|规定|定价|收费|处理)?(?:也|都|还)?(?:合法|违法|合理|正常|对|可以|行|算数|有效|侵权|违规|合规|算)")
# 「除了X，还…」 asks for what lies beyond X: X was asked or answered already. Its words pull retrieval back to X
# (「除了删掉，我还能要求它干点啥？」 retrieved the deletion article first), so retrieval searches without them.
_BEYOND = re.compile(r"^(\s*(?:那)?[^，,。？?]{0,8}?)除了([^，,。；;？?]{1,20}?)(?:以外|之外)?[，,]\s*")
_DEFINITION = re.compile(r"^\s*(?:什么是|何为|何谓)|是什么意思|的定义|的含义|指的是什么")

# Generic forms of a question that says nothing about its facts.
_GENERIC = re.compile(r"怎么办|咋办|怎么维权|如何维权|该怎么|合法吗|合法不|违法吗|违法不|算违法|对吗|对不对|行吗|可以吗|"
                      r"凭什么|帮我看看|帮我分析|帮忙看看|咨询一下|问个事|这种情况|这样|这么做|这么干|这么搞|坑了|侵权了")
# Nouns that name no searchable fact: who did it (in general), "information", "the situation", the law itself.
GENERIC_NOUNS = frozenset("""信息 个人信息 资料 东西 事 事情 事儿 情况 问题 公司 单位 商家 店家 老板 他们 别人 对方 人家 权益 权利 规定 法律
法规 条款 合法 违法 侵权 维权 咨询 律师 办法 帮助 意思 时候 朋友 家人 我们 大家 一下 点事""".split())
EMPTY_NOUNS = frozenset("事 事情 事儿 情况 问题 东西 时候 意思 办法 一下 点事".split())  # say nothing even when new
NOUN_FLAGS = ("n", "nr", "ns", "nt", "nz", "nrt", "nw", "vn", "eng")
# A reply to a clarifying question usually starts by pointing at its facts (就是… / 是在… / 是个…) or picks an option.
_REPLY_START = re.compile(r"^\s*(?:就是|是这样|是在|是个|是一|是我|是因为|对[，,]|嗯|具体是|情况是|事情是|选|第?\s*\d+\s*(?:个|项|条)?\s*$)")
_QUESTION_END = re.compile(r"(?:吗|么|呢|吧|多少|多久|几[个天年月]?|哪些|哪里|什么|怎么办|怎么样|如何|是否|能否|可否)\s*[？?]?\s*$|[？?]\s*$")


@dataclass(frozen=True)
class Reading:
    """What the signals say about a message (`reason` names the rule that decided)."""

    follow_up: bool
    reason: str


def topic_switch(message: str) -> str | None:
    """The message without its topic-switch marker (换个问题，… / 另外问下，…), or None when it has none."""
    m = _SWITCH.match(message)
    if not m:
        return None
    rest = message[m.end():].strip()
    return rest or None


def law_names(text: str) -> list[str]:
    """The names of national laws in the text, as written (个人信息保护法, 《民法典》, 消法 …)."""
    found = []
    for m in LAW_NAME.finditer(text):
        span = m.group(0)
        if span.startswith("《"):
            if national_title(span):
                found.append(span)
            continue
        # the pattern's span may start with words of the sentence (按个人信息保护法): keep the longest suffix that
        # names a law
        suffix = next((span[i:] for i in range(len(span) - 1) if _exact(span[i:])), None)
        if suffix:
            found.append(suffix)
    return found


def _exact(name: str) -> str | None:
    """The national title a name denotes when the whole name is a title or an alias (not merely ends with one)."""
    from ...legal.aliases import alias_key, aliases
    from ...legal.laws import national_titles, short

    name = alias_key(short(name))
    return national_titles().get(name) or aliases().get(name)


def content_chars(message: str) -> int:
    """Characters left once law names, punctuation and particles are removed: what the message says by itself."""
    text = message
    for name in law_names(message):
        text = text.replace(name, "")
    return len(_FILLER.sub("", _PUNCT.sub("", text)))


def asks_definition(message: str) -> bool:
    return bool(_DEFINITION.search(message))


def first_clause(message: str) -> str:
    return re.split(r"[，,。；;？?！!]", message.strip(), maxsplit=1)[0]


# 「还有，…」「还有个事，…」 only announce another message: what follows decides (还有，他们要是不删呢 is a follow-up;
# 还有，劳务派遣工受了工伤该找谁赔 is not).
_ANOTHER = re.compile(r"^\s*还有(?:个事|一个|一件事|件事)?[，,：:]\s*")


def reading(message: str) -> Reading:
    """Does this message (with an earlier legal turn in the conversation) need that turn to be understood?"""
    if (m := _ANOTHER.match(message)) and message[m.end():].strip():
        return reading(message[m.end():].strip())
    if topic_switch(message) is not None:
        return Reading(False, "换了话题")
    if is_chitchat(message):
        return Reading(False, "问候或闲聊")
    if m := _OPENING.match(message):
        return Reading(True, f"以「{m.group(0).strip()}」承接上文")
    if find_article_refs(message):
        return Reading(False, "按条文编号查询")
    if asks_definition(message) or analyze_query(message, default_legal_terms()).type == "keyword":
        return Reading(False, "术语或关键词查询")
    chars = content_chars(message)
    if chars < SHORT_CHARS:
        return Reading(True, f"问题过短（{chars} 字），不能单独理解")
    if pointer := _back_pointer(message, chars):
        return Reading(True, f"「{pointer}」指代上文")
    m = _PHRASES.search(message)
    if m and not nouns(message[: m.start()]):
        return Reading(True, f"「{m.group(0)}」没有说明对象")
    if _ELLIPSIS_END.search(message) and chars < 2 * SHORT_CHARS:
        return Reading(True, "以「呢」省略了上文")
    return Reading(False, "问题自身完整")


def lookup(message: str) -> str | None:
    """The message as an article lookup without its opening connective (「那第四十五条呢？」 → 「第四十五条呢？」), or None
    when it asks more than articles."""
    rest = _without_opening(message)
    return rest if is_pure_lookup(rest) else None


def _without_opening(message: str) -> str:
    m = _OPENING.match(message)
    return message[m.end():].strip() if m else message.strip()


# 「第二项是什么意思？」, 「那第三款呢」: a part of an article with no article number.
_BARE_PART = re.compile(rf"第[ \t]*(?:{NUMBER})[ \t]*[项款]")


def bare_part(message: str) -> str | None:
    """The message asks only for an item or paragraph (「那第二项呢？」 → 「第二项呢？」), naming no article: the
    article is the one the conversation is on."""
    rest = _without_opening(message)
    if find_article_refs(rest) or not _BARE_PART.match(rest):
        return None
    return rest if is_pure_lookup("第一条" + rest) else None  # what a lookup of it with an article number would be


def asks_on_its_own(message: str) -> bool:
    """Does a follow-up state its own ask? Not 「初三的孩子呢？」 (the ask is the previous question's) nor 「除了让员工
    同意，还得做到哪些？」 (what else applies to the previous case): read without the history they ask nothing whole.
    Read alone, such follow-ups were answered from a gold article once, from another article once and refused 11
    times in the three stored runs with both readings (the other follow-ups: 7, 1, 21), and from another article 4
    times, a gold one once, in stop 39's runs (docs/evaluation.md)."""
    return not _ELLIPSIS_END.search(message) and beyond(message) is None


def _back_pointer(message: str, chars: int) -> str | None:
    """The first pronoun or demonstrative that points outside the message: in its opening clause, or anywhere in a
    short message — except one that sums up the nouns just before it (网名、游戏账号这些) or, in a later clause, judges
    the act the message itself described (…卖给别人，这合法吗)."""
    opening = len(first_clause(message))
    for m in _POINTER.finditer(message):
        before = message[: m.start()]
        if m.group(0) in _SUMMING and any(before.endswith(n) for n in nouns(before)):
            continue
        if m.start() >= opening and _JUDGED.match(message, m.end()) and nouns(message[:opening]):
            continue
        if m.start() < opening or chars < SHORT_POINTER_CHARS:
            return m.group(0)
    return None


@lru_cache(maxsize=1)
def _pos():
    import jieba.posseg

    from ...retrieval.tokenizer import LegalTokenizer

    return jieba.posseg.POSTokenizer(LegalTokenizer()._tokenizer())


def nouns(text: str, generic: frozenset[str] = GENERIC_NOUNS) -> list[str]:
    """The content nouns of a text (jieba POS tags, with the legal dictionary), in order, `generic` ones excluded."""
    out = []
    for token in _pos().cut(text):
        word = token.word.strip()
        if token.flag in NOUN_FLAGS and (len(word) >= 2 or token.flag == "eng") and word not in generic:
            out.append(word)
    return list(dict.fromkeys(out))


def names_law(text: str) -> bool:
    """Does the text name a national law (个人信息保护法, 《民法典》, 消法 …)?"""
    return bool(law_names(text))


def vague(message: str) -> str | None:
    """Why a first message is too vague to retrieve for, or None. Generic form + no content noun + no article
    number + no law named."""
    if len(message) > VAGUE_MAX_CHARS or find_article_refs(message) or names_law(message):
        return None
    form = _GENERIC.search(message)
    if not form or nouns(message):
        return None
    return f"只有「{form.group(0)}」，没有说明涉及的事情"


def beyond(message: str) -> tuple[str, str] | None:
    """(X, the message without 「除了X，」) for a follow-up that asks what lies beyond X, or None; the rest keeps what
    stood before 除了 (店家除了赔钱，还… → 店家还…) and must still say something."""
    m = _BEYOND.search(message)
    if not m:
        return None
    rest = m.group(1) + message[m.end():]
    return (m.group(2).strip(), rest) if content_chars(rest) >= 4 else None


def is_reply(message: str) -> bool:
    """Does the message read as an answer to a clarifying question (facts, or a chosen option) rather than as a new
    self-contained question? A complete question of its own that neither starts like a reply nor points back
    replaces the vague one, which by construction carried no content."""
    if topic_switch(message) is not None:
        return False
    if _REPLY_START.match(message) or reading(message).follow_up:
        return True
    return not _QUESTION_END.search(message)


FACTS_MIN_CHARS = 8  # 「好的，知道了」 tells nothing


def tells_facts(message: str) -> bool:
    """The message tells what happened and asks nothing (「劳动合同里写着…现在说要从我最后一个月工资里直接扣这1万。」): after a
    refusal that asked for the case's details (「请补充具体情况」), they are the refused question's."""
    return len(message.strip()) >= FACTS_MIN_CHARS and not re.search(r"[？?]", message) \
        and not _QUESTION_END.search(message) and topic_switch(message) is None and not is_chitchat(message)


def chosen_option(message: str, options: list[str]) -> str | None:
    """The option a reply picks by its number (「2」「第2个」「选3」), or None."""
    m = re.fullmatch(r"\s*(?:选|第)?\s*(\d+)\s*(?:个|项|条|号)?\s*[。.!！]?\s*", message)
    if not m:
        return None
    n = int(m.group(1))
    return options[n - 1] if 1 <= n <= len(options) else None


def picked_article(message: str, options: list[str], articles: list[tuple[str, int]]) -> int | None:
    """Which of the articles a refusal listed the reply picks: by the article's own number (「第二十三条」) or by
    its place in the list (「1」「选2」), or None. 「第2条」 names an article when article 2 was listed, else nothing:
    it is not taken for the second option."""
    refs = find_article_refs(message) if len(message) <= 16 else []
    numbers = [n for _, n in articles]
    for ref in refs:
        if ref.article in numbers:
            return numbers.index(ref.article)
    option = None if refs else chosen_option(message, options[:len(articles)])
    return options.index(option) if option is not None else None
