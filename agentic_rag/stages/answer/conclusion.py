"""The conclusion's label, decided in code from what the question asks and how the deciding clause regulates.

A 1.5B model asked 可以 / 不可以 answers 不可以 to nearly everything (its logits barely move with the article:
docs/evaluation.md), so the polarity is read from the statute: the question's kind (may someone
do X? must X be done? may I demand X? how do I …?) against the modality of the clause that decides it (不得,
应当, 可以/有权, 不需). A conditional rule (方可 after a list, 应当 + a condition, an exception that may or may not
apply) is answered 视情况 with the condition, not guessed: a wrong 可以 is worse than an honest "it depends".
eval/conclusion_rules.py measures these rules alone, on the gold articles.
"""
from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Literal

from ...legal.modality import EXCEPTION, Clause, imposes_penalty
from ...legal.modality import modality as modality_of
from ...legal.numerals import cn_to_int
from ...legal.vocabulary import DRAFTING
from ...retrieval.tokenizer import hanzi_bigrams
from ...state import Label
from ..contextualise.prompt import FOLLOW_UP_MARK

AskKind = Literal["howto", "info", "need", "right", "permission"]
EXPLAINED: tuple[AskKind, ...] = ("howto", "info")  # answered 说明 with the clause, not with a polar label
POLARITY_LABELS: tuple[Label, ...] = ("可以", "不可以", "需要", "不需要", "视情况")

# 「…会被怎么处理」 of the one who acted (not of 「我的个人信息会被怎么处理」: what becomes of the data)
_SANCTION_ASK = r"(?<!信息)(?<!数据)(?<!资料)(会|将)被?(怎么|怎样|如何)(处理|处置)"
# Words that ask for a number (how much, how long, how many years …; not 这几天 / 前几天).
NUMBER_ASK = r"多少|多久|多长|(?<![这那前])几(年|个月|天|日|周|倍|岁|次|个?小时)"
# The first kind that matches wins: "我能要求删除吗" is a right, "需要同意吗" a need, "这合法吗" a permission.
_ASK: tuple[tuple[AskKind, re.Pattern], ...] = (
    ("info", re.compile(NUMBER_ASK + r"|(赔|补|退|给)[^，。？]{0,3}哪些|"  # a number, which sums: 「能要多少补偿？」「我能要求赔哪些钱？」
                        r"(能|可以)(要|拿|拿到|得到|主张|索要|争取)(些)?(什么|啥|哪些)|"  # what is owed: 「这种情况我能要什么？」
                        r"(怎么|怎样|如何)(分配?|划分)|" + _SANCTION_ASK + "|"  # how it is shared; what is done to the one who did it
                        r"第?[一二三四五六七八九十百零〇\d]+条.{0,6}(讲|规定|内容|是什么|关于什么|说|啥)|"
                        r"^[^，。？]{0,12}第[一二三四五六七八九十百零〇\d]+条[？?]?$")),
    ("howto", re.compile(r"怎么办|怎么处理|如何|怎样|找谁|去哪|向谁|哪里|哪个部门|什么部门|怎么维权|什么办法|能做什么|"
                         r"该怎么|能怎么|可以怎么|怎么(投诉|举报|起诉|要求|申请|索赔)|走什么程序|有什么(办法|途径|要求)|有(没有)?(别的|其他)(办法|途径)|"
                         r"注意什么|注意哪些|要做(什么|哪些)|做哪些|哪些内容|写清楚|路子|怎么(做|算|计算|操作)|如何计算|"
                         # what to do, asked last (「…需要在中国做些什么？」 is not a yes/no 需要; 「需要先办什么手续吗？」 is)
                         r"((做|办|干)(些|点)?(什么|啥)|做到哪些|(办|干)哪些)[？?]?$")),
    ("need", re.compile(r"需要|需不需要|要不要|必须|是否要|是不是要|有没有义务|有义务|用不用|得(先|要|经|征得)|得把.{0,16}(删|销毁|停|关|去掉|告诉|通知|交)|要.{0,12}同意吗|得.{0,6}同意吗|"
                        r"(?<![我想能])要(向[^，。？]{1,10})?(通知|告诉|告知|说明|报告|征求|经过|取得)[^，。？]{0,10}[吗么]|"  # 「要通知我吗」
                        # 「…要定期做风险评估吗」, 「平台要审核商家的资质吗」, 「我提前离职要交吗」: a duty asked (not 要赔偿: 「能找化工厂要赔偿吗」
                        # claims it; not 「也要做…评估吗」, fresh2's 视情况 on a list of cases: a 需要 there was a held-out loss)
                        r"(?<![我想能还])要((定期|每年|按时)[^，。？]{0,14}|(开展|进行|审核|核验|登记|备案|交|付|缴|支付|保存|签|办)[^，。？]{0,12})[吗么]|"
                        r"要先|还要|(是不是|是否)还?得|还得(?!到)|(?<![获取记觉值懂晓使免赢舍省显所应难])得(?![到了住起着过])[^，。？]{1,16}吗|算不算.{0,8}(个人信息|敏感)|属于.{0,8}(个人信息|敏感)|算.{0,6}(个人信息|敏感)")),
    ("right", re.compile(r"^(那么|那|我们|我|现在|直接|还|也|就)*(能|可以)(要求|要回|请求|(让|要|找)[^，。？]{0,10}(赔|退|还|返还|补偿|工资|报酬))|"
                         r"我(能|可以|有权|能不能|可不可以)(直接)?(要求|让|请求|坚持|申请|拒绝|关|删|查|复制|更正|撤回|退|索赔|"
                         r"举报|投诉|找)|(能|可以)(让|要求)(他们|它|对方|商家|公司|平台|App)|有权(要求|请求|拒绝|查阅|复制)|"
                         r"(也|还)(能|可以)(举报|投诉|起诉|索赔|要求)|"
                         # 「我辞职能要经济补偿吗」: the asker claims something owed (not 「公司能要我赔吗」)
                         r"我[^，。？]{0,8}(能|可以)要回?(?!我|求我)[^，。？]{0,10}(补偿|赔|工资|报酬|利息|押金)")),
    ("info", re.compile(r"是什么|有哪些|哪些|什么时候|规定了什么|什么意思|"
                        r"什么是|什么叫|何为|何谓|啥是|啥叫|是指什么|指的是什么|"  # what a term means
                        r"谁(来)?(负责|管|监管|监督)|由谁|归谁|(干|做)(什么|啥|嘛)的|怎么定义|定义是|"  # who is in charge
                        r"谁(可以|能|有权)|"  # who may (「还有谁可以起诉它」): the ones the article names
                        r"(什么|哪些|何)(条件|不同|区别)|区别是|"  # what it takes; how two rules differ
                        r"(怎么|怎样|如何)(处)?罚|(什么|哪些)(处罚|后果)")),  # what the sanction is
    ("permission", re.compile(r"合法|违法|可以.{0,16}吗|行吗|能.{0,16}吗|合规|对吗|允许|有权这么|算不算|违规|侵权|这样.{0,4}(可以|行|对)")),
)


# What a sentence of an answer concludes, read from its first polarity word (negative forms are tried at the same
# position first: 不可以 contains 可以).
_STATED: tuple[tuple[Label, re.Pattern], ...] = (
    ("不可以", re.compile(r"不可以|不能|不得|不合法|不允许|无权|禁止")), ("不需要", re.compile(r"不需要|无需|不必|不用")),
    ("视情况", re.compile(r"视情况|取决于|要看|分情况")), ("需要", re.compile(r"需要|应当|必须")),
    ("可以", re.compile(r"可以|能够|合法|有权|允许")),
)


def stated_label(sentence: str) -> Label | None:
    hits = [(m.start(), i, label) for i, (label, pattern) in enumerate(_STATED) for m in [pattern.search(sentence)] if m]
    return min(hits)[2] if hits else None


def asked_part(question: str) -> str:
    """What a rule-form follow-up (「上一问题：…；追问：…」) asks is its last follow-up; the rest gives the facts."""
    _, mark, follow_up = question.rpartition(FOLLOW_UP_MARK)
    return follow_up if mark else question


