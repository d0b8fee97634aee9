"""The grade an API model gives in JSON: parsed leniently, validated strictly (never repaired into a pass)."""
from __future__ import annotations

from ...legal.laws import resolve
from ...legal.refs import find_article_refs
from ...llm.parsing import as_score, as_str_list, parse_json_object
from ...state import DIMENSION_CN, DIMENSIONS, Article, Quality
from .rules import failed

# Below PASS but within three quarters of it, with an article the grader names as relevant: a hedged answer (CRAG's
# ambiguous action) rather than a refusal.
AMBIGUOUS_SHARE = 0.75


def relevant_ids(value, articles: list[Article]) -> list[str]:
    """The given articles a grader names as relevant ("第十条", "《数据安全法》第二十一条", 10). A named law is
    matched too: in a knowledge base of several laws 《数据安全法》第二十一条 is not every law's 第二十一条."""
    laws = sorted({a.law for a in articles})
    refs = [r for item in as_str_list(value, 10) for r in find_article_refs(f"第{item}条" if item.isdigit() else item)]
    named = set()
    for r in refs:
        law = resolve(r.law, laws) if r.law else None
        if r.law and law is None:
            continue  # a law outside these articles: names none of them
        named.add((law, r.article))
    return [a.id for a in articles if (a.law, a.article) in named or (None, a.article) in named]


def parse_quality(text: str | None, threshold: int, articles: list[Article] = ()) -> Quality:
    data = parse_json_object(text)
    if data is None:
        return failed(threshold, "unreadable", "error", "质量评估输出无法解析")
    scores, reasons = {}, {}
    for dim in DIMENSIONS:
        value = data.get(dim)
        if isinstance(value, dict):  # {"relevance": {"score": 8, "reason": "..."}}
            reasons[dim] = str(value.get("reason") or "")[:200]
            value = value.get("score")
        score = as_score(value)
        if score is None:
            why = "缺少" if value is None else f"无效（{str(value)[:20]}，应为 0-10）"
            return failed(threshold, "unreadable", "error", f"质量评估的{DIMENSION_CN[dim]}分数{why}")
        scores[dim] = score
        reasons.setdefault(dim, str(data.get(f"{dim}_reason") or "")[:200])
    total = round(sum(scores.values()), 1)
    passed = total >= threshold
    relevant = relevant_ids(data.get("relevant"), list(articles))
    ambiguous = not passed and relevant and total >= AMBIGUOUS_SHARE * threshold
    return Quality(scores=scores, reasons=reasons, total=total, threshold=threshold, passed=passed,
                   verdict="pass" if passed else "fail", source="llm",
                   missing="" if passed else str(data.get("missing") or "")[:200], relevant=relevant,
                   action="correct" if passed else "ambiguous" if ambiguous else "incorrect")
