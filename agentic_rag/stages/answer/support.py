"""Nothing invented, checked in code: every sentence the model writes is checked against the articles it was given
before anyone sees it, like its citations.

A sentence is kept only when
* every number in it (amounts, 倍, days, months, percentages) appears in the articles or the question — a limit
  from the statute's own table tripled, or a deadline made up, never reaches the user;
* its polarity agrees with the conclusion decided in code (a sentence that says 可以 under 结论：不可以 goes), and
  it does not require, allow or forbid the very act the question asks about against that conclusion (「不可以，因为
  提前离职须向公司支付违约金两万元」 under "do I have to pay this penalty?");
* it does not make the party an article empowers to act the one the user acts against (「可以向人民检察院…提起诉讼」
  from 「人民检察院…可以依法向人民法院提起诉讼」);
* P(supported) ≥ threshold, a logistic over the share of its character bigrams found in the articles and, where the
  model can give it, logit(是) − logit(否) of "can this sentence be drawn from the articles above?" asked on the
  prompt prefix the model already evaluated (llama.cpp reuses it: one short tail per sentence). Without that logit
  (an API model without logprobs, a streamed web answer, a failed call) the weights fitted on the wording alone
  decide: the two sets are fitted apart, so a missing logit is not read as a neutral one.
The weights are fitted on labelled sentences (eval/results/support_check.json) and shipped in
resources/support_calibration.json; an unfitted default is used when that file is absent.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources

from ...legal.modality import modal_words
from ...legal.numerals import QUANTITY, cn_to_int
from ...legal.vocabulary import DRAFTING
from ...retrieval.tokenizer import hanzi_bigrams
from .conclusion import OPPOSITE, final_clause, stated_label

_CJK = re.compile(r"[^\u4e00-\u9fff0-9]")
FRAGMENT_CHARS = 3


@dataclass(frozen=True)
class SupportModel:
    intercept: float
    lexical: float
    llm: float  # weight of logit(是) − logit(否); 0: the logit is not asked for
    threshold: float
    provenance: str = "default"
    # the weights of the wording alone, used when there is no logit (default: intercept and lexical, i.e. llm 0)
    code_intercept: float | None = None
    code_lexical: float | None = None

    def z(self, lexical: float, d: float | None) -> float:
        if d is None or not self.llm:
            return (self.intercept if self.code_intercept is None else self.code_intercept) + \
                (self.lexical if self.code_lexical is None else self.code_lexical) * lexical
        return self.intercept + self.lexical * lexical + self.llm * d


@lru_cache(maxsize=1)
def support_model() -> SupportModel:
    try:
        data = json.loads((resources.files("agentic_rag") / "resources" / "support_calibration.json").read_text("utf-8"))
    except FileNotFoundError:
        # Unfitted: half of a sentence's bigrams must come from the articles (a paraphrase keeps most of them).
        return SupportModel(intercept=-4.0, lexical=8.0, llm=0.0, threshold=0.5)
    return SupportModel(**{k: data[k] for k in ("intercept", "lexical", "llm", "threshold")},
                        provenance=data.get("provenance", ""), code_intercept=data.get("code_intercept"),
                        code_lexical=data.get("code_lexical"))


FRAME = "取决于"  # the 视情况 task's frame (prompt.SENTENCE ends in it): no claim
# What a sentence says about its sources rather than what it claims: citations and the words that introduce them.
_CITING = re.compile(r"（网络来源，未核实）|〔未核实的条文〕|《[^》]{1,40}》|第[一二三四五六七八九十百千零〇\d]+条(第[一二三四五六七八九十\d]+[款项])*|"
                     r"根据|依据|依照|按照|参照|规定|本法|该法|" + FRAME)


def claim_bigrams(sentence: str) -> set[str]:
    """The sentence's character bigrams (CJK and digits), citations left out: what it claims."""
    chars = _CJK.sub("", _CITING.sub("", sentence))
    return {chars[i:i + 2] for i in range(len(chars) - 1)}


def bigram_support(sentence: str, sources: str, grams: set[str] | None = None) -> float:
    """Share of the sentence's claim bigrams found in the sources."""
    grams = claim_bigrams(sentence) if grams is None else grams
    return sum(g in sources for g in grams) / len(grams) if grams else 1.0


def _value(token: str) -> str:
    token = token.removeprefix("百分之")
    try:
        return str(cn_to_int(token))
    except ValueError:  # 万 and other forms cn_to_int does not read: compared as written
        return token


REPEATED = "重复所引条文"
NOTHING = "空"  # the label alone (「不可以。」, the task's own 「视情况，取决于」): nothing to show, nothing dropped
REPEAT_SHARE = 0.9  # of the sentence's bigrams found in the quoted clauses: the model copied the article again
_REPEAT_MIN_BIGRAMS = 8  # a short sentence (「可以。」, 「不得超过二年。」) is a conclusion, not a copy