# 「这种会被罚吗？」「会有什么后果？」: what the sanction for a breach is. Not 赔 or 惩罚性赔偿 (what the other side owes
# the user is the civil rule, not the fine) and not 担责 (civil as often as administrative).
_PENALTY_ASK = re.compile(r"(?<!惩)罚|什么后果|法律责任|违反[^，。？]{0,8}(会|将)(怎么样|怎样)|" + _SANCTION_ASK)


def asks_penalty(question: str) -> bool:
    return bool(_PENALTY_ASK.search(asked_part(question)))


def final_clause(question: str) -> str:
    """The clause that asks: the last one of the first question (「租房时…也没说好租多久，我现在想退租，可以随时走吗？」
    asks 可以随时走吗; the facts before it only tell the case). The first question, because a two-ask question's
    label answers its first ask."""
    first = re.split(r"(?<=[？?])", asked_part(question).strip(), maxsplit=1)[0]
    return re.split(r"[，,。；;！!]", first.rstrip("？?"))[-1]


def ask_kind(question: str) -> AskKind:
    # the whole text when the asking clause or the follow-up names no ask
    for text in dict.fromkeys((final_clause(question), asked_part(question), question)):
        for kind, pattern in _ASK:
            if pattern.search(text):
                return kind
    return "info" if is_topic(asked_part(question)) else "permission"


# 「…算敏感信息吗？」 asks whether something is of a kind: its 需要 / 不需要 is shown as 属于 / 不属于 (the label, what the
# checks and the eval compare, stays the same).
_CLASSIFIES = re.compile(r"(算不算|属不属于|算是|算|属于)[^，。？需要得]{0,14}[吗么]?$")
SHOWN_AS = {"需要": "属于", "不需要": "不属于"}
# 「…还算合法吗？」 asks whether something is lawful: 可以 / 不可以 are shown as 合法 / 不合法 (not 「违法吗」: 不合法
# would answer it yes in the negative's words).
_LAWFUL = re.compile(r"(合法|合规)[吗么]?$")
SHOWN_LAWFUL = {"可以": "合法", "不可以": "不合法"}


def shown_label(question: str, label: str) -> str:
    """The label as the 结论 line shows it for this question."""
    asks, kind = final_clause(question), ask_kind(question)
    if kind == "need" and _CLASSIFIES.search(asks):
        return SHOWN_AS.get(label, label)
    return SHOWN_LAWFUL.get(label, label) if kind == "permission" and _LAWFUL.search(asks) else label


_QUESTION_FORM = re.compile(r"[？?吗呢么，,。；;！!]|能|可以|是否|是不是|要不要|行不行|对不对|有没有|算不算|会不会|该不该|谁|怎")


def is_topic(text: str) -> bool:
    """A topic, not a question (「删除权」, 「敏感个人信息 单独同意」): short or made of terms, with no question form and no
    sentence. Explained; a yes/no label would answer a question nobody asked (「删除权」 was answered 「可以。」)."""
    text = text.strip()
    return not _QUESTION_FORM.search(text) and (len(text) <= 12 or " " in text)


# The rule for a duty that does not speak to the consent asked about (`unanswered_consent`): its 视情况 stands.
CONSENT_UNANSWERED = "need/consent_unanswered"
AGE_UNSTATED = "age"  # the rule's marker (「need/age/none」): the child's age, which the question does not give, decides
AGE_UNMET = "age_unmet"  # … the asker's own age is below the age the clause requires (年满三十周岁)
AGE_OVER = "age_over"  # … the age the question gives is at or above the rule's bracket: the rule is not its case


def rule_marker(rule: str) -> str:
    """The reading that decided a label (「need/age/none」 → 「age」)."""
    return rule.split("/")[1] if rule.count("/") >= 2 else ""


def fact_unstated(rule: str) -> bool:
    """The 视情况 waits on a fact the question does not give: no model reading of the question can decide it."""
    return rule == CONSENT_UNANSWERED or rule_marker(rule) == AGE_UNSTATED


@dataclass(frozen=True)
class Decision:
    label: Label
    rule: str  # which rule decided (kept in state; tuning reads it)


def exception_part(clause: Clause) -> str:
    """The excepted case of a clause ("取得个人单独同意的除外" → 取得个人单独同意; "但是，A的除外" → A)."""
    text = clause.text
    m = re.search(r"(?:但是|但)[，,]?([^。；]*?)(?:的除外|除外)", text) or re.search(r"[，,；]([^，,；。]*?)的?除外", text) \
        or re.search(r"但是[，,]([^。；]*?)的[，,](?:可以)?(?:不承担|减轻|免除|不适用)", text)  # 但是，能够证明…的，不承担责任
    return m.group(1) if m else ""


