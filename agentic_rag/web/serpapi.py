"""SerpApi (Google Light engine), one of the web providers of the FAIL path.

Why this module exists: when the local legal knowledge base cannot answer a question well enough (the
evaluator's FAIL path), the agent asks the web instead. That path is optional and unreliable by nature —
no API key on most machines, no network on some, exhausted quotas, slow or failing upstream — so
:meth:`SerpApiSearch.search` **never raises**. Every outcome, good or bad, is a :class:`WebOutcome`
whose ``status`` the agent can branch on and whose ``message`` is a short Chinese sentence it can show the
user as is. The workflow must degrade to "answered from the local corpus only", never crash.

Requests go through the official ``serpapi`` client (``serpapi.Client``, version 1.2.0), which sends
``GET {BASE_DOMAIN}/search?...&api_key=...`` with ``requests``. Tests point it at a local fake server via the
``base_url`` argument (see :meth:`SerpApiSearch._make_client`).

SerpApi takes its key only as the ``api_key`` query parameter (no header form is documented), so URLs and
exception texts from ``requests`` contain it: they are redacted here before logging, never copied into
user-facing messages, and the process-wide log filter (`safety.redact`) masks it in urllib3's DEBUG lines too.
"""
from __future__ import annotations

import logging
from typing import Any

import requests
import serpapi

from ..config import Settings, get_settings, reveal
from ..state import WebOutcome, WebResult

logger = logging.getLogger(__name__)

MSG_NO_KEY = "未配置 SERPAPI_API_KEY，未进行网络检索。"
MSG_TIMEOUT = "网络检索超时，未获得网络结果。"
MSG_QUOTA = "网络检索额度已用尽，未获得网络结果。"
MSG_EMPTY = "网络检索没有找到相关结果。"
MSG_BAD_KEY = "网络检索失败：SERPAPI_API_KEY 无效或无权限。"
MSG_ERROR_PREFIX = "网络检索失败："

_QUOTA_MARKERS = ("run out of searches", "out of searches", "plan searches", "searches per hour")
_EMPTY_MARKERS = ("hasn't returned any results", "has not returned any results", "no results")
_KEY_MARKERS = ("invalid api key", "api key", "api_key")
_MAX_REASON_CHARS = 80


