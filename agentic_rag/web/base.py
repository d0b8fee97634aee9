"""The web provider protocol and what every provider shares.

A provider never raises: every outcome, good or bad, is a `WebOutcome` whose `status` the workflow branches on
and whose `message` is a short Chinese sentence for the user. The key is read at the point of use (`reveal`), is
never part of a message, and is redacted from anything logged (a server may echo it back).
"""
from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import httpx

from ..config import Settings, get_settings, reveal
from ..state import WebOutcome, WebResult

logger = logging.getLogger(__name__)

MESSAGES = {
    "no_key": "未配置 {env}，未进行{label}网络检索。",
    "bad_key": "{label}网络检索失败：{env} 无效或无权限。",
    "quota": "{label}网络检索额度已用尽，未获得网络结果。",
    "rate": "{label}网络检索请求过于频繁（已被限流），未获得网络结果。",
    "timeout": "{label}网络检索超时，未获得网络结果。",
    "empty": "{label}网络检索没有找到相关结果。",
    "error": "{label}网络检索失败：",
}
MAX_REASON_CHARS = 80


class WebProvider(Protocol):
    name: str

    def configured(self) -> bool:
        """True when the provider has a key (the `auto` choice takes the first configured one)."""

    def search(self, query: str, timeout: float | None = None) -> WebOutcome:
        """Search; blocking (the web stage runs it in a worker thread); never raises."""


def short(text: object, limit: int = MAX_REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ProviderBase:
    """Key handling, messages, result normalisation and the never-raise wrapper of every provider."""

    name = ""
    label = ""  # how messages name the provider ("Tavily " / "博查")
    key_field = ""  # the Settings field holding the key
    key_env = ""  # the variable users set
    title_field, snippet_fields, link_field = "title", ("snippet",), "link"
    default_base_url = ""

    def __init__(self, settings: Settings | None = None, base_url: str | None = None) -> None:
        """`base_url` (a fake server in tests) or the `<NAME>_BASE_URL` setting replaces the public host."""
        self.settings = settings if settings is not None else get_settings()
        configured = base_url or getattr(self.settings, f"{self.name}_base_url", None) or self.default_base_url
        self.base_url = configured.rstrip("/") or None

    @property
    def _api_key(self) -> str | None:
        return reveal(getattr(self.settings, self.key_field))

    def configured(self) -> bool:
        return self._api_key is not None

    @property
    def _limit(self) -> int:
        return max(1, int(self.settings.web_results))

    def message(self, kind: str) -> str:
        return MESSAGES[kind].format(env=self.key_env, label=self.label)

    def _redact(self, text: object) -> str:
        text, key = str(text), self._api_key
        return text.replace(key, "***") if key else text

    def _fail(self, status: str, message: str, query: str, log_reason: str) -> WebOutcome:
        logger.warning("web search (%s) %s for %r: %s", self.name, status, query, self._redact(log_reason))
        return WebOutcome(status=status, provider=self.name, message=message, query=query)

    def _outcome(self, items: list[Any], query: str) -> WebOutcome:
        results = self._normalise(items)
        if not results:
            logger.info("web search (%s) empty for %r", self.name, query)
            return WebOutcome(status="empty", provider=self.name, message=self.message("empty"), query=query)
        logger.info("web search (%s) ok for %r: %d results", self.name, query, len(results))
        return WebOutcome(status="ok", provider=self.name, results=results, query=query)

    def _normalise(self, items: object) -> list[WebResult]:
        results: list[WebResult] = []
        for item in items if isinstance(items, list) else []:
            link = str(item.get(self.link_field) or "").strip() if isinstance(item, dict) else ""
            if not link:
                continue
            title = " ".join(str(item.get(self.title_field) or "").split()) or link
            snippet = next((str(item[f]) for f in self.snippet_fields if item.get(f)), "")
            results.append(WebResult(title=title, link=link, snippet=" ".join(snippet.split()), source=self.name))
            if len(results) >= self._limit:
                break
        return results

    def search(self, query: str, timeout: float | None = None) -> WebOutcome:
        """Search the web for ``query``; returns an outcome for every failure instead of raising."""
        query = " ".join(str(query or "").split())
        try:
            if self._api_key is None:
                logger.info("web search skipped: %s is not set", self.key_env)
                return WebOutcome(status="no_key", provider=self.name, message=self.message("no_key"), query=query)
            if not query:
                return self._fail("error", f"{self.message('error')}检索词为空", query, "empty query")
            return self._search(self._api_key, query, timeout or self.settings.web_timeout_s)
        except Exception as exc:  # noqa: BLE001 - last line of defence: the workflow must not crash here
            logger.error("web search (%s) crashed for %r: %s", self.name, query, self._redact(repr(exc)))
            return WebOutcome(status="error", provider=self.name, message=f"{self.message('error')}内部错误",
                              query=query)

    def _search(self, api_key: str, query: str, timeout: float) -> WebOutcome:
        raise NotImplementedError


class BearerJsonProvider(ProviderBase):
    """A provider whose API is one JSON POST with the key in `Authorization: Bearer` (Tavily, 博查)."""

    path = ""

    def body(self, query: str) -> dict[str, Any]:
        raise NotImplementedError

    def _search(self, api_key: str, query: str, timeout: float) -> WebOutcome:
        url = f"{self.base_url}{self.path}"
        headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        try:  # a fresh client per call: searches run in worker threads, and nothing is worth sharing
            with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
                response = client.post(url, headers=headers, json=self.body(query))
        except httpx.TimeoutException as exc:
            return self._fail("timeout", self.message("timeout"), query, repr(exc))
        except httpx.ConnectError as exc:
            return self._fail("error", f"{self.message('error')}无法连接检索服务", query, repr(exc))
        except httpx.HTTPError as exc:
            return self._fail("error", f"{self.message('error')}{type(exc).__name__}", query, repr(exc))
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        return self._from_response(response.status_code, data, response.text, query)

    def _from_response(self, status: int, data: Any, text: str, query: str) -> WebOutcome:
        raise NotImplementedError

    def unparsable(self, text: str, query: str) -> WebOutcome:
        return self._fail("error", f"{self.message('error')}返回内容无法解析", query, f"non-JSON body: {short(text)!r}")

    def malformed(self, query: str, reason: str) -> WebOutcome:
        return self._fail("error", f"{self.message('error')}返回格式异常", query, reason)

    def http_error(self, code: int, detail: str, query: str, *, quota: bool, rate: bool, bad_key: bool) -> WebOutcome:
        reason = f"HTTP {code}: {detail or '(no detail)'}"
        for flag, status, kind in ((quota, "quota", "quota"), (rate, "quota", "rate"), (bad_key, "error", "bad_key")):
            if flag:
                return self._fail(status, self.message(kind), query, reason)
        shown = f"（{short(self._redact(detail), 40)}）" if detail else ""
        return self._fail("error", f"{self.message('error')}HTTP {code}{shown}", query, reason)