def exception_applies(question: str, clause: Clause) -> bool:
    """The question is about the case the clause excepts: an item of an excepting list (下列商品除外：（一）…), or a
    question that shares the exception's own words (专门找我签了单独的授权同意书 ~ 取得个人单独同意的除外)."""
    if clause.lead and "除外" in clause.lead:
        return True
    part = exception_part(clause)
    return bool(part) and len(hanzi_bigrams(question) & hanzi_bigrams(part)) >= max(2, len(hanzi_bigrams(part)) // 3)


def _bracket(text: str) -> tuple[float, float, set[str]] | None:
    """The time bracket a clause is for (「劳动合同期限一年以上不满三年的」 → 365-1095 days) and the words of what it
    brackets (劳动合同期限)."""
    m = _BRACKET.search(text)
    if not m:
        return None
    g = m.groups()
    with contextlib.suppress(ValueError):
        low = cn_to_int(g[0] or g[4] or "0") * _DAYS.get(g[1] or g[5], 1)
        high = cn_to_int(g[2]) * _DAYS[g[3]] if g[2] else math.inf
        segments, at = _segments_around(text, m.group(0))
        return low, high, hanzi_bigrams(segments[at].replace(m.group(0), ""))
    return None


def _segments_around(text: str, found: str) -> tuple[list[str], int]:
    """The text's comma segments and the index of the one that holds `found` (a bracket, a limit)."""
    segments = re.split(r"[，,；;。]", text)
    return segments, next(i for i, p in enumerate(segments) if found in p)


def _told_spans(question: str) -> list[tuple[int, set[str]]]:
    """Each span of time the question tells (三年, 6个月), in days, with the words of its clause."""
    found = []
    for segment in re.split(r"[，,。？?！!；;]", question):
        halves = [_HALF_DAYS[m.group(1)] for m in _HALF.finditer(segment)]
        found += [(days, hanzi_bigrams(segment)) for days in _days(segment, _SPAN) + halves]
    return found


def bracket_fit(question: str, clause: Clause) -> bool | None:
    """Whether the span the question tells of what the clause's bracket is about (「我的合同是两年的」 against
    「劳动合同期限一年以上不满三年的」) falls inside it; None when the clause has no bracket or the question no such span."""
    found = _bracket(clause.full)
    if not found:
        return None
    low, high, subject = found
    spans = [days for days, words in _told_spans(question) if words & subject]
    return any(low <= days < high for days in spans) if spans else None


def within_limit(question: str, clause: Clause) -> bool | None:
    """Whether what the question asks to agree (「约定试用期6个月」) stays within the clause's limit (「试用期不得超过二个月」):
    a span told of the limit's subject, not of the clause's bracket. None when either is missing."""
    limit = _LIMIT.search(clause.full)
    if not limit:
        return None
    segments, at = _segments_around(clause.full, limit.group(0))
    # what is limited stands before 不得超过 (「试用期不得超过二个月」) or, after a comma, in the segment before it
    # (「…竞业限制期限，不得超过二年」)
    subject = hanzi_bigrams(segments[at][:segments[at].index(limit.group(0))] or (segments[at - 1] if at else ""))
    bracketed = (_bracket(clause.full) or (0, 0, set()))[2]
    asked = [days for days, words in _told_spans(question) if words & subject and not words & bracketed]
    with contextlib.suppress(ValueError):
        return max(asked) <= cn_to_int(limit.group(1)) * _DAYS[limit.group(2)] if asked else None
    return None


def _days(text: str, pattern: re.Pattern) -> list[int]:
    """Each span `pattern` finds in `text` (三年, 两个月, 十天), in days."""
    found = []
    for m in pattern.finditer(text):
        with contextlib.suppress(ValueError):
            found.append(cn_to_int(m.group(1)) * _DAYS[m.group(2)])
    return found


def falls_short(question: str, clause: Clause) -> bool:
    """The clause's rule is for a time reached (下落不明满四年, 工作满十年) and every span the question states is shorter
    (失联三年): the rule does not reach the question's case."""
    needed, stated = _days(clause.full, _REACHED), _days(question, _SPAN)
    return bool(needed and stated) and max(stated) < min(needed)


def clause_modality(clause: Clause) -> str:
    """An item takes the modality of the sentence that introduces it: in "有下列情形之一的，可以解除：（一）劳动者
    ……不能从事原工作的" the 不能 describes the case, the 可以 is the rule. A proviso (但是，…不承担责任) is not the rule:
    it decides only where the question is its case (`exception_applies`, which turns the rule's label)."""
    if clause.lead:
        return modality_of(clause.lead)
    rule, *proviso = _PROVISO.split(clause.text, maxsplit=1)
    mod = modality_of(rule)
    if not proviso or _CROSS_REFERENCE.search(proviso[0]) or mod == "none":
        return clause.modality  # 「但是有前款第二项至第七项规定情形的，不需取得个人同意」: its case is not in words to match
    return mod


def decide(question: str, clause: Clause | None, common: frozenset[str] = DRAFTING) -> Decision:
    """The label for `question` given the clause that decides it (None: no clause was found); `common` are the words
    every article of the clause's law has (`legal.vocabulary`)."""
    kind = ask_kind(question)
    if kind in EXPLAINED:
        return Decision("说明", kind)
    if clause is None:
        return Decision("视情况", "no clause")
    if _WHO_BEARS.search(final_clause(question)) and _BORNE_BY.search(clause.full):
        return Decision("说明", "info/borne")  # 「退货运费谁出？」 against 「退回商品的运费由消费者承担」: it names who
    mod = clause_modality(clause)
    if kind == "need" and mod == "oblige" and unanswered_consent(question, clause):
        return Decision("视情况", CONSENT_UNANSWERED)  # not the polarity model's either: the clause is silent
    label = _TABLES[kind](mod, clause, question, common)
    if exception_applies(question, clause):  # the excepted case: the rule's opposite
        return Decision(OPPOSITE.get(label, label), f"{kind}/exception/{mod}")
    if falls_short(question, clause):  # 失联三年 against 下落不明满四年: the rule's case is not the question's
        return Decision(OPPOSITE.get(label, label), f"{kind}/short/{mod}")
    if kind != "need" and age_unmet(question, clause):  # 「我今年28岁…想收养…可以吗」 against 「（五）年满三十周岁」
        return Decision("不可以", f"{kind}/{AGE_UNMET}/{mod}")
    age = age_case(question, clause)
    if age == AGE_OVER:  # 「十六岁孩子的信息算敏感信息吗」 against 不满十四周岁: not the rule's case
        return Decision(OPPOSITE.get(label, label), f"{kind}/{AGE_OVER}/{mod}")
    if age == AGE_UNSTATED and label != "视情况":
        return Decision("视情况", f"{kind}/{AGE_UNSTATED}/{mod}")  # 「未成年人的信息算敏感信息吗」: only 不满十四周岁 ones are
    if label == "视情况" and mod == "none" and deems_absent(question, clause):
        return Decision("不需要" if kind == "need" else "不可以", f"{kind}/deemed/{mod}")
    return Decision(label, f"{kind}/{mod}")


def only_defines(clause: Clause) -> bool:
    """The clause says what a term means (「个人信息是以电子或者其他方式记录的…各种信息」) and regulates nothing: where
    it is all a 视情况 stands on, it cannot say what the answer depends on."""
    return clause_modality(clause) == "none" and bool(_DEFINITION.search(clause.text))


def deems_absent(question: str, clause: Clause) -> bool:
    """The clause deems absent what the question asks for: 「借钱没写利息，能要利息吗」 against 「…没有约定的，视为没有
    利息」 (likewise 视为无偿保管, 视为不同意)."""
    asked = hanzi_bigrams(final_clause(question))
    return any(hanzi_bigrams(m.group(1)) & asked for m in _DEEMED_ABSENT.finditer(clause.text))


def told_facts(question: str) -> str:
    """What the question tells before its asking clause (「吃完食物中毒进了医院」 of 「…，平台要不要担责？」): not 要不要's 不."""
    told, asking = asked_part(question), final_clause(question)
    return told[:told.rfind(asking)] if asking and asking in told else ""


def unanswered_consent(question: str, clause: Clause) -> bool:
    """「这得先经过我本人同意吗」 against 「…处理者应当指定个人信息保护负责人」: a duty that is not about consent does
    not say whether consent is needed."""
    return bool(_CONSENT.search(final_clause(question))) and not _CONSENT.search(clause.full)


def _need(mod: str, clause: Clause, question: str, common: frozenset[str]) -> Label:
    if mod == "prohibit" and _PAY_ASK.search(final_clause(question)) and forbids_charging(question, clause, common):
        return "不需要"  # 「这个违约金我真得交吗」 against 「不得…约定由劳动者承担违约金」: what may not be charged is not owed
    if mod == "oblige" and owed_in_part(question, clause):
        return "不需要"  # 「这3万我得全赔吗」 against 「…应当减轻其赔偿责任」: reduced, so not in full
    if mod == "oblige" and (party := _BORNE_BY.search(clause.full)):
        if _BUSINESS_ROLE.match(party.group(1)) and _ASKER_BURDEN.match(final_clause(question)) and \
                not _BUSINESS_ASKER.search(question):
            return "不需要"  # 「我得自己举证吗」 against 「…由经营者承担有关瑕疵的举证责任」: the asker is not that party
        if not hanzi_bigrams(party.group(1)) & hanzi_bigrams(question):
            return "视情况"  # 「由盗窃人…承担赔偿责任」 asked 「我得赔吗」: whether the asker is that party decides
    if mod == "permit" and lead_duty(clause):
        return "需要"
    if mod == "permit" and approval_asked(question) and _ASKER_SIDE.match(grantee(clause.full)) and \
            not _APPROVAL.search(clause.full):
        return "不需要"  # 「辞职需要公司批准吗」 against 「劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同」
    if mod == "permit":  # a list of lawful bases other than consent matched: no consent needed
        return "不需要" if clause.lead and not _CONSENT.search(clause.text) and \
            not necessity_disputed(question, clause) else "视情况"
    if mod == "oblige" and _FAULT_LIABILITY.search(clause.full) and not _NEGATED.search(told_facts(question)):
        return "视情况"  # 「…平台要不要担责」 against 「…未尽到审核义务…造成消费者损害的，依法承担相应的责任」: the failure decides
    if mod == "oblige" and not clause.lead and _CONDITIONAL.search(clause.text):
        # "…达到规定数量的处理者应当…": whether the question's case meets the condition decides
        return "需要" if condition_met(question, clause, common) else "视情况"
    if mod == "none" and _DEFINITION.search(clause.text):
        return "需要"  # "算个人信息吗" against the definition it falls under
    return {"oblige": "需要", "prohibit": "需要", "exempt": "不需要"}.get(mod, "视情况")


def _right(mod: str, clause: Clause, question: str, common: frozenset[str]) -> Label:
    if mod == "oblige" and owed_in_part(question, clause):
        return "不可以"  # 「能要求只占三成的那家全赔吗」 against 「…各自承担相应的责任」: each owes its share, not all
    if mod == "oblige" and evades(final_clause(question), clause):
        return "不可以"  # 「监管局来调交易数据，我能拒绝不给吗」 against 「…应当提供」: a duty is not the holder's to refuse
    if mod == "permit" and not clause.lead and _OPEN_STANDARD.search(clause.text):
        return "视情况"
    if mod == "oblige" and not clause.lead and rebuttable(clause):
        return "视情况"  # 「…堆放人不能证明自己没有过错的，应当承担侵权责任」: whether they can prove it decides
    if mod == "permit" and not clause.lead and condition_denied(question, clause, common):
        return "不可以"  # 「厂里也承认不是故意的…还能让他们额外再赔一笔惩罚性的钱吗」 against 「…故意污染环境…的，…有权请求…」
    if mod in ("permit", "oblige"):
        return "视情况" if clause.lead and mod == "oblige" else "可以"
    if mod == "prohibit" and refuses_what_is_forbidden(question, clause):
        return "可以"  # 「公司规定必须加班…我能拒绝吗」 against 「用人单位…不得强迫…劳动者加班」
    return {"prohibit": "不可以", "exempt": "不可以"}.get(mod, "视情况")


def owed_in_part(question: str, clause: Clause) -> bool:
    """The asking clause asks about all of a liability (全赔, 全部承担) that the clause reduces (减轻其赔偿责任) or
    apportions (各自承担相应的责任, 按份)."""
    return bool(_IN_PART.search(clause.full)) and bool(_IN_FULL.search(final_clause(question)))


def refuses_what_is_forbidden(question: str, clause: Clause) -> bool:
    """The asker asks whether they may refuse (「我能拒绝吗」) what the clause forbids a business or an employer the
    asker is not (用人单位不得强迫…加班): what the other side may not impose, the asker may refuse."""
    asking = final_clause(question)
    return own_act(asking) and bool(_REFUSAL.search(asking)) and addresses_another_business(question, clause)


def addresses_another_business(question: str, clause: Clause) -> bool:
    """The clause is addressed to a business or an employer (用人单位, 经营者, 处理者 …) and the asker is not one."""
    return bool(_BUSINESS_ROLE.search(grantee(clause.full))) and not _BUSINESS_ASKER.search(question)


def _permission(mod: str, clause: Clause, question: str, common: frozenset[str]) -> Label:
    asking = final_clause(question)
    if (fits := within_limit(question, clause)) is not None:
        return "可以" if fits else "不可以"  # 「…约定试用期6个月？我的合同是两年的」 against 「…不得超过二个月」
    if mod == "prohibit" or _AT_WILL.search(asking) and conditioned(mod, clause, asking):
        return "不可以"  # 「App可以随便读我手机通讯录吗」 against 第十三条: only on a ground the law states, not at will
    if exceeds_count(asked_part(question), clause):
        return "不可以"  # 「同一家公司可以跟我约定两次试用期吗」 against 「…只能约定一次试用期」
    if mod == "exempt":
        return "视情况" if rebuttable(clause) else "可以"  # 「管理人能够证明已经采取足够安全措施…的，可以…不承担责任」
    if mod == "permit":
        return _permitted(clause, question, asking, common)
    return _not_permitted(mod, clause, question, asking, common)


def _permitted(clause: Clause, question: str, asking: str, common: frozenset[str]) -> Label:
    """Asked whether something may be done, against a clause that permits (可以, 有权): whose permission it is, and
    whether the question's case meets it."""
    if _REFUSAL.search(asking):
        return "视情况"  # 「我们能拒绝检查吗」 against 「部门可以实施现场检查」: the permission is the other side's
    if precondition_skipped(question, clause):
        return "不可以"  # 「车行也没催，就说要解除合同」 against 「…经催告后…仍未支付…的，出卖人可以…解除合同」
    if clause.lead and (_CONDUCT.search(asking) or own_act(asking)) and \
            not _CONSENT.search(clause.text) and skipped_duty(question, _NEGATED_PART.sub("", clause.text), common):
        # 「没培训也没调岗就辞退我，合法吗」 against 「…经过培训或者调整工作岗位，仍不能胜任工作的」: a step the ground
        # needs was not taken (what the item itself negates, 不能胜任, is the case, not a step); 「从没签过什么仲裁协议，
        # 我能直接去申请仲裁吗」 against 「根据与经营者达成的仲裁协议提请仲裁机构仲裁」: the asker's own way lacks it
        return "不可以"
    if not clause.lead and condition_denied(question, clause, common):
        return "不可以"
    if not clause.lead and agreement_permitted(question, clause):
        return "可以"  # 「约好以后借的钱不超过50万都用这块表担保，这样约定行吗」 against 「出质人与质权人可以协议设立最高额质权」
    if keeps_what_must_go(kept_asked(question), clause, "permit"):
        return "不可以"  # 「我注销了账号，平台还能留着我的信息吗」 against 「…应当主动删除个人信息；…有权请求删除：」
    if clause.lead and _CONDUCT.search(asking) and _ASKER_SIDE.match(grantee(clause.full)) \
            and not lead_duty(clause):
        # 「公司这么做合法吗」 against 「用人单位有下列情形之一的，劳动者可以解除劳动合同：（二）…」: a list of the other side's
        # wrongs that free the asker, not of grounds the other side acts on (not 第四十七条's, whose list is a duty's)
        return "不可以"
    if clause.lead:  # an item of a list of lawful grounds matched, other than consent itself
        return "视情况" if _CONSENT.search(clause.text) or necessity_disputed(question, clause) else "可以"
    if imposes_penalty(clause.text):
        # a sanction answers 「监管局能罚它吗」 yes and 「这样合规吗」 no: what it sanctions is unlawful
        return "可以" if asks_penalty(question) and _MAY.search(asking) else "不可以" if _CONDUCT.search(asking) else "视情况"
    if _CONDUCT.search(asking) and _ASKER_SIDE.match(grantee(clause.full)):
        return "不可以"  # 「不买车险就不给提车，合法吗」 against 「消费者有权自主选择…」: what they did denies the asker's right
    if granted_to_asked(asking, clause) and not _CONDUCT.search(asking) and \
            not _OPEN_STANDARD.search(clause.text):
        # 「工会能找公司讨说法吗」 against 「…工会可以依法申请仲裁、提起诉讼」: the one asked about holds the power to
        # do the act named. Not 「物业能这样催费吗」: a power to 催告 says nothing of the conduct told (停水).
        return "可以"
    if permitted_act_asked(question, clause, common) and not _OPEN_STANDARD.search(clause.text):
        # 「…约谈，还让限期整改，他们有权这么做吗」 against 「有关主管部门…可以…约谈…整改」: the act asked about is the one
        # permitted, to the one the question names
        return "可以"
    if own_act(asking) and others_permission(question, clause):
        return "视情况"  # 「公司拖欠工资三个月了」→「我能立刻辞职吗」 against 第四十条's 用人单位…可以解除: not the asker's
    if own_act(asking):
        # 「那我现在还能撤回吗」 against 「个人有权撤回其同意」: the asker's own act, granted — unless left to a
        # standard. Not 「这样合规吗」 about the other side's act.
        return "视情况" if _OPEN_STANDARD.search(clause.text) or not _GRANTS.search(clause.text) else "可以"
    return "视情况"


def _not_permitted(mod: str, clause: Clause, question: str, asking: str, common: frozenset[str]) -> Label:
    """Asked whether something may be done, against a duty, a sanction or a clause that regulates nothing: what the
    question tells the other side did against it."""
    if keeps_what_must_go(kept_asked(question), clause, mod):
        return "不可以"  # 「…它还不删，这样合法吗？」 against a duty 「…应当及时删除…」
    if mod == "oblige" and (duty_breached(question, clause, common) or evades(asking, clause)):
        return "不可以"  # the duty was not done, or the ask is whether it may be left undone (「他真可以不赔吗」)
    if mod == "oblige" and _CONDUCT.search(asking) and (departed(question, clause) or undone(question, clause)):
        return "不可以"
    if (_LIABILITY.search(clause.text) or mod == "none" and imposes_penalty(clause.lead)) and _CONDUCT.search(asking):
        # 「他这么做合法吗」 against 「…出售…个人信息的，依法追究法律责任」, or against an item of a list a fine
        # introduces (「…处十万元以上五十万元以下的罚款：…擅自删除消费者的评价的」): what it sanctions is unlawful
        return "不可以"
    if mod == "none" and not own_act(asking) and sanctioned_act_asked(asking, clause, common):
        return "不可以"  # 「公司能扣我的身份证吗？」 against 「用人单位…扣押劳动者居民身份证…的，由…给予处罚」
    return "视情况"


def necessity_disputed(question: str, clause: Clause) -> bool:
    """A ground for what is necessary (「…实施人力资源管理所必需」) against a question that tells more than the purpose
    needs (「就打个卡要这么多权限」): whether it is necessary is the question, not a ground it meets."""
    return bool(_NECESSARY.search(clause.text)) and bool(_EXCESS.search(asked_part(question)))


def exceeds_count(asking: str, clause: Clause) -> bool:
    """The clause allows only so many (只能约定一次) and the question asks about more of the same (两次, 第二次)."""
    limit = _ONLY_COUNT.search(clause.full)
    if not limit:
        return False
    for asked in _ASKED_COUNT.finditer(asking):
        number, unit = asked.group(1) or asked.group(3), asked.group(2) or asked.group(4)
        if unit == limit.group(2) and (asked.group(3) or cn_to_int(number) > cn_to_int(limit.group(1))):
            return True
    return False


def approval_asked(question: str) -> bool:
    """The asking clause asks whether the other side must approve (需要公司批准吗, 得经过单位同意吗)."""
    return bool(_OTHERS_APPROVAL.search(final_clause(question)))


def lead_duty(clause: Clause) -> bool:
    """The list's introduction states a duty before the right: 「…应当主动删除…；…未删除的，个人有权请求删除：」."""
    return bool(clause.lead) and "应当" in _introduction(clause)


def _introduction(clause: Clause) -> str:
    """The sentence of a list item up to its first item: the list's whole introduction (`Clause.lead` keeps only its
    last part, 「个人信息处理者未删除的，个人有权请求删除：」)."""
    return clause.sentence.split("（", 1)[0]


def kept_asked(question: str) -> str:
    """Where keeping is asked about: the asking clause (「平台还能留着吗」), or, asked whether it is lawful (「…它还不删，
    这样合法吗？」), the told keeping — unless the other side gave a reason (「它说…技术上没法单独删」), whose hold
    decides."""
    asking, told = final_clause(question), told_facts(question)
    if _CONDUCT.search(asking) and not _KEEP_ASKED.search(asking) and not _REASON_GIVEN.search(told):
        return re.split(r"[，,。；;！!]", told.rstrip("，,。；;！! "))[-1]
    return asking


def keeps_what_must_go(asking: str, clause: Clause, mod: str) -> bool:
    """The asking clause asks whether the other side may keep (留着, 保存) what the clause's duty says to delete, and
    the duty's sentence excepts no case (the article's other paragraphs, such as a storage period other laws set,
    are shown as its conditions)."""
    duty = _introduction(clause) if mod == "permit" and lead_duty(clause) else \
        clause.full if mod == "oblige" else ""
    return bool(_KEEP_ASKED.search(asking)) and bool(_DELETE_DUTY.search(duty)) and not own_act(asking) and \
        not EXCEPTION.search(duty)


def sanctioned_act_asked(asking: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """The clause sanctions a conduct (「…扣押劳动者居民身份证等证件的，由劳动行政部门…给予处罚」) and the asking clause
    names that conduct: its verb's first character (扣, not 「能查看我的身份证吗」) and two bigrams beyond the law's
    common words."""
    text = clause.full
    conduct = text.split("的，", 1)[0] if "的，" in text else ""
    act = re.sub(r"^(擅自|违法|非法)", "", re.split(r"[，,]", conduct)[-1])
    return bool(act) and imposes_penalty(text) and act[0] in asking and \
        len((hanzi_bigrams(asking) - common) & hanzi_bigrams(conduct)) >= SANCTIONED_ACT_BIGRAMS


def conditioned(mod: str, clause: Clause, asking: str) -> bool:
    """The clause lets the other side act only on terms: a duty it must meet, or a permission or exemption tied to a
    list of grounds, a case (…的), consent or an exception. Such a rule never lets it act at will. Not the asker's own
    act (「我能随便…吗」, in the asking clause `asking`), nor a permission granted to the asker's side (「消费者能随便
    退货吗」 against their own right)."""
    if own_act(asking):
        return False
    if mod == "oblige":
        return True
    before = _before_permit(clause.full) or [""]
    if _ASKER_SIDE.match(grantee(clause.full)) or _ASKER_SIDE.match(before[-1]):
        return False
    return mod in ("permit", "exempt") and bool(
        clause.lead or "方可" in clause.full or _CROSS_REFERENCE.search(clause.full) or
        _CONDITIONAL.search(clause.text) or _CONSENT.search(clause.full) or EXCEPTION.search(clause.full))


def forbids_charging(question: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """What the clause forbids (after 不得 / 禁止) names something the question is asked to pay (违约金, 运费)."""
    m = re.search(r"不得|禁止", clause.full)
    return bool(m) and bool(hanzi_bigrams(clause.full[m.end():]) - common & hanzi_bigrams(question))


def _before_permit(text: str) -> list[str] | None:
    """The parts (split at ，；) of the sentence before its 可以 / 有权 / 享有: where the grantee is named. None without one."""
    word = _PERMIT_WORD.search(text)
    return re.split(r"[，,；;]", text[:word.start()]) if word else None


def permitted_act_asked(question: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """The question asks about the very act the clause permits (two of the words after 可以 / 有权 in what it asks),
    and names the one it is permitted to (a word of the grantee): not 「县消协能起诉吗」 against a power of 省级消协."""
    word = _PERMIT_WORD.search(clause.full)
    if not word or _REFUSAL.search(final_clause(question)):
        return False
    if re.search(r"的[，,]", clause.full[:word.start()]) and not condition_met(question, clause, common):
        return False  # a permission on a condition (「…达到全部价款的五分之一，经催告后…的，出卖人可以…」)
    act = hanzi_bigrams(clause.full[word.end():]) - common
    named = hanzi_bigrams(grantee(clause.full)) - common
    return len(act & hanzi_bigrams(asked_part(question))) >= 2 and bool(named & hanzi_bigrams(question))


def granted_to_asked(asking: str, clause: Clause) -> bool:
    """The asking clause asks whether someone may (「工会能…吗」) and the clause grants the permission to them: the
    asker's words for them share a bigram with the grantee (the sentence's first part or the part before 可以)."""
    m = _MAY.search(asking)
    actor = hanzi_bigrams(asking[:m.start()]) if m else set()
    parts = _before_permit(clause.full) or [""]
    return bool(actor & (hanzi_bigrams(parts[0]) | hanzi_bigrams(parts[-1])))


def grantee(text: str) -> str:
    """Who a permission is granted to: the sentence's first part unless it is a condition (「…的，」), else the part
    right before 可以 / 有权 (「业主…逾期不支付物业费的，物业服务人可以催告」 grants to 物业服务人)."""
    parts = _before_permit(text) or re.split(r"[，,；;]", text)
    if not parts[0].endswith("的"):
        return parts[0]
    return next((p for p in reversed(parts) if p), "")


def duty_breached(question: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """The question tells of the other side skipping the duty the clause imposes (没告知 / 查不到联系方式 against
    应当告知名称和联系方式; consent in the user agreement against 应当取得单独同意): what it did is unlawful. Not
    when the duty is the asker's own (消费者退货的商品应当完好) or the clause's condition is not the question's case."""
    text = clause.full
    duty = text.split("应当", 1)[-1]
    if asker_bears_duty(clause.sentence or text):
        return False
    if skipped_step(question, duty) and age_case(question, clause) != AGE_OVER and not EXCEPTION.search(clause.sentence):
        return True  # not where the article excepts the duty (告知将妨碍国家机关履行法定职责的除外): lay words cannot tell
    if not (_OMISSION.search(question) or skipped_duty(question, duty, common)):
        return False
    if _CONDITIONAL.search(clause.text) and not clause.lead and not condition_met(question, clause, common):
        return False
    shared = hanzi_bigrams(question) & (hanzi_bigrams(duty) - common)
    return bool(shared) or bool(_SEPARATE.search(duty) and _BUNDLED.search(question))


def evades(asking: str, clause: Clause) -> bool:
    """The asking clause asks whether a duty may be left undone (拒绝, 可以不赔, 不用担责) and the clause's sentence
    excepts no case from it (「…但是，能够证明尽到管理职责的，不承担侵权责任」 leaves 「幼儿园真的可以不赔吗」 open)."""
    return bool(_EVADE.search(asking)) and not EXCEPTION.search(clause.sentence or clause.full) and \
        not _REFUSAL_GIVEN.search(clause.full)


def departed(question: str, clause: Clause) -> bool:
    """「…到现在没人处理，他们这样拖着合规吗」 against a duty of the other side (应当…处理并告知): the question tells of
    something not done, with no legal basis claimed, no exception in the clause's sentence that could cover it
    (公安查流水没告诉我 against a duty to inform that 妨碍履行法定职责 excepts), and no duty that is itself the
    relief for a case where the usual one cannot be met (急救人员没经同意翻手机 against 「紧急情况下…无法及时告知的，
    …应当在紧急情况消除后及时告知」: what was not done may be what that case allows)."""
    sentence = clause.sentence or clause.full
    condition = condition_part(clause) if _CONDITIONAL.search(clause.text) else ""
    return bool(_WITHHELD.search(question) or _IMPOSED.search(question)) and not asker_bears_duty(sentence) \
        and not _CLAIMED_BASIS.search(question) and not EXCEPTION.search(sentence) and not _UNABLE.search(condition)


def undone(question: str, clause: Clause) -> bool:
    """The question tells the other side did the opposite of the duty (「订单记录被平台删了」 against 「应当记录、保存…
    交易信息」; 「他们说这些资料会一直留着」 against a storage time 「应当为…所必要的最短时间」), with no legal basis
    claimed (券商说法规规定要保存…: whether it holds decides) and no exception in the sentence but a general deferral
    to other laws."""
    sentence = clause.sentence or clause.full
    duty = sentence.split("应当", 1)[-1]
    return any(keep.search(duty) and told.search(question) and not (asked and asked.search(question))
               for keep, told, asked in _UNDONE) \
        and not asker_bears_duty(sentence) and not _CLAIMED_BASIS.search(question) \
        and not EXCEPTION.search(_GENERAL_DEFERRAL.sub("", sentence))


def asker_bears_duty(sentence: str) -> bool:
    """The duty of the sentence is the asker's own (消费者退货的商品应当完好, 个人应当…): its bearer is who stands before
    应当, or the sentence's start where nothing does. Not 「消费者向有关行政部门投诉的，该部门应当…处理」: the asker
    is named in the condition, the duty is the department's (lab2-101)."""
    duty = re.search(r"应当|必须", sentence)
    parts = re.split(r"[，,；;]", sentence[:duty.start()]) if duty else [sentence]
    named = len(parts) > 1 and parts[0].endswith("的") and parts[-1].strip()
    return bool(_ASKER_DUTY.match(sentence[duty.start() - len(parts[-1]):] if named else sentence))


def skipped_duty(question: str, duty: str, common: frozenset[str] = DRAFTING) -> bool:
    """The question says the other side did not do what the duty names, in its own words: 「事先根本没跟工会说过理由」
    against 应当事先将理由通知工会, 「没去劳动局办许可」 against 应当申请行政许可. The negated act must share a word with
    the duty (「没穿过、吊牌都在」 is the asker's own state), and the other side must not have cited a legal basis."""
    if _CLAIMED_BASIS.search(question):
        return False
    duty_words = hanzi_bigrams(duty) - common
    return any(span & duty_words for span in negated_spans(question))


def negated_spans(question: str) -> list[set[str]]:
    """The 2-grams of what each negation of the question negates, to the end of its clause; or, where the negation
    ends its clause (「页面上一点“广告”字样都没有」), what comes before it."""
    after = [hanzi_bigrams(re.split(r"[，。？！；,?!;]", question[m.end():], maxsplit=1)[0])
             for m in _NEGATED.finditer(question)]
    return after + [hanzi_bigrams(m.group(1)) for m in _NEGATION_LAST.finditer(question)]


def condition_denied(question: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """The clause permits only in a case it states first (「侵权人…故意污染环境…的，被侵权人有权…」) and the question
    denies that case in its own words (不是故意的): the permission is not the question's. What the condition itself
    negates (「用人单位未及时足额支付劳动报酬的」) is the case, not a word to deny, and a negation of the question that
    tells that case (「没跟出租人说就…转租」 of 「承租人未经出租人同意转租的」) denies nothing."""
    if not _CONDITIONAL.search(clause.text) or _CLAIMED_BASIS.search(question):
        return False
    condition = condition_part(clause)
    case = {b for m in _NEGATED_PART.finditer(condition) for b in hanzi_bigrams(m.group())} - common
    words = hanzi_bigrams(_NEGATED_PART.sub("", condition)) - common
    return any(span & words and not span & case for span in negated_spans(question))


def precondition_skipped(question: str, clause: Clause) -> bool:
    """The clause permits an act only after a step of the one permitted (经催告后, 但是应当提前六十日书面通知) or only
    by agreement (协商一致, 根据自愿原则), and the question tells the step skipped (也没催, 没打任何招呼) or the act
    imposed (硬让我签, 说我必须接受): what was done is not what the clause permits. Not where the other side cited a
    legal basis, which then decides."""
    if _CLAIMED_BASIS.search(question):
        return False
    return any(said.search(question) and required.search(clause.full) for said, required in _PRECONDITIONS)


def agreement_permitted(question: str, clause: Clause) -> bool:
    """The clause lets the parties agree on something (「…可以协议设立…」, 「双方当事人可以订立口头协议」) and the question
    tells of such an agreement (约好, 说好, 商量好, 签) asking whether it stands: the parties did what they may. Not where
    the clause's own condition (「…的，」) is not the question's case, nor a permission granted to one side."""
    word = _AGREEMENT_PERMITTED.search(clause.full)
    if not word or not _AGREED.search(question) or _CLAIMED_BASIS.search(question):
        return False
    before = clause.full[:word.start()]
    return bool(_BOTH_PARTIES.search(before)) and not re.search(r"的[，,]", before)


def rebuttable(clause: Clause) -> bool:
    """The clause's duty holds unless the one it binds proves something (过错推定: 「…不能证明自己没有过错的，应当
    承担侵权责任」, 「公共道路管理人不能证明已经尽到…义务的」): what a lay question tells cannot settle the proof.
    Not a proviso (「但是，能够证明损害是因战争…造成的，不承担责任」): that is an exception, decided as one."""
    return bool(_REBUTTABLE.search(_PROVISO.split(clause.text, maxsplit=1)[0]))


def skipped_step(question: str, duty: str) -> bool:
    """The question says the very step the duty requires was skipped, in lay words: 没问过我 / 未经同意 against a duty
    to obtain consent, 没告诉 against a duty to inform, 没标 against a duty to mark. The words differ from the
    statute's, so the shared-words test above does not see it."""
    return any(said.search(question) and required.search(duty) for said, required in _SKIPPED_STEPS)


def others_permission(question: str, clause: Clause) -> bool:
    """The permission is granted to a business or an employer (用人单位, 经营者, 处理者 …) and the question tells of one
    as someone else (公司拖欠工资, 商家, 平台 — not 我们公司): the asker is not the one it lets act."""
    return addresses_another_business(question, clause) and bool(_BUSINESS_TOLD.search(question))


def own_act(asking: str) -> bool:
    """The asking clause (`final_clause`) asks whether the asker may do something: nothing but the asker stands
    before 能/可以, or a follow-up puts the asker in the previous ask's place (「那我自己想走呢？」)."""
    m = _MAY.search(asking)
    return bool(m) and bool(_ASKER_ONLY.fullmatch(asking[:m.start()])) or bool(_OWN_WISH.fullmatch(asking))


def age_case(question: str, clause: Clause) -> str | None:
    """Where the clause is for those under an age (不满十四周岁): AGE_OVER when the question states an age at or above
    it, AGE_UNSTATED when it asks about children (未成年人, 孩子) without saying how old; else None."""
    limit, age = _ages(question, clause.full)
    if limit is None:
        return None
    if age is not None:
        return AGE_OVER if age >= limit else None
    return AGE_UNSTATED if _CHILD.search(question) and not _UNDER_AGE.search(question) else None


def age_unmet(question: str, clause: Clause) -> bool:
    """The clause requires an age reached (年满三十周岁, 十八周岁以上) and the asker states a lower one of their own
    (「我今年28岁」; not the age of someone they tell of, 「收养一个3岁的小女孩」)."""
    limit, own = _REACHED_AGE.search(clause.full), _OWN_AGE.search(asked_part(question))
    if not (limit and own):
        return False
    with contextlib.suppress(ValueError):
        return cn_to_int(own.group(1)) < cn_to_int(limit.group(1) or limit.group(2))
    return False


_REACHED_AGE = re.compile(r"年满([一二三四五六七八九十\d]+)周岁|(?<![不未]满)([一二三四五六七八九十\d]+)周岁以上")
# An age as a question states it (「15岁」, 「十四周岁」), not a limit (「十四岁以下」)
_AGE_STATED = r"([一二两三四五六七八九十]{1,3}|\d{1,2})\s*周?岁(?!以下|以内|之前)"
_OWN_AGE = re.compile(rf"(?:我|本人)(?:今年|已经|才|刚|现在)?满?{_AGE_STATED}")
# An age the question states (「15岁」, 「已经满十四岁」), not a limit it quotes (「不满十四岁的」, 「十四岁以下」)
_AGE = re.compile(rf"(?<![不未]满)(?<![不未一二两三四五六七八九十\d]){_AGE_STATED}")


def _stated_age(question: str) -> int | None:
    """The age a follow-up asks about, else the first age the question states: 「上一问题：…才十二岁…；追问：初三那些
    已经满十四岁的孩子呢？」 asks about fourteen-year-olds."""
    for text in (asked_part(question), question):
        for m in _AGE.finditer(text):
            with contextlib.suppress(ValueError):
                return cn_to_int(m.group(1))
    return None


def age_limit(text: str) -> str | None:
    """The age bracket a rule is for, as it words it (「不满十四周岁」), or None."""
    m = _AGE_LIMIT.search(text)
    return m.group(0) if m else None


def _ages(question: str, text: str) -> tuple[int | None, int | None]:
    """The age limit `text` sets (不满N周岁) and the age `question` states, each None when not given."""
    limit = _AGE_LIMIT.search(text)
    return (cn_to_int(limit.group(1)) if limit else None), _stated_age(question)


def condition_part(clause: Clause) -> str:
    """What a conditional clause's rule is for: the text before 「…的，」 or 「…的处理者应当」."""
    return re.split(r"的[，,]|的(?:个人信息)?处理者应当", clause.text, maxsplit=1)[0]


def condition_met(question: str, clause: Clause, common: frozenset[str] = DRAFTING) -> bool:
    """The question states the case a conditional duty is for: its age is below the clause's 不满N周岁, or it shares
    a third of the condition's own words (the words of every article of its law, `common`, say nothing)."""
    condition = condition_part(clause)
    limit, age = _ages(question, condition)
    if limit is not None and (age is not None or _CHILD.search(question)):  # a stated age decides; a child without
        return age is None or age < limit                                    # one is under any limit
    words = hanzi_bigrams(condition) - common
    return bool(words) and len(hanzi_bigrams(question) & words) >= max(2, len(words) // 3)


_NUMERAL = r"([一二两三四五六七八九十百\d]+)"
_REACHED = re.compile(rf"(?<![不未])满{_NUMERAL}个?(年|月|日)")  # 满四年, 满六个月: a time the rule's case must reach (not 不满一年: a bound)
_SPAN = re.compile(rf"{_NUMERAL}个?(年|月|日|天)(?!以[上下内])")  # 三年, 两个月, 十天 told in a question
_DAYS = {"年": 365, "月": 30, "日": 1, "天": 1}
# A bracket of time a rule is for (「三个月以上不满一年的」, 「不满三个月的」, 「三年以上…的」) and a limit it sets (「不得超过二个月」).
_BRACKET = re.compile(rf"(?:{_NUMERAL}个?(年|月|日|天)以上)?(?:不满|不足){_NUMERAL}个?(年|月|日|天)|{_NUMERAL}个?(年|月|日|天)以上")
_HALF = re.compile(r"半个?(年|月)")  # 半年 is six months (as 六个月 reads), 半个月 fifteen days
_HALF_DAYS = {"年": 6 * _DAYS["月"], "月": 15}
_LIMIT = re.compile(rf"不得(?:超过|多于|长于){_NUMERAL}个?(年|月|日|天)")
_AGE_LIMIT = re.compile(r"不满([一二三四五六七八九十\d]+)周岁")
_CHILD = re.compile(r"孩子|小孩|儿童|未成年|小学|幼儿")
_UNDER_AGE = re.compile(r"[不未]满[一二三四五六七八九十\d]+周?岁|[一二三四五六七八九十\d]+周?岁以下|小学|幼儿|婴|宝宝")
_TABLES = {"need": _need, "right": _right, "permission": _permission}
OPPOSITE: dict[str, Label] = {"可以": "不可以", "不可以": "可以", "需要": "不需要", "不需要": "需要"}
_CONSENT = re.compile(r"同意")
# A liability for a failure (「未尽到…义务…的，依法承担相应的责任」, 「未及时采取必要措施的，对损害的扩大部分…承担」)
_FAULT_LIABILITY = re.compile(r"未(尽到|采取|履行|及时)[^。；]*的[，,](依法)?(承担|对)")
_CONDITIONAL = re.compile(r"^[^，。；]{2,40}的[，,]|[^，。；]{2,30}的(个人信息)?处理者应当")
# A permission that leaves the case to a standard the question cannot settle (在合理的范围内, 情节严重的, 符合法定解除
# 合同条件的): it depends. A bare declaration (自然人享有隐私权) grants no act, so it decides no "may they?".
_OPEN_STANDARD = re.compile(r"合理的?范围|情节|符合[^，。；]{0,16}条件|(?<!未)经[^，。；]{0,10}(同意|批准)")
_GRANTS = re.compile(r"可以|有权|准许")
_NECESSARY = re.compile(r"必需|必要")
_EXCESS = re.compile(r"这么多|那么多|过多|太多|没必要|不必要|无关|超出|多余")
_CROSS_REFERENCE = re.compile(r"前款|前条|第[一二三四五六七八九十]+[项款条]|本法第")
_LIABILITY = re.compile(r"追究[^，。；]{0,4}责任|依法给予处分|构成犯罪|承担[^，。；]{0,8}侵权责任")
_MAY = re.compile(r"能|可以")
_AT_WILL = re.compile(r"随便|随意|任意|想怎么[^，。？]{0,6}就怎么|肆意")
# What may stand before 能/可以 when the asker asks about their own act (「那我现在还能撤回吗」, 「就可以离职吗」).
_ASKER_ONLY = re.compile(r"(那么|那|我们|我|现在|直接|还|也|就|是不是|是否)*")
# 「那我自己想走呢」 after 「公司能随时辞退我吗？」: the same ask, of the asker's own act.
_OWN_WISH = re.compile(r"(那么|那|如果|要是)*我(自己)?(想|要|打算)[^，。？吗]{1,8}呢")
_REFUSAL = re.compile(r"拒绝|不配合|挡回")
# A number of times or things the clause allows at most, and one asked about (两次, 第二次, 多次).
_ONLY_COUNT = re.compile(r"只能[^，。；]{0,12}?([一二两三四五六七八九十\d]+)(次|个|名|家|份)")
_ASKED_COUNT = re.compile(r"([一二两三四五六七八九十\d]+)(次|个|名|家|份)|(多|第[二三四五六七八九十])(次|个|名|家|份)")
# The other side's approval asked about (需要公司批准吗), and whether a clause asks for any.
_APPROVAL = re.compile(r"批准|同意|允许")
_OTHERS_APPROVAL = re.compile(r"(公司|单位|老板|领导|商家|平台|店|房东|物业|银行|卖家|对方|他们)[^，。？]{0,4}(批准|同意|允许|点头|签字)")
# Keeping asked about (还能留着吗, 能一直保存吗) against a duty to delete.
_KEEP_ASKED = re.compile(r"留着|保留|留存|保存|存着|不删")
_SAID = r"说|称|表示|回复|答复|解释"  # the other side said (a reason, a legal basis)
_REASON_GIVEN = re.compile(rf"({_SAID}|理由)")
_DELETE_DUTY = re.compile(r"应当[^。；]{0,8}(删除|销毁)")
# The duty is to let the asker refuse (「…应当…向个人提供便捷的拒绝方式」): refusing is what it gives, not an evasion.
_REFUSAL_GIVEN = re.compile(r"拒绝(的)?方式|有权拒绝|可以拒绝")
_EVADE = re.compile(r"拒绝|不配合|(可以|能)不(?!能)|(可以|能)[^，。？不]{1,8}不(?=赔|给|付|退|还|发|管)|"
                    r"不用(?![^，。？]*(同意|告诉|通知))")  # 他们能先交罚款不赔我吗
_DEFINITION = re.compile(r"是指|是以|包括|属于")
_DEEMED_ABSENT = re.compile(r"视为(?:没有|无偿?|不)([^，。；、]{1,8})")
# The question says a step was skipped, done without asking, or folded into a general agreement.
_OMISSION = re.compile(r"(没有?|未经?|不)(跟我|和我|向我)?(告诉|告知|通知|说明|问过?|经过?|征得|取得|同意|提醒|签|给)|"
                       r"查不到|找不到|从没|从未|自己.{0,12}(点|同意|勾)|偷偷|擅自|私自|悄悄|默认勾选|"
                       r"写在.{0,8}(协议|条款|政策)|全部条款|一揽子")
# The other side did not do something (没写工资, 一分钱不发, 压根没拿给职工代表大会讨论): with the duty's own words in
# the question, the duty it skipped. Not where it answered with a legal basis (券商说法规规定要保存…所以不删): whether
# that basis holds decides. A 规定 the question itself tells of (集体合同…规定了工资) is no basis the other side cited.
_NEGATION = r"(没有?|未|不)"
_NEGATED = re.compile(rf"{_NEGATION}(?=[\u4e00-\u9fff])")
_NEGATION_LAST = re.compile(r"([^，。？！；,?!;]{1,12}?)(都|也)没有?(?=[，。？！；,?!;]|$)")  # 一点X都没有, X也没
_NEGATED_PART = re.compile(rf"{_NEGATION}[^，,；;。]*")  # a negation and the rest of its clause
_CLAIMED_BASIS = re.compile(rf"({_SAID}|讲|告诉)[^。？！?!]{{0,20}}(法规|法律|规定|依法)"
                            r"|法律规定|法规规定|有关规定|按规定|依法")
# The asking clause asks whether what someone did is lawful (这样合法吗, 能这样吗), not whether someone may do a named act.
_CONDUCT = re.compile(r"这样|这么|合法|合规|违法|站得住")
# A clause that puts a duty or a loss on a named party (由出卖人承担, 由盗窃人…承担赔偿责任).
_BORNE_BY = re.compile(r"由([^，。；]{1,30}?)(承担|负担|赔偿)")
SANCTIONED_ACT_BIGRAMS = 2  # 「扣我的身份证」 and 「扣押劳动者居民身份证」 share 身份, 份证
_IN_PART = re.compile(r"减轻[^，。；]{0,4}(责任|赔偿)|相应的(赔偿|补充)?责任|按(照)?份|按照各自")
_IN_FULL = re.compile(r"全(部|额)?(赔|承担|负责|出|掏)|赔全")
_ASKER_BURDEN = re.compile(r"^(那|那么)?我(自己)?(还)?(得|要|需要|必须|该|应该)")  # 我得自己举证吗, 我要赔吗
_WHO_BEARS = re.compile(r"谁(来)?(出|付|承担|负担|赔|掏|买单)")  # who bears a cost (「退货运费谁出？」)
# A must-ask about paying or bearing something (我还得付吗, 这个违约金我真得交吗).
_PAY_ASK = re.compile(r"交|付|赔|承担|缴|出钱")
# Who a lay asker is in a clause (消费者, 被派遣劳动者; 个人 but not 个人信息处理者): a duty of theirs is no breach by the
# other side, and a right granted to them is what the other side's conduct asked about goes against.
_ASKER_ROLES = r"消费者|劳动者|用户|乘客|承租人|借款人|患者|业主|买受人"
# The other side of a lay asker, as a clause names it and as a question tells of it.
_BUSINESS_ROLE = re.compile(r"^[^，。；]{0,4}(用人单位|经营者|个人信息处理者|出卖人|出租人|贷款人|物业服务人|保管人|承运人)")
_BUSINESS_TOLD = re.compile(r"公司|单位|老板|厂|商家|平台|店|房东|物业|银行|卖家|网站|App|app")
_BUSINESS_ASKER = re.compile(r"(我们|我司|本)(公司|单位|厂|店|平台|网站)|我(是|开了?)[^，。？]{0,6}(公司|厂|店|老板|房东|商家)")
_ASKER_SIDE = re.compile(rf"^[^，。；]{{0,4}}({_ASKER_ROLES}|个人(?!信息))")
_PERMIT_WORD = re.compile(r"可以|有权|享有")
_ASKER_DUTY = re.compile(rf"^[^，。；]{{0,6}}({_ASKER_ROLES}|个人应当)")
_SEPARATE = re.compile(r"单独同意|书面同意")
_NOT = r"(没有?|未经?|从没|从未|完全没|也没|都没|不)"
_SKIPPED_STEPS = (
    (re.compile(_NOT + r"(跟|和|向)?[^，。？]{0,4}?(问过?|征得|征求|经过?.{0,4}同意|同意)"), re.compile(r"同意")),
    (re.compile(_NOT + r"(跟|和|向)?[^，。？]{0,4}?(告诉|告知|通知|说明|说一声|打招呼|提醒)"), re.compile(r"告知|通知|说明")),
    (re.compile(_NOT + r"[^，。？]{0,4}?(标|注明|提示)"), re.compile(r"标明|标示|标识|提示")),
)
# The other side withheld an act (不给人工窗口办, 一分钱不发, 没跟我商量, 拒绝给我开发票, 找不到关掉的开关), not the
# asker's own state (鞋没穿过, 我只注册了没借, 不会用智能手机).
_WITHHELD = re.compile(r"(没有?|不|未|一律不|从不|拒绝|拒不)[^，。？！]{0,2}?(给|发|开|写|跟|和|向|告诉|告知|通知|问|处理|理|回|签|"
                       r"经|让|退|还|赔|付|管|办|公开|说|提供|搞)|没人|找不到|查不到")
# … or imposed its own terms on the asker (只能在App上办, 必须同时买, 要开付费会员才能查, 逼我改种)
_IMPOSED = re.compile(r"只能|必须|非要|非得|才(能|给|肯|让)|逼|强制|硬(要|让|逼)")
_UNABLE = re.compile(r"无法|不能|未能|来不及")
# A duty to keep (记录, 保存) and a deletion told as done, not asked for; a duty to delete or keep briefly and a told
# keeping.
_UNDONE = ((re.compile(r"记录|保存|保留|留存"), re.compile(r"(被|给|都|全)[^，。？]{0,6}删|删(了|掉了|除了)|销毁了|清空了"),
            re.compile(r"(让|要求|请|想|希望)[^，。？]{0,12}删")),
           (re.compile(r"删除|最短时间"), re.compile(r"一直(留|存|保存|保留)|(还|都|继续)(留着|保存着|存着)|不(给|肯)?删"), None))
_GENERAL_DEFERRAL = re.compile(r"除?法律、?行政法规另有规定(的除)?外?[，,]?")
_PROVISO = re.compile(r"[；;，,]\s*但(?:是)?[，,]?")  # where a rule's proviso starts (；但是，…)
_REBUTTABLE = re.compile(r"(不能|能够)证明[^。；]*?的[，,]")
# A permission to agree (可以协议设立, 可以约定, 可以订立口头协议), granted to both parties (X与Y, 双方, 当事人, 之间).
_AGREEMENT_PERMITTED = re.compile(r"(可以|有权)(协议|约定|协商|订立|签订)")
_BOTH_PARTIES = re.compile(r"与|和|双方|当事人|之间")
_AGREED = re.compile(r"约好|约定|说好|讲好|谈好|商量|协商|签|口头")
_PRECONDITIONS = (
    (re.compile(_NOT + r"[^，。？]{0,8}?(催|打[^，。？]{0,3}招呼|通知|说一声)"), re.compile(r"催告|通知")),
    (_IMPOSED, re.compile(r"协商一致|自愿")),
)
_BUNDLED = re.compile(r"协议|条款|隐私政策|一揽子|默认")
