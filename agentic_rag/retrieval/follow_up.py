"""Follow-up retrieval: articles that retrieved articles point to (依照本法第X条, 本法第X条规定的 …).

A statute often answers in two places: "处理敏感个人信息应当取得个人的单独同意" lives in one article and the
exceptions "依照本法第十三条第一款第二项至第七项" in another. The referenced articles are added as supporting
evidence (role `follow_up`, channel `follow_up` naming the article that pointed to them), following references
up to `depth` levels. Only the law being read is followed: a reference to another law is not in the knowledge
base (or would need its own retrieval).
"""
from __future__ import annotations

from ..legal.laws import resolve
from ..legal.refs import find_article_refs
from .types import Article

SOURCES = 3  # follow only the best evidence: lower-ranked articles are often noise
LIMIT = 4


def follow_ups(retriever, articles: list[Article], depth: int, limit: int = LIMIT) -> list[Article]:
    seen = {a.id for a in articles}
    frontier = [a for a in articles if a.role == "evidence"][:SOURCES]
    found: list[Article] = []
    for level in range(1, depth + 1):
        nxt = []
        for source in frontier:
            refs = [r for r in find_article_refs(source.text) if r.law is None or resolve(r.law, [source.law])]
            for doc in retriever.lookup(refs, default_law=source.law):
                article = retriever.article(doc, role="follow_up", search_type="follow_up",
                                            channels={"follow_up": {"from": source.id, "depth": level}})
                if article.id not in seen and len(found) < limit:
                    seen.add(article.id)
                    found.append(article)
                    nxt.append(article)
        frontier = nxt
    return found