def _short(text: str, limit: int = _MAX_REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SerpApiSearch:
    """Google Light search through SerpApi; :meth:`search` never raises.

    :param settings: uses ``serpapi_api_key``, ``serpapi_timeout_s`` and ``web_results``.
    :param base_url: scheme + host (+ port) replacing ``https://serpapi.com``, e.g. a local fake server in
        tests (``http://127.0.0.1:PORT``). ``None`` takes SERPAPI_BASE_URL from the settings, and when that is
        unset too the client's default host.
    """

    ENGINE = "google_light"

    def __init__(self, settings: Settings | None = None, base_url: str | None = None) -> None:
        self.settings = settings if settings is not None else get_settings()
        base_url = base_url or self.settings.serpapi_base_url
        self.base_url = base_url.rstrip("/") if base_url else None

    # ------------------------------------------------------------------ helpers
    name = "serpapi"

    @property
    def _api_key(self) -> str | None:
        return reveal(self.settings.serpapi_api_key)

    def configured(self) -> bool:
        return self._api_key is not None

    @property
    def _limit(self) -> int:
        return max(1, int(self.settings.web_results))

    def _redact(self, text: object) -> str:
        text = str(text)
        key = self._api_key
        return text.replace(key, "***") if key else text

    def _make_client(self, api_key: str, timeout: float) -> serpapi.Client:
        """Build a fresh client per call (its ``requests.Session`` is not shared between threads).

        Pointing it elsewhere: ``serpapi.Client`` has no host parameter, but its base class
        ``serpapi.http.HTTPClient`` builds every URL as ``self.BASE_DOMAIN + path`` from the class attribute
        ``BASE_DOMAIN = "https://serpapi.com"``. Setting ``BASE_DOMAIN`` on *this instance* shadows the class
        attribute for this client only — no monkeypatching of the library or of ``requests``, nothing global.
        """
        client = serpapi.Client(api_key=api_key, timeout=timeout)
        if self.base_url:
            client.BASE_DOMAIN = self.base_url
        return client

    def params(self, query: str) -> dict[str, Any]:
        """The SerpApi parameters sent for ``query`` (the client adds ``api_key``)."""
        return {"engine": self.ENGINE, "q": query, "location": "China", "google_domain": "google.com",
                "hl": "zh-cn", "gl": "cn", "num": self._limit}

    def _normalise(self, organic: object) -> list[WebResult]:
        results: list[WebResult] = []
        if not isinstance(organic, list):
            return results
        for item in organic:
            if not isinstance(item, dict):
                continue
            link = str(item.get("link") or "").strip()
            if not link:
                continue
            title = " ".join(str(item.get("title") or "").split()) or link
            snippet = " ".join(str(item.get("snippet") or "").split())
            results.append(WebResult(title=title, link=link, snippet=snippet, source=self.name))
            if len(results) >= self._limit:
                break
        return results

    def _fail(self, status: str, message: str, query: str, log_reason: str) -> WebOutcome:
        logger.warning("web search %s for %r: %s", status, query, self._redact(log_reason))
        return WebOutcome(status=status, provider=self.name, message=message, query=query)

    def _from_error_text(self, error: str, query: str, http_status: int | None) -> WebOutcome:
        """Classify SerpApi's ``{"error": "..."}`` text (HTTP error bodies and 200 bodies alike)."""
        low = error.lower()
        where = f"HTTP {http_status}: " if http_status else ""
        if any(m in low for m in _QUOTA_MARKERS):
            return self._fail("quota", MSG_QUOTA, query, where + error)
        if any(m in low for m in _EMPTY_MARKERS):
            logger.info("web search empty for %r: %s", query, self._redact(error))
            return WebOutcome(status="empty", provider=self.name, message=MSG_EMPTY, query=query)
        if any(m in low for m in _KEY_MARKERS):
            return self._fail("error", MSG_BAD_KEY, query, where + error)
        reason = f"HTTP {http_status}" if http_status else "服务返回错误"
        return self._fail("error", f"{MSG_ERROR_PREFIX}{reason}（{_short(self._redact(error), 40)}）", query,
                          where + error)

    # ------------------------------------------------------------------ public
    def search(self, query: str, timeout: float | None = None) -> WebOutcome:
        """Search the web for ``query``; returns an outcome for every failure instead of raising."""
        try:
            return self._search(query, timeout or self.settings.web_timeout_s)
        except Exception as exc:  # noqa: BLE001 — last line of defence: the workflow must not crash here
            logger.exception("web search crashed for %r: %s", query, self._redact(exc))
            return WebOutcome(status="error", provider=self.name, message=f"{MSG_ERROR_PREFIX}内部错误",
                              query=str(query))

    def _search(self, query: str, timeout: float) -> WebOutcome:
        query = " ".join(str(query or "").split())
        api_key = self._api_key
        if api_key is None:
            logger.info("web search skipped: SERPAPI_API_KEY is not set")
            return WebOutcome(status="no_key", provider=self.name, message=MSG_NO_KEY, query=query)
        if not query:
            return self._fail("error", f"{MSG_ERROR_PREFIX}检索词为空", query, "empty query")

        client = self._make_client(api_key, timeout)
        try:
            data = client.search(self.params(query))
        except serpapi.TimeoutError as exc:
            return self._fail("timeout", MSG_TIMEOUT, query, repr(exc))
        except serpapi.HTTPConnectionError as exc:
            # requests' ConnectTimeout is also a ConnectionError, so the client reports it as a connection error.
            if isinstance(exc.__context__, requests.exceptions.Timeout):
                return self._fail("timeout", MSG_TIMEOUT, query, repr(exc))
            return self._fail("error", f"{MSG_ERROR_PREFIX}无法连接检索服务", query, repr(exc))
        except serpapi.HTTPError as exc:
            code = getattr(exc, "status_code", None)
            error = getattr(exc, "error", None)
            if code in (401, 403):
                return self._fail("error", MSG_BAD_KEY, query, f"HTTP {code}: {error or exc}")
            if code == 429:
                return self._fail("quota", MSG_QUOTA, query, f"HTTP {code}: {error or exc}")
            if isinstance(error, str) and error.strip():
                return self._from_error_text(error, query, code)
            return self._fail("error", f"{MSG_ERROR_PREFIX}HTTP {code}", query, repr(exc))
        except requests.exceptions.Timeout as exc:
            return self._fail("timeout", MSG_TIMEOUT, query, repr(exc))
        except requests.exceptions.RequestException as exc:
            return self._fail("error", f"{MSG_ERROR_PREFIX}{type(exc).__name__}", query, repr(exc))
        finally:
            client.session.close()

        # The client returns the raw text when the body is not JSON.
        if not hasattr(data, "get"):
            return self._fail("error", f"{MSG_ERROR_PREFIX}返回内容无法解析", query,
                              f"non-JSON body: {_short(str(data))!r}")
        error = data.get("error")
        if isinstance(error, str) and error.strip():
            return self._from_error_text(error, query, None)

        results = self._normalise(data.get("organic_results"))
        if not results:
            logger.info("web search empty for %r", query)
            return WebOutcome(status="empty", provider=self.name, message=MSG_EMPTY, query=query)
        logger.info("web search ok for %r: %d results", query, len(results))
        return WebOutcome(status="ok", provider=self.name, results=results, query=query)
