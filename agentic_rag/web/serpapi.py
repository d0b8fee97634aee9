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

from typing import Any

import requests
import serpapi

from ..state import WebOutcome
from .base import ProviderBase, short

QUOTA_MARKERS = ("run out of searches", "out of searches", "plan searches", "searches per hour")
EMPTY_MARKERS = ("hasn't returned any results", "has not returned any results", "no results")
KEY_MARKERS = ("invalid api key", "api key", "api_key")


class SerpApiSearch(ProviderBase):
    """Google Light search through SerpApi; :meth:`search` never raises. Uses SERPAPI_API_KEY / SERPAPI_BASE_URL."""

    name, label, key_field, key_env = "serpapi", "", "serpapi_api_key", "SERPAPI_API_KEY"
    ENGINE = "google_light"


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

    def _from_error_text(self, error: str, query: str, http_status: int | None) -> WebOutcome:
        """Classify SerpApi's ``{"error": "..."}`` text (HTTP error bodies and 200 bodies alike)."""
        low = error.lower()
        where = f"HTTP {http_status}: " if http_status else ""
        if any(m in low for m in QUOTA_MARKERS):
            return self._fail("quota", self.message("quota"), query, where + error)
        if any(m in low for m in EMPTY_MARKERS):
            return self._outcome([], query)
        if any(m in low for m in KEY_MARKERS):
            return self._fail("error", self.message("bad_key"), query, where + error)
        reason = f"HTTP {http_status}" if http_status else "服务返回错误"
        return self._fail("error", f"{self.message('error')}{reason}（{short(self._redact(error), 40)}）", query,
                          where + error)

    def _search(self, api_key: str, query: str, timeout: float) -> WebOutcome:
        client = self._make_client(api_key, timeout)
        try:
            data = client.search(self.params(query))
        except (serpapi.HTTPError, serpapi.TimeoutError, serpapi.HTTPConnectionError,
                requests.exceptions.RequestException) as exc:
            return self._from_exception(exc, query)
        finally:
            client.session.close()
        if not hasattr(data, "get"):  # the client returns the raw text when the body is not JSON
            return self._fail("error", f"{self.message('error')}返回内容无法解析", query,
                              f"non-JSON body: {short(str(data))!r}")
        error = data.get("error")
        if isinstance(error, str) and error.strip():
            return self._from_error_text(error, query, None)
        return self._outcome(data.get("organic_results"), query)

    def _from_exception(self, exc: Exception, query: str) -> WebOutcome:
        # a ConnectTimeout is reported as a connection error, with the timeout as its context
        timed_out = isinstance(exc, (serpapi.TimeoutError, requests.exceptions.Timeout)) or \
            isinstance(exc.__context__, requests.exceptions.Timeout)
        if timed_out:
            return self._fail("timeout", self.message("timeout"), query, repr(exc))
        if isinstance(exc, serpapi.HTTPConnectionError):
            return self._fail("error", f"{self.message('error')}无法连接检索服务", query, repr(exc))
        code = getattr(exc, "status_code", None)
        error = getattr(exc, "error", None)
        if code in (401, 403):
            return self._fail("error", self.message("bad_key"), query, f"HTTP {code}: {error or exc}")
        if code == 429:
            return self._fail("quota", self.message("quota"), query, f"HTTP {code}: {error or exc}")
        if isinstance(error, str) and error.strip():
            return self._from_error_text(error, query, code)
        detail = f"HTTP {code}" if code else type(exc).__name__
        return self._fail("error", f"{self.message('error')}{detail}", query, repr(exc))
