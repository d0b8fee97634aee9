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

from typing import Any

from ..state import WebOutcome
from .base import BearerJsonProvider

QUOTA_STATUSES = (432, 433)  # plan limit / pay-as-you-go limit: the account, not the request, is the problem
QUOTA_MARKERS = ("usage limit", "plan's set usage", "pay-as-you-go", "credits", "exceeds your")


def error_detail(data: object) -> str:
    """The error text of a Tavily error body: ``{"detail": {"error": "..."}}`` (or a plain ``detail`` string)."""
    if not isinstance(data, dict):
        return ""
    detail = data.get("detail", data.get("error", ""))
    if isinstance(detail, dict):
        detail = detail.get("error") or detail.get("message") or ""
    return detail if isinstance(detail, str) else ""


class TavilySearch(BearerJsonProvider):
    """Web search through Tavily; :meth:`search` never raises. Uses TAVILY_API_KEY / TAVILY_BASE_URL."""

    name, label, key_field, key_env = "tavily", "Tavily ", "tavily_api_key", "TAVILY_API_KEY"
    link_field, snippet_fields = "url", ("content",)
    path, default_base_url = "/search", "https://api.tavily.com"


    def body(self, query: str) -> dict[str, Any]:
        """The JSON body sent for ``query``; the key is deliberately not part of it (header only)."""
        return {"query": query, "max_results": self._limit, "search_depth": "basic", "include_answer": False,
                "include_raw_content": False, "include_images": False}

    def _from_response(self, status: int, data: Any, text: str, query: str) -> WebOutcome:
        if status != 200:
            detail = error_detail(data)
            return self.http_error(status, detail, query,
                                   quota=status in QUOTA_STATUSES or any(m in detail.lower() for m in QUOTA_MARKERS),
                                   rate=status == 429, bad_key=status in (401, 403))
        if not isinstance(data, dict):
            return self.unparsable(text, query)
        if not isinstance(data.get("results"), list):
            return self.malformed(query, f"no 'results' list in keys {sorted(data)[:10]}")
        return self._outcome(data["results"], query)
