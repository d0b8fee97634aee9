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

import json
import logging
from typing import Any

import httpx

from ..config import Settings, get_settings, reveal
from ..state import WebOutcome, WebResult

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.bochaai.com"
SEARCH_PATH = "/v1/web-search"

MSG_NO_KEY = "未配置 BOCHA_API_KEY，未进行博查网络检索。"
MSG_BAD_KEY = "博查网络检索失败：BOCHA_API_KEY 无效或无权限。"
MSG_QUOTA = "博查网络检索额度已用尽（账户余额不足），未获得网络结果。"
MSG_RATE = "博查网络检索请求过于频繁（已被限流），未获得网络结果。"
MSG_TIMEOUT = "博查网络检索超时，未获得网络结果。"
MSG_EMPTY = "博查网络检索没有找到相关结果。"
MSG_ERROR_PREFIX = "博查网络检索失败："

_BALANCE_MARKERS = ("money", "余额", "balance", "欠费", "充值", "insufficient", "quota")
_KEY_MARKERS = ("api key", "apikey", "api_key")
_MAX_REASON_CHARS = 80


def _short(text: str, limit: int = _MAX_REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _body_code(data: object) -> int | None:
    """The body's ``code`` as an int (documented as 200 on success, as a string like "403" in error bodies)."""
    code = data.get("code") if isinstance(data, dict) else None
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def _body_message(data: object) -> str:
    if not isinstance(data, dict):
        return ""
    text = data.get("message") or data.get("msg") or ""
    return text if isinstance(text, str) else ""


class BochaSearch:
    """Web search through Bocha (博查); :meth:`search` never raises.

    :param settings: uses ``bocha_api_key``, ``bocha_base_url``, ``web_timeout_s`` and ``web_results``.
    :param base_url: scheme + host (+ port) replacing ``https://api.bochaai.com`` (a fake server in tests);
        ``None`` takes BOCHA_BASE_URL, and the public host when that is unset too.
    """

    name = "bocha"

    def __init__(self, settings: Settings | None = None, base_url: str | None = None) -> None:
        self.settings = settings if settings is not None else get_settings()
        self.base_url = (base_url or self.settings.bocha_base_url or DEFAULT_BASE_URL).rstrip("/")

    # ------------------------------------------------------------------ helpers
    @property
    def _api_key(self) -> str | None:
        return reveal(self.settings.bocha_api_key)

    def configured(self) -> bool:
        return self._api_key is not None

    @property
    def _limit(self) -> int:
        return max(1, int(self.settings.web_results))

    def _redact(self, text: object) -> str:
        text = str(text)
        key = self._api_key
        return text.replace(key, "***") if key else text

    def body(self, query: str) -> dict[str, Any]:
        """The JSON body sent for ``query``; the key is deliberately not part of it (header only).

        ``noLimit`` is what Bocha recommends: it rewrites time ranges itself, and a fixed range often finds nothing.
        ``summary`` asks for the longer text summary, which is a better web snippet than ``snippet``.
        """
        return {"query": query, "freshness": "noLimit", "summary": True, "count": self._limit}

    def _normalise(self, items: list[Any]) -> list[WebResult]:
        results: list[WebResult] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            link = str(item.get("url") or "").strip()
            if not link:
                continue
            title = " ".join(str(item.get("name") or "").split()) or link
            snippet = " ".join(str(item.get("summary") or item.get("snippet") or "").split())
            results.append(WebResult(title=title, link=link, snippet=snippet, source=self.name))
            if len(results) >= self._limit:
                break
        return results

    def _fail(self, status: str, message: str, query: str, log_reason: str) -> WebOutcome:
        logger.warning("web search (%s) %s for %r: %s", self.name, status, query, self._redact(log_reason))
        return WebOutcome(status=status, provider=self.name, message=message, query=query)

    def _empty(self, query: str) -> WebOutcome:
        logger.info("web search (%s) empty for %r", self.name, query)
        return WebOutcome(status="empty", provider=self.name, message=MSG_EMPTY, query=query)

    # ------------------------------------------------------------------ public
    def search(self, query: str, timeout: float | None = None) -> WebOutcome:
        """Search the web for ``query``; returns an outcome for every failure instead of raising."""
        try:
            return self._search(query, timeout or self.settings.web_timeout_s)
        except Exception as exc:  # noqa: BLE001 — last line of defence: the workflow must not crash here
            logger.error("web search (%s) crashed for %r: %s", self.name, query, self._redact(repr(exc)))
            return WebOutcome(status="error", provider=self.name, message=f"{MSG_ERROR_PREFIX}内部错误",
                              query=str(query))

    def _search(self, query: str, timeout: float) -> WebOutcome:
        query = " ".join(str(query or "").split())
        api_key = self._api_key
        if api_key is None:
            logger.info("web search skipped: BOCHA_API_KEY is not set")
            return WebOutcome(status="no_key", provider=self.name, message=MSG_NO_KEY, query=query)
        if not query:
            return self._fail("error", f"{MSG_ERROR_PREFIX}检索词为空", query, "empty query")
        try:
            response = self._post(api_key, query, timeout)
        except httpx.TimeoutException as exc:
            return self._fail("timeout", MSG_TIMEOUT, query, repr(exc))
        except httpx.ConnectError as exc:
            return self._fail("error", f"{MSG_ERROR_PREFIX}无法连接检索服务", query, repr(exc))
        except httpx.HTTPError as exc:
            return self._fail("error", f"{MSG_ERROR_PREFIX}{type(exc).__name__}", query, repr(exc))
        return self._from_response(response, query)

    def _post(self, api_key: str, query: str, timeout: float) -> httpx.Response:
        # A fresh client per call: the web stage runs searches in worker threads, and nothing is worth sharing.
        headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
            return client.post(self.base_url + SEARCH_PATH, headers=headers, json=self.body(query))

    def _from_response(self, response: httpx.Response, query: str) -> WebOutcome:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        code = _body_code(data)
        if response.status_code != 200 or code not in (None, 200):
            # The body's code is the finer one when it names an error; else the HTTP status is all there is.
            return self._from_error(code if code not in (None, 200) else response.status_code,
                                    _body_message(data), query)
        if not isinstance(data, dict):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回内容无法解析", query,
                              f"non-JSON body: {_short(response.text)!r}")
        return self._from_payload(data, query)

    def _from_payload(self, data: dict[str, Any], query: str) -> WebOutcome:
        payload = data.get("data")
        if not isinstance(payload, dict):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回格式异常", query,
                              f"no 'data' object in keys {sorted(data)[:10]}")
        pages = payload.get("webPages")
        items = pages.get("value") if isinstance(pages, dict) else pages
        if items is None:  # Bocha leaves webPages out when nothing matched
            return self._empty(query)
        if not isinstance(pages, dict) or not isinstance(items, list):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回格式异常", query,
                              f"webPages is {type(pages).__name__}, value is {type(items).__name__}")
        results = self._normalise(items)
        if not results:
            return self._empty(query)
        logger.info("web search (%s) ok for %r: %d results", self.name, query, len(results))
        return WebOutcome(status="ok", provider=self.name, results=results, query=query)

    def _from_error(self, code: int, message: str, query: str) -> WebOutcome:
        """Map Bocha's documented error codes (see the module docstring) to outcomes."""
        low = message.lower()
        reason = f"code {code}: {message or '(no message)'}"
        if any(m in low for m in _BALANCE_MARKERS):
            return self._fail("quota", MSG_QUOTA, query, reason)
        if code == 429:
            return self._fail("quota", MSG_RATE, query, reason)
        if code in (401, 403) or any(m in low for m in _KEY_MARKERS):
            return self._fail("error", MSG_BAD_KEY, query, reason)
        shown = f"（{_short(self._redact(message), 40)}）" if message else ""
        return self._fail("error", f"{MSG_ERROR_PREFIX}HTTP {code}{shown}", query, reason)