def repeats_quote(sentence: str, plan) -> bool:
    """The sentence is the deciding clause (or the second article's) again: the answer shows it under 依据."""
    clauses = [plan.clause] if plan.clause else []
    quoted = _CJK.sub("", "".join(c.quote for c in clauses + [c for _, c in plan.extra]))
    grams = claim_bigrams(sentence)
    return bool(quoted) and len(grams) >= _REPEAT_MIN_BIGRAMS and \
        bigram_support(sentence, quoted, grams) >= REPEAT_SHARE


RESTATED = "重复问题"
RESTATE_SHARE = 0.6  # of the sentence's bigrams found in the question …
COPIED_RUN = 4  # characters in a row the sentence shares with the question: copied, not its own words
_REASON_WORDS = re.compile(r"^(因为|由于|所以|因此)")


def restates_question(sentence: str, question: str, articles: str) -> bool:
    """The sentence is the user's own words again (「可以。因为公司拖欠工资三个月了。」, 「需要。员工单独同意。」): most of
    it is the question's, it brings at most one word of the articles the question did not already have, and it
    concludes nothing itself (「网站不能把您的浏览记录卖给广告商。」 answers in the question's words: kept)."""
    if stated_label(own_words(sentence, question)):
        return False
    grams = claim_bigrams(_REASON_WORDS.sub("", sentence.strip()))
    asked, flat = hanzi_bigrams(question), _CJK.sub("", articles)
    if not grams or not asked:
        return False
    from_articles = {g for g in grams if g in flat} - asked
    return sum(g in asked for g in grams) / len(grams) >= RESTATE_SHARE and len(from_articles) <= 1


# 「因为公司没有依法为劳动者缴纳社会保险费。」: a reason that says what the other side did, in an article's words
_OTHER_SIDE = r"公司|单位|用人单位|老板|商家|经营者|平台|对方|他们|(?:个人信息)?处理者|机构|网站|App|物业|房东|卖家|店家"
_FACT_REASON = re.compile(rf"^(?:因为|由于)((?:你的|您的|该)?(?:{_OTHER_SIDE})[^，。；]*)")
_MODAL_WORD = re.compile(r"应当|不得|可以|有权|必须|须|无权|不能|能够|需要|无需|禁止")
UNTOLD_QUESTION_SHARE = 0.25  # at most this share of the reason's bigrams in the question …
UNTOLD_ARTICLE_SHARE = 0.6  # … and at least this share in the articles: an article's case told as the user's


def tells_an_untold_fact(sentence: str, question: str, flat_sources: str) -> bool:
    """The sentence gives as the reason something the other side did that the question never tells, in the words of
    an article's case (「因为公司没有依法为劳动者缴纳社会保险费。」 to a 违约金 taken from the last wage; 「因为公司停止提供
    产品或服务…」 to an employee who left): the 1.5B copies the deciding item's case into the user's facts."""
    m = _FACT_REASON.match(sentence.strip())
    if not m or _MODAL_WORD.search(sentence) or not question:  # a rule quoted as the reason states no fact
        return False
    grams = claim_bigrams(m.group(1))
    if len(grams) < 4:
        return False
    asked = hanzi_bigrams(question)
    return sum(g in asked for g in grams) / len(grams) <= UNTOLD_QUESTION_SHARE and \
        sum(g in flat_sources for g in grams) / len(grams) >= UNTOLD_ARTICLE_SHARE


def own_words(sentence: str, question: str) -> str:
    """The sentence without the runs of it copied from the question (「因为公司规定每天必须加班到晚上10点」 is the user's
    必须, not the sentence's): what the sentence itself says."""
    matcher = SequenceMatcher(None, sentence, question, autojunk=False)
    kept, start = [], 0
    for block in matcher.get_matching_blocks():
        if block.size >= COPIED_RUN:
            kept.append(sentence[start:block.a])
            start = block.a + block.size
    return "".join(kept) + sentence[start:]


def says_nothing(shown: str) -> bool:
    """What is left of the sentence after the code's label says nothing (empty, or the task's frame alone)."""
    return len(_CJK.sub("", shown).removeprefix(FRAME)) < FRAGMENT_CHARS


def numbers_ok(sentence: str, sources: str) -> bool:
    """Every number of the sentence is a number of the sources (compared as values: 三十日 = 30日)."""
    allowed = {_value(m.group(1) or m.group(0)) for m in QUANTITY.finditer(sources)}
    return all(_value(m.group(1) or m.group(0)) in allowed for m in QUANTITY.finditer(sentence))


def polarity_ok(sentence: str, label: str | None) -> bool:
    """The sentence does not state the opposite of the decided label (可以 under 不可以, 需要 under 不需要 …)."""
    said = stated_label(sentence)
    if label is None or said is None or said == label:
        return True
    return said != OPPOSITE.get(label)


_SIGN = {"可以": 1, "需要": 1, "不可以": -1, "不需要": -1}
_MODAL_SIGN = {"permit": 1, "oblige": 1, "prohibit": -1, "exempt": -1}
# A modal word after these in its clause is a caveat or a condition (「但定作的商品不能退」), not the answer's claim.
_CAVEAT = re.compile(r"但|除|如果|若|否则|只有|才")
_CLAUSE_END = re.compile(r"[，。；！？,;!?：:]")
SHARED_ACT_BIGRAMS = 2  # 违约金 alone shares 违约 and 约金 with 「这个违约金我真得交吗」


