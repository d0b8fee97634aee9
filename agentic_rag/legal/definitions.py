"""Terms a statute defines (「（一）个人信息处理者，是指…」, 「本法所称数据，是指…」) and questions that ask what one
means (「个人信息处理者是什么意思？」, 「什么叫匿名化」).

A definition question is a lookup in other words: the article that defines the term is the answer, and it is looked
up like 第X条 (`LocalRetriever.defining`). Left to the ranking, the defining article often came second, behind an
article that merely uses the term (个人信息处理者 → 第五十二条, 自动化决策 → 第二十四条).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# 「（一）个人信息处理者，是指」, 「本法所称数据，是指」, 「前款规定的临时性工作岗位是指」: the term before 是指.
_DEFINES = re.compile(r"(?:^|[：；。（）()\s，,])(?:(?:本法|本编|本章|本条|前款|前条)(?:规定|所称)的?|所称的?)?"
                      r"([^，,。；：（）()、\s“”]{2,20}?)[，,]?是指")
# 「什么是匿名化」, 「去标识化是什么意思？」, 「个保法里的自动化决策指的是什么」
_ASKS = re.compile(r"^(?:请问|想问一下|想问)?[，,]?(?:什么是|什么叫|啥是|啥叫|何为|何谓)(?P<before>[^？?，,。！!]{2,24}?)"
                   r"(?:呢|啊)?[？?。！!]*$|"
                   r"^(?:请问|想问一下|想问)?[，,]?(?P<after>[^？?，,。！!]{2,24}?)(?:到底|具体|在法律上|法律上)?"
                   r"(?:是什么意思|是啥意思|什么意思|是指什么|指的是什么|指什么|的定义是什么|的含义是什么|的意思是什么|"
                   r"怎么定义|如何定义|的定义|的含义|是什么|是啥)(?:呢|啊)?[？?。！!]*$")
# What may stand before the term when the question names where it is defined (「个保法里的」, 「法律上的」).
_WHERE = ("的", "里", "中", "上")


def defined_terms(text: str) -> list[str]:
    """The terms `text` defines, in order."""
    return list(dict.fromkeys(m.group(1) for m in _DEFINES.finditer(text)))


def asked_term(question: str) -> str | None:
    """The term a question asks the meaning of, or None when it asks something else."""
    m = _ASKS.match(question.strip())
    return (m["before"] or m["after"]) if m else None


def matching(asked: str, terms: Iterable[str]) -> list[str]:
    """The defined terms `asked` names: itself, or a term it ends with after 的/里/中/上 (「个保法里的匿名化」)."""
    return [t for t in terms if asked == t or asked.endswith(t) and asked[: -len(t)].endswith(_WHERE)]
