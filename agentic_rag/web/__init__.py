"""Web search providers of the FAIL path, behind one protocol (`base.WebProvider`) and one registry.

`WEB_SEARCH_PROVIDER` = auto | serpapi | tavily | bocha | none. `auto` takes the first provider in `PROVIDERS`
order that has a key; with none configured the web step is skipped and said so.
"""
from __future__ import annotations

from collections.abc import Callable

from ..config import Settings
from .base import WebProvider


def _serpapi(settings: Settings) -> WebProvider:
    from .serpapi import SerpApiSearch

    return SerpApiSearch(settings)


def _tavily(settings: Settings) -> WebProvider:
    from .tavily import TavilySearch

    return TavilySearch(settings)


def _bocha(settings: Settings) -> WebProvider:
    from .bocha import BochaSearch

    return BochaSearch(settings)


# name → factory; the order is the `auto` preference.
PROVIDERS: dict[str, Callable[[Settings], WebProvider]] = {"serpapi": _serpapi, "tavily": _tavily, "bocha": _bocha}


def make_provider(settings: Settings) -> WebProvider | None:
    """The configured provider, None when web search is off; `auto` → the first one with a key."""
    choice = settings.web_search_provider
    if choice == "none":
        return None
    if choice != "auto":
        return PROVIDERS[choice](settings)
    for factory in PROVIDERS.values():
        provider = factory(settings)
        if provider.configured():
            return provider
    return None
