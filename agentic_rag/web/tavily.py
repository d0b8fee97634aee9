"""Tavily Search, one of the web providers of the FAIL path (see `serpapi.py` for why providers never raise).

Documented API (docs.tavily.com/api-reference/endpoint/search, the official ``tavily-python`` client):
``POST https://api.tavily.com/search`` with ``Authorization: Bearer tvly-…`` and a JSON body
``{"query", "max_results", "search_depth", "include_answer", "include_raw_content", "include_images", …}``;
the answer is ``{"query", "answer", "images", "results": [{"title", "url", "content", "score", "raw_content"}],
"response_time", …}``. Errors are HTTP statuses with ``{"detail": {"error": "..."}}``: 400 bad request,
401 missing/invalid key, 403 forbidden, 429 rate limit, 432 plan limit exceeded, 433 pay-as-you-go limit
exceeded, 5xx server errors (help.tavily.com "Errors Code").

The key travels only in the Authorization header — never in the URL or the body — so neither request URLs nor
httpx's exception texts can carry it; messages are still redacted, in case a server echoes it back.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from ..config import Settings, get_settings, reveal
from ..state import WebOutcome, WebResult

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.tavily.com"
SEARCH_PATH = "/search"

MSG_NO_KEY = "未配置 TAVILY_API_KEY，未进行 Tavily 网络检索。"
MSG_BAD_KEY = "Tavily 网络检索失败：TAVILY_API_KEY 无效或无权限。"
MSG_QUOTA = "Tavily 网络检索额度已用尽，未获得网络结果。"
MSG_RATE = "Tavily 网络检索请求过于频繁（已被限流），未获得网络结果。"
MSG_TIMEOUT = "Tavily 网络检索超时，未获得网络结果。"
MSG_EMPTY = "Tavily 网络检索没有找到相关结果。"
MSG_ERROR_PREFIX = "Tavily 网络检索失败："

_QUOTA_STATUSES = (432, 433)  # plan limit / pay-as-you-go limit: the account, not the request, is the problem
_QUOTA_MARKERS = ("usage limit", "plan's set usage", "pay-as-you-go", "credits", "exceeds your")
_MAX_REASON_CHARS = 80


def _short(text: str, limit: int = _MAX_REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_detail(data: object) -> str:
    """The error text of a Tavily error body: ``{"detail": {"error": "..."}}`` (or a plain ``detail`` string)."""
    if not isinstance(data, dict):
        return ""
    detail = data.get("detail", data.get("error", ""))
    if isinstance(detail, dict):
        detail = detail.get("error") or detail.get("message") or ""
    return detail if isinstance(detail, str) else ""


class TavilySearch:
    """Web search through Tavily; :meth:`search` never raises.

    :param settings: uses ``tavily_api_key``, ``tavily_base_url``, ``web_timeout_s`` and ``web_results``.
    :param base_url: scheme + host (+ port) replacing ``https://api.tavily.com`` (a fake server in tests);
        ``None`` takes TAVILY_BASE_URL, and the public host when that is unset too.
    """

    name = "tavily"

    def __init__(self, settings: Settings | None = None, base_url: str | None = None) -> None:
        self.settings = settings if settings is not None else get_settings()
        self.base_url = (base_url or self.settings.tavily_base_url or DEFAULT_BASE_URL).rstrip("/")

    # ------------------------------------------------------------------ helpers
    @property
    def _api_key(self) -> str | None:
        return reveal(self.settings.tavily_api_key)

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
        """The JSON body sent for ``query``; the key is deliberately not part of it (header only)."""
        return {"query": query, "max_results": self._limit, "search_depth": "basic", "include_answer": False,
                "include_raw_content": False, "include_images": False}

    def _normalise(self, items: list[Any]) -> list[WebResult]:
        results: list[WebResult] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            link = str(item.get("url") or "").strip()
            if not link:
                continue
            title = " ".join(str(item.get("title") or "").split()) or link
            snippet = " ".join(str(item.get("content") or "").split())
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
            logger.info("web search skipped: TAVILY_API_KEY is not set")
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
        if response.status_code != 200:
            return self._from_http_error(response.status_code, _error_detail(data), query)
        if not isinstance(data, dict):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回内容无法解析", query,
                              f"non-JSON body: {_short(response.text)!r}")
        items = data.get("results")
        if not isinstance(items, list):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回格式异常", query,
                              f"no 'results' list in keys {sorted(data)[:10]}")
        results = self._normalise(items)
        if not results:
            return self._empty(query)
        logger.info("web search (%s) ok for %r: %d results", self.name, query, len(results))
        return WebOutcome(status="ok", provider=self.name, results=results, query=query)

    def _from_http_error(self, code: int, detail: str, query: str) -> WebOutcome:
        """Map Tavily's documented error statuses (see the module docstring) to outcomes."""
        reason = f"HTTP {code}: {detail or '(no detail)'}"
        if code in _QUOTA_STATUSES or any(m in detail.lower() for m in _QUOTA_MARKERS):
            return self._fail("quota", MSG_QUOTA, query, reason)
        if code == 429:
            return self._fail("quota", MSG_RATE, query, reason)
        if code in (401, 403):
            return self._fail("error", MSG_BAD_KEY, query, reason)
        shown = f"（{_short(self._redact(detail), 40)}）" if detail else ""
        return self._fail("error", f"{MSG_ERROR_PREFIX}HTTP {code}{shown}", query, reason)
