"""Is the model's standalone question usable? Checked in code, before anything downstream reads it.

A condensation is kept only if it is one non-empty line of at most 120 characters that asks something; keeps every number of the
follow-up (99块, 三年, 一千二), every noun the follow-up brings that the history did not have (资料, 体检报告), and
the law it names; brings in no noun of the prompt's examples that the conversation does not have (a copied
example); names no article number the user did not write in this or an earlier question (a model that
answers instead of rewriting tends to cite one, and a number in the question would pin that article in
retrieval); and is not simply the previous question again (the follow-up's ask would be lost).
Otherwise the rule form is used: 「上一问题：…；追问：…」 (or 「原问题：…；补充：…」 after a clarifying question).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...legal.laws import national_title
from ...legal.refs import find_article_refs
from .prompt import CONDENSE
from .signals import EMPTY_NOUNS, law_names, nouns

MAX_CHARS = 120
_PREFIX = re.compile(r"^\s*(?:改写后的问题|改写后|改写|完整问题|独立问题|问题|输出|答)\s*[：:]\s*")
_QUOTES = "「」“”\"'《》`*"
_QUESTION = re.compile(r"[？?]|吗|呢|么|什么|多少|多久|怎么|怎样|如何|哪|是否|能否|可否|有没有|能不能|可不可以|要不要|算不算|谁")
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?=[块元万年月周天日个岁次倍小时条期])|[零〇一二两三四五六七八九十百千万亿]{2,}")


# The nouns of the prompt's made-up examples: a small model asked about a follow-up it cannot resolve copies an
# example's rewrite (seen with both shipped models on 「是在一家网店买的东西…」: 「快递公司把我的收件地址…」).
# Words every conversation here may use are left out (信息, 公司).
_EXAMPLES = CONDENSE.split("【对话上文】")[0]
_COMMON = frozenset("信息 个人信息 个人信息保护法 公司 单位 员工 法律 条文 合法 小时 示例".split())


@lru_cache(maxsize=1)
def example_nouns() -> frozenset[str]:
    return frozenset(nouns(_EXAMPLES, EMPTY_NOUNS)) - _COMMON


@dataclass(frozen=True)
class Checked:
    question: str | None  # None: not usable
    problem: str = ""


def first_line(raw: str) -> str:
    """The model's one line: the first non-empty line, without a label or quotes around it."""
    for line in (raw or "").splitlines():
        line = _PREFIX.sub("", line.strip()).strip().strip(_QUOTES).strip()
        if line:
            return line
    return ""


def numbers(text: str) -> list[str]:
    """Amounts, ages, periods as written: 99, 12, 一千二, 三年's 三, 五万 (not the 一 of 一个 / 一下)."""
    found = re.findall(r"\d+(?:\.\d+)?", text)
    found += [n for n in _CN_NUMBER.findall(text) if n != "一"]
    return list(dict.fromkeys(found))


def new_nouns(follow_up: str, history_text: str) -> list[str]:
    """The follow-up's content nouns that the history does not contain (what it adds to the conversation)."""
    names = "".join(law_names(follow_up))
    return [n for n in nouns(follow_up, EMPTY_NOUNS) if n not in history_text and n not in names]


def check(raw: str, follow_up: str, questions: list[str], titles: list[str]) -> Checked:
    """`questions`: the earlier standalone questions the model was given (the last one last); `titles`: the
    articles the previous turn cited, as the model saw them."""
    history_text = "\n".join(questions + titles)
    previous = questions[-1] if questions else ""
    question = first_line(raw)
    if not question:
        return Checked(None, "输出为空")
    if len(question) > MAX_CHARS:
        return Checked(None, f"输出过长（{len(question)} 字）")
    if question == previous.strip():
        return Checked(None, "输出与上一问题相同")
    if not _QUESTION.search(question):
        return Checked(None, "输出不是一个问题")
    lost = [n for n in numbers(follow_up) if n not in question]
    if lost:
        return Checked(None, f"丢失了追问中的数字：{'、'.join(lost)}")
    lost = [n for n in new_nouns(follow_up, history_text) if n not in question]
    if lost:
        return Checked(None, f"丢失了追问中的词：{'、'.join(lost)}")
    copied = [n for n in nouns(question, EMPTY_NOUNS) if n in example_nouns() and n not in history_text + follow_up]
    if copied:
        return Checked(None, f"抄了示例里的词：{'、'.join(copied)}")
    named = {national_title(n) for n in law_names(follow_up)}
    if named - {national_title(n) for n in law_names(question)}:
        return Checked(None, "丢失了追问中的法律名称")
    known = {r.article for r in find_article_refs("\n".join([follow_up, *questions]))}
    invented = [r.text for r in find_article_refs(question) if r.article not in known]
    if invented:
        return Checked(None, f"加入了追问和上文都没有的条文：{'、'.join(invented)}")
    return Checked(question)
