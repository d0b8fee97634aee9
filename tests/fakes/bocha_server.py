"""A local fake of Bocha's (博查) Web Search endpoint for offline tests, on the JSON-over-POST fake of
``tavily_server.py``.

Bocha's documented request is ``POST /v1/web-search`` with ``Authorization: Bearer <key>`` and a JSON body
``{"query", "freshness", "summary", "count"}``; the answer is Bing-compatible under ``data.webPages.value``.
Errors (the documented 异常码 table) are the HTTP status with ``{"code": "<status>", "message": "...",
"log_id": "..."}``. Use it as a context manager::

    with FakeBocha(mode="ok") as fake:
        BochaSearch(settings, base_url=fake.base_url).search("...")
        fake.requests  # [RecordedRequest(method="POST", path="/v1/web-search", headers={...}, json={...}, ...)]

Modes:

* ``ok`` — ``{"code": 200, ..., "data": {"webPages": {"value": [...]}}}`` with ``count`` of the 6 Chinese pages
  (or ``payload`` with ``status``)
* ``empty`` — HTTP 200, ``code`` 200, no ``webPages`` (what Bocha answers when nothing matched)
* ``unauthorized`` — HTTP 401, "Invalid API KEY"
* ``quota`` — HTTP 403, "You do not have enough money" (余额不足)
* ``rate_limited`` — HTTP 429, "You have reached the request limit"
* ``error`` — HTTP 500 with the documented error body
* ``slow`` — waits ``slow_seconds`` (or until the server stops) before answering like ``ok``
* ``malformed`` — HTTP 200, ``Content-Type: application/json`` but a truncated, non-JSON body
"""
from __future__ import annotations

from typing import Any

from .tavily_server import FakeJsonPostApi, RecordedRequest, Reply

__all__ = ["PAGES", "FakeBocha", "RecordedRequest", "ok_payload"]

LOG_ID = "d71841ad20095f61"

PAGES: list[dict[str, Any]] = [
    {"name": "中华人民共和国个人信息保护法_中国人大网",
     "url": "http://www.npc.gov.cn/npc/c30834/202108/a8c4e3672c74491a80b53a172bb753fe.shtml",
     "snippet": "为了保护个人信息权益，规范个人信息处理活动……",
     "summary": "为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，根据宪法，制定本法。",
     "siteName": "中国人大网"},
    {"name": "个人信息保护法第二十三条：向其他个人信息处理者提供个人信息",
     "url": "https://www.gov.cn/xinwen/2021-08/20/content_5632486.htm",
     "snippet": "个人信息处理者向其他个人信息处理者提供其处理的个人信息的……",
     "summary": "个人信息处理者向其他个人信息处理者提供其处理的个人信息的，应当向个人告知接收方的名称或者姓名、"
                "联系方式、处理目的、处理方式和个人信息的种类，并取得个人的单独同意。",
     "siteName": "中国政府网"},
    {"name": "出售公民个人信息违法吗？个人信息保护法解读",
     "url": "https://www.chinacourt.org/article/detail/2021/11/id/6380000.shtml",
     "snippet": "违反个人信息保护法规定处理个人信息的，由履行个人信息保护职责的部门责令改正……",
     "summary": "", "siteName": "中国法院网"},  # no summary: the snippet stands in
    {"name": "侵犯公民个人信息罪的认定标准",
     "url": "https://www.spp.gov.cn/spp/zdgz/202105/t20210520_519000.shtml",
     "snippet": "向他人出售或者提供公民个人信息，情节严重的……",
     "summary": "违反国家有关规定，向他人出售或者提供公民个人信息，情节严重的，处三年以下有期徒刑或者拘役。",
     "siteName": "最高人民检察院"},
    {"name": "个人信息保护法十问十答",
     "url": "https://www.cac.gov.cn/2021-08/20/c_1631050028355286.htm",
     "snippet": "处理敏感个人信息应当取得个人的单独同意……",
     "summary": "处理敏感个人信息应当取得个人的单独同意；法律、行政法规规定应当取得书面同意的，从其规定。",
     "siteName": "中国网信网"},
    {"name": "手机号被卖怎么办？律师解答",
     "url": "https://www.findlaw.cn/wenda/q_0000000.html",
     "snippet": "可以向网信部门投诉举报……",
     "summary": "可以向网信部门投诉举报，也可以向人民法院提起诉讼，要求停止侵害、赔偿损失。",
     "siteName": "找法网"},
]


def _page(i: int, page: dict[str, Any]) -> dict[str, Any]:
    """One ``webPages.value`` entry with every documented field."""
    return {"id": f"https://api.bochaai.com/v1/#WebPages.{i}", "displayUrl": page["url"],
            "siteIcon": f"https://th.bochaai.com/favicon?domain_url={page['url']}",
            "datePublished": "2021-08-20T08:00:00+08:00", "dateLastCrawled": "2021-08-20T08:00:00Z",
            "cachedPageUrl": None, "language": None, "isFamilyFriendly": None, "isNavigational": None, **page}


def _envelope(query: str, data_extra: dict[str, Any]) -> dict[str, Any]:
    data = {"_type": "SearchResponse", "queryContext": {"originalQuery": query}, **data_extra}
    return {"code": 200, "log_id": LOG_ID, "msg": None, "data": data}


def ok_payload(body: dict[str, Any], pages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What Bocha answers to ``body``: at most ``count`` pages."""
    limit = body.get("count") if isinstance(body.get("count"), int) else 10
    value = [_page(i, p) for i, p in enumerate(PAGES if pages is None else pages)][:limit]
    return _envelope(str(body.get("query", "")), {"webPages": {"webSearchUrl": "", "totalEstimatedMatches": 8912791,
                                                               "value": value, "someResultsRemoved": False}})


def empty_payload(body: dict[str, Any]) -> dict[str, Any]:
    return _envelope(str(body.get("query", "")), {"images": None, "videos": None})


def _error(code: int, message: str) -> Reply:
    return code, {"code": str(code), "message": message, "log_id": LOG_ID}


ERRORS: dict[str, Reply] = {
    "unauthorized": _error(401, "Invalid API KEY"),
    "quota": _error(403, "You do not have enough money"),
    "rate_limited": _error(429, "You have reached the request limit"),
    "error": _error(500, "Internal server error"),
    "malformed": (200, '{"code": 200, "log_id": "d71841ad", "data": {"_type": "SearchRes'),
}


class FakeBocha(FakeJsonPostApi):
    """Fake Bocha Web Search; see the module docstring."""

    SEARCH_PATH = "/v1/web-search"
    MODES = ("ok", "empty", "unauthorized", "quota", "rate_limited", "error", "slow", "malformed")

    def respond(self, mode: str, body: Any) -> Reply:
        if mode == "ok":
            return 200, ok_payload(body)
        if mode == "empty":
            return 200, empty_payload(body)
        return ERRORS.get(mode, _error(500, f"fake server: unknown mode {mode!r}"))
