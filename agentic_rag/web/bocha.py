"""Bocha (博查) Web Search, one of the web providers of the FAIL path (see `serpapi.py` for why providers never
raise). Bocha indexes the Chinese web, which suits questions about Chinese law.

Documented API (博查 AI 开放平台 "Web Search API" page, open.bochaai.com; copied in BochaAI/bocha-search-mcp):
``POST https://api.bochaai.com/v1/web-search`` with ``Authorization: Bearer {API KEY}`` and a JSON body
``{"query", "freshness", "summary", "count", "include", "exclude"}``. Success is Bing-compatible:
``{"code": 200, "log_id", "msg", "data": {"_type": "SearchResponse", "queryContext", "webPages":
{"totalEstimatedMatches", "value": [{"id", "name", "url", "displayUrl", "snippet", "summary", "siteName",
"siteIcon", "dateLastCrawled", …}]}, "images", …}}``; ``webPages`` is absent when nothing was found.
Errors (the page's 异常码 table) are the HTTP status with ``{"code": "403", "message": "...", "log_id"}`` —
``code`` is a string there, ``message`` not ``msg``: 400 missing parameter or missing key, 401 invalid key,
403 "You do not have enough money" (余额不足), 429 "You have reached the request limit", 500 anything else.
Both spellings are read here, and a 200 answer whose body ``code`` is not 200 is treated as that error.

The key travels only in the Authorization header, never in the URL or the body; messages are still redacted.
"""
from __future__ import annotations

from typing import Any

from ..state import WebOutcome
from .base import BearerJsonProvider

BALANCE_MARKERS = ("money", "余额", "balance", "欠费", "充值", "insufficient", "quota")
KEY_MARKERS = ("api key", "apikey", "api_key")


def body_code(data: object) -> int | None:
    """The body's ``code`` as an int (documented as 200 on success, as a string like "403" in error bodies)."""
    code = data.get("code") if isinstance(data, dict) else None
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def body_message(data: object) -> str:
    """The error text of a Bocha body: ``message`` in the documented error table, ``msg`` elsewhere."""
    if not isinstance(data, dict):
        return ""
    text = data.get("message") or data.get("msg") or ""
    return text if isinstance(text, str) else ""


class BochaSearch(BearerJsonProvider):
    """Web search through 博查 (Chinese web); :meth:`search` never raises. Uses BOCHA_API_KEY / BOCHA_BASE_URL."""

    name, label, key_field, key_env = "bocha", "博查", "bocha_api_key", "BOCHA_API_KEY"
    title_field, link_field, snippet_fields = "name", "url", ("summary", "snippet")
    path, default_base_url = "/v1/web-search", "https://api.bochaai.com"


    def message(self, kind: str) -> str:
        text = super().message(kind)
        return text.replace("额度已用尽", "额度已用尽（账户余额不足）") if kind == "quota" else text

    def body(self, query: str) -> dict[str, Any]:
        """``noLimit`` is what Bocha recommends (it rewrites time ranges itself); ``summary`` asks for the longer
        text summary, a better web snippet than ``snippet``."""
        return {"query": query, "freshness": "noLimit", "summary": True, "count": self._limit}

    def _from_response(self, status: int, data: Any, text: str, query: str) -> WebOutcome:
        code = body_code(data)
        if status != 200 or code not in (None, 200):
            # The body's code is the finer one when it names an error; else the HTTP status is all there is.
            code = code if code not in (None, 200) else status
            message = body_message(data)
            low = message.lower()
            return self.http_error(code, message, query, quota=any(m in low for m in BALANCE_MARKERS),
                                   rate=code == 429, bad_key=code in (401, 403) or any(m in low for m in KEY_MARKERS))
        if not isinstance(data, dict):
            return self.unparsable(text, query)
        payload = data.get("data")
        if not isinstance(payload, dict):
            return self.malformed(query, f"no 'data' object in keys {sorted(data)[:10]}")
        pages = payload.get("webPages")
        items = pages.get("value") if isinstance(pages, dict) else pages
        if items is None:  # Bocha leaves webPages out when nothing matched
            return self._outcome([], query)
        if not isinstance(pages, dict) or not isinstance(items, list):
            return self.malformed(query, f"webPages is {type(pages).__name__}, value is {type(items).__name__}")
        return self._outcome(items, query)