def contradicts_ask(sentence: str, question: str, label: str | None, common: frozenset[str] = DRAFTING) -> bool:
    """The sentence requires or allows the act the question asks about where the conclusion says no (or forbids it
    where the conclusion says yes). Each clause is read by its first modal word (a later one is in its scope:
    「不得…约定由劳动者承担违约金」 forbids), the act is what follows it, matched to the asking clause by bigrams that
    are not the law's common words (个人信息 is in every PIPL question)."""
    sign = _SIGN.get(label or "")
    asked = hanzi_bigrams(final_clause(question)) - common if sign else set()
    for clause in _CLAUSE_END.split(sentence) if asked else ():
        first = next(iter(modal_words(clause)), None)
        if first is None or _MODAL_SIGN[first[2]] == sign or _CAVEAT.search(clause, 0, first[0]):
            continue
        if len((hanzi_bigrams(clause[first[1]:]) - common) & asked) >= SHARED_ACT_BIGRAMS:
            return True
    return False


# 「可以向人民检察院…提起诉讼」 written from 「人民检察院…可以依法向人民法院提起诉讼」: the article's grantee made the one
# the user acts against. Every word is the article's, so the bigram support cannot see it (ans-ml-047).
_ADDRESSED = re.compile(r"(?:可以|有权|可)(?:依法)?向([^，。；！？,;!?]{2,40}?)"
                        r"(提起|投诉|举报|申请|请求|要求|提出|主张|索要|索赔|起诉|申诉)")
_PARTY_LIST = re.compile(r"、|以及|或者|(?<!共)和|或|及")  # not the 和 of 中华人民共和国
_GRANT = re.compile(r"可以|有权")
_SOURCE_CLAUSE = re.compile(r"[。；;，,！？]")


def _grants_the_act(party: str, act: str, sources: str) -> bool:
    """Some clause of the sources lets `party` itself do `act` (the party before 可以/有权, the act after it)."""
    for clause in _SOURCE_CLAUSE.split(sources):
        at = clause.find(party)
        grant = _GRANT.search(clause, at + len(party)) if at >= 0 else None
        if grant and act in clause[grant.end():]:
            return True
    return False


def swaps_the_actor(sentence: str, sources: str) -> bool:
    """The sentence tells the user to act against a party (向 X 提起诉讼) that the articles never address but grant
    that very act to."""
    for m in _ADDRESSED.finditer(sentence):
        for party in (p.strip() for p in _PARTY_LIST.split(m.group(1))):
            if len(party) < 2 or re.search(r"向[^，。；]{0,6}" + re.escape(party), sources):
                continue  # too short to name anyone, or a party the articles do address
            if _grants_the_act(party, m.group(2), sources):
                return True
    return False


# 「用户可以按照国家有关规定向劳动者支付加班费」 written from 「用人单位…应当…向劳动者支付加班费」: the user, a lay asker,
# made the one who owes the asker's side (劳动者, 消费者, 个人). Every word is the article's.
_USER_OWES_ASKERS = re.compile(r"^(用户|您|你)[^，。；]{0,16}向(劳动者|消费者|个人|用户|您)")


def swaps_the_user(sentence: str) -> bool:
    return bool(_USER_OWES_ASKERS.search(sentence.strip()))


@dataclass(frozen=True)
class Verdict:
    kept: bool
    p: float
    why: str = ""


def judge_sentence(sentence: str, sources: str, label: str | None, d: float | None = None,
                   model: SupportModel | None = None, question: str = "",
                   common: frozenset[str] = DRAFTING) -> Verdict:
    model = model or support_model()
    if len(_CJK.sub("", _CITING.sub("", sentence))) < FRAGMENT_CHARS:  # 「根据第29条。」: a citation and nothing else
        return Verdict(False, 0.0, "只有引用，没有内容")
    if sentence.rstrip().endswith(("？", "?")):  # the question repeated (its words are in the sources) answers nothing
        return Verdict(False, 0.0, "是问句，不是回答")
    flat = _CJK.sub("", sources)
    lexical = bigram_support(sentence, flat)
    z = model.z(lexical, d)
    p = round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 4)
    if not numbers_ok(sentence, sources):
        return Verdict(False, p, "数字不见于条文")
    if not polarity_ok(sentence, label) or contradicts_ask(sentence, question, label, common):
        return Verdict(False, p, "与结论相反")
    if swaps_the_actor(sentence, sources) or swaps_the_user(sentence):
        return Verdict(False, p, "主体与条文不符")
    if tells_an_untold_fact(sentence, question, flat):
        return Verdict(False, p, "说了问题里没有的事实")
    return Verdict(p >= model.threshold, p, "" if p >= model.threshold else "无法由条文核实")
