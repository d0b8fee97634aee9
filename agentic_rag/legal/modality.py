"""How a statute sentence regulates — it prohibits (不得), obliges (应当), permits (可以 / 有权 / 方可) or exempts
(不需 / 不适用) — and whether it carries an exception (但是 / 除外 / 除……外).

Articles are split into clauses the way a lawyer reads them: sentences end at 。；, and an enumerated item
（一）…（二）… is read together with the sentence that introduces it ("有下列情形之一的，……方可处理个人信息：" +
"（二）为订立、履行……所必需"), because the item alone says nothing about what is allowed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Modality = Literal["prohibit", "oblige", "permit", "exempt", "none"]

# Order matters: an exemption (不需取得个人同意, 可以不向个人告知; not in 「可以不告知的除外」, the case an exception
# names) contains no 不得 but would read as an obligation or a permission;
# 不得 is checked before 应当 because "应当……，不得……" is a prohibition on what follows.
# Two words are not the sentence's modality where they only qualify another: 「有权…退货，且无需说明理由」 is a right
# (the 无需 says how it is used), and 「可以决定禁止其…担任」 is a power to prohibit, not a prohibition.
_MODALITIES: tuple[tuple[Modality, re.Pattern], ...] = (
    ("exempt", re.compile(r"(?<![且并而])(不需|无需|不需要|不必|不适用(?!诉讼时效)|不受.{0,10}限制|(?<!不)免除|"
                          r"不再?承担|不向[^，,；;。]{1,10}支付(?![^，,；;。]*的)|不予|可以不(?![超少低足])(?![^，,；;。]*的除外))")),
    ("prohibit", re.compile(r"不得|(?<!决定)(?<!可以)(?<!有权)(?<!责令)禁止|严禁|不能|不应当|无效")),
    # a claim no limitation period bars (「…请求权，不适用诉讼时效的规定」) may still be made
    ("permit", re.compile(r"有权|方可|可以|享有|准许|不适用诉讼时效")),
    ("oblige", re.compile(r"应当|必须|须|负有|有义务|承担|不免除")),
)
EXCEPTION = re.compile(r"但是|除外|除[^，。；]{1,40}外|另有规定")
# An article that sanctions a breach (法律责任): a fine, confiscation, an order to correct. In the PIPL 第六十六条 and
# 第六十八条; in the other laws of the six-law base their 法律责任 chapters.
_PENALTY = re.compile(r"罚款|没收违法所得|责令.{0,10}改正|给予处罚")
_ITEM = re.compile(r"（[一二三四五六七八九十]+）")
_SENTENCE_END = re.compile(r"(?<=[。；])")
_FULL_STOP = re.compile(r"(?<=。)")
QUOTE_SENTENCE_CHARS = 120


@dataclass(frozen=True)
class Clause:
    text: str  # the clause as the statute words it
    lead: str = ""  # for an enumerated item: the sentence that introduces the list
    item: str = ""  # （二）
    sentence: str = ""  # the whole sentence (up to 。) it is part of: its subject may be stated only there

    @property
    def full(self) -> str:
        """What the clause means on its own: an item with its introduction."""
        return f"{self.lead}{self.item}{self.text}" if self.lead else self.text

    @property
    def quote(self) -> str:
        """What an answer quotes: the whole sentence when it is short (a clause after ；often has no subject:
        "不得从事危害国家安全……"), else the clause with its introduction. A list's introduction is quoted with its
        list, whatever its length (the answer clips it): 「…但下列商品除外：」 alone names no exception."""
        if self.sentence and (len(self.sentence) <= QUOTE_SENTENCE_CHARS or self.introduces_list):
            return self.sentence
        return self.full

    @property
    def introduces_list(self) -> bool:
        return not self.item and self.text.rstrip().endswith(("：", ":"))

    @property
    def modality(self) -> Modality:
        return modality(self.full)


_SEGMENT_END = re.compile(r"[，,；;：:]|$")
_BREACH = ("违反", "有前款", "有上述")
# A deeming or a classing after the condition (「…仍不能确定的，视为不定期合伙」, 「…不能及时到达要约人的，为新要约」,
# 「…该利益属于委托人」): the condition's 不能 tells the case; the rule deems or classes it.
_DEEMS = re.compile(r"[^，。；]{0,6}(视为|为|属于)")


def modality(text: str) -> Modality:
    """The strongest deontic word of a sentence, in the order exempt > prohibit > permit > oblige. A prohibiting or
    exempting word that only describes whom the rule is about is not the sentence's: one inside a modifier that 的
    closes in its own comma segment, with a permitting or obliging word in a later segment (「不能辨认自己行为的成年人，
    其利害关系人…可以申请」, 「依法不得撤销的…赠与合同，…受赠人可以请求交付」; not 「不得扣押劳动者的居民身份证」, the rule itself)."""
    hits = [(m.start(), m.end(), name) for name, pattern in _MODALITIES for m in pattern.finditer(text)]

    def describes(end: int, name: str) -> bool:
        segment_end = _SEGMENT_END.search(text, end).start()
        if "的" not in text[end:segment_end]:  # or the next comma segment closes the condition: 「…无效，…劳动的，」
            following = _SEGMENT_END.search(text, segment_end + 1).start()
            # not 「不得…，违反的，应当…」 (the rule and its sanction), nor a word after a condition already closed
            # (「…超过二十年的，人民法院不予保护，有特殊情况的，…可以…延长」: the rule and its exception)
            closes = text[segment_end:segment_end + 1] in "，," and text[following - 1:following + 1] in ("的，", "的,") \
                and not text.startswith(_BREACH, segment_end + 1) and not re.search(r"的[，,]", text[:end])
            segment_end = following if closes else -1
        return name in ("prohibit", "exempt") and segment_end >= 0 and \
            (any(other in ("permit", "oblige") and at > segment_end for at, _, other in hits) or
             _DEEMS.match(text, segment_end + 1) is not None)
    kept = {name for _, end, name in hits if not describes(end, name)}
    return next((name for name, _ in _MODALITIES if name in kept), "none")


def modal_words(text: str) -> list[tuple[int, int, Modality]]:
    """Every deontic word of the text with its span, the longest at a position (无需 rather than its 需), none
    inside another: where a sentence says what is allowed, required or forbidden, and of which act (what follows)."""
    hits = sorted((m.start(), -m.end(), name) for name, pattern in _MODALITIES for m in pattern.finditer(text))
    out: list[tuple[int, int, Modality]] = []
    for start, negative_end, name in hits:
        if not out or start >= out[-1][1]:
            out.append((start, -negative_end, name))
    return out


_EXCEPTION_ONLY = re.compile(r"^(但是|但)|^[^，。；]{0,40}的?除外[。；]?$")


def _sentences(text: str) -> list[str]:
    """Sentences, with an exception that stands alone ("；取得个人单独同意的除外。") kept with the rule it excepts."""
    out: list[str] = []
    for s in (p.strip() for p in _SENTENCE_END.split(text)):
        if s and out and _EXCEPTION_ONLY.search(s) and not _ITEM.search(s):
            out[-1] += s
        elif s:
            out.append(s)
    return out


def clauses(text: str) -> list[Clause]:
    """The article's clauses; enumerated items carry the sentence that introduced their list (items end with ；,
    so the introduction is remembered across parts until a part without an item marker comes)."""
    out: list[Clause] = []
    lead = ""
    for full in (s.strip() for s in _FULL_STOP.split(text)):
        if out and not out[-1].lead and _EXCEPTION_ONLY.search(full) and not _ITEM.search(full):
            # 「…并承担商品运输中的风险和责任。但是，消费者另行选择快递物流服务提供者的除外。」: the exception is the rule's
            out[-1] = Clause(out[-1].text + full, sentence=out[-1].sentence + full)
            continue
        for part in _sentences(full):
            parts, markers = _ITEM.split(part), _ITEM.findall(part)
            if not markers:
                lead = ""
                out.append(Clause(part, sentence=full))
                continue
            head = parts[0].strip()
            if head:
                lead = head
                out.append(Clause(head, sentence=full))
            out.extend(Clause(body.strip(), lead=lead, item=mark, sentence=full)
                       for mark, body in zip(markers, parts[1:]) if body.strip())
    return out


def holds_a_list(text: str) -> bool:
    """The text enumerates (（一）…（二）…): a list quoted whole."""
    return len(_ITEM.findall(text)) >= 2


def imposes_penalty(text: str) -> bool:
    return bool(_PENALTY.search(text))
