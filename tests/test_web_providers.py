"""TavilySearch and BochaSearch against local fakes of their APIs (no network), and the provider registry."""
from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from agentic_rag.config import Settings
from agentic_rag.state import WebOutcome, WebResult
from agentic_rag.web import PROVIDERS, make_provider
from agentic_rag.web.bocha import BochaSearch
from agentic_rag.web.tavily import TavilySearch

try:
    from tests.fakes.bocha_server import PAGES, FakeBocha
    from tests.fakes.bocha_server import ok_payload as bocha_payload
    from tests.fakes.tavily_server import RESULTS, FakeJsonPostApi, FakeTavily
except ImportError:  # `tests/` without __init__.py, run by the bare `pytest` script
    from fakes.bocha_server import PAGES, FakeBocha
    from fakes.bocha_server import ok_payload as bocha_payload
    from fakes.tavily_server import RESULTS, FakeJsonPostApi, FakeTavily

KEY = "tvly-test-key-0123456789"
QUERY = "公司把我的手机号卖给别人合法吗"
CJK = re.compile(r"[\u4e00-\u9fff]")
_ENV = ("WEB_SEARCH_PROVIDER", "SERPAPI_API_KEY", "TAVILY_API_KEY", "BOCHA_API_KEY", "SERPAPI_BASE_URL",
        "TAVILY_BASE_URL", "BOCHA_BASE_URL", "WEB_TIMEOUT_S", "SERPAPI_TIMEOUT_S", "WEB_RESULTS")


@dataclass(frozen=True)
class Case:
    name: str
    cls: type
    fake: type[FakeJsonPostApi]
    key_var: str
    path: str
    body: Callable[[int], dict[str, Any]]  # the documented request body for web_results=n
    expected: list[tuple[str, str, str]]  # (title, link, snippet) of the fake's results, in order

    def settings(self, key: str | None = KEY, **kw: Any) -> Settings:
        kw.setdefault("web_timeout_s", 5.0)
        return Settings(_env_file=None, **{f"{self.name}_api_key": key}, **kw)

    def provider(self, fake: FakeJsonPostApi | None, key: str | None = KEY, **kw: Any):
        return self.cls(self.settings(key, **kw), base_url=fake.base_url if fake else None)


TAVILY = Case(
    "tavily", TavilySearch, FakeTavily, "TAVILY_API_KEY", "/search",
    lambda n: {"query": QUERY, "max_results": n, "search_depth": "basic", "include_answer": False,
               "include_raw_content": False, "include_images": False},
    [(r["title"], r["url"], r["content"]) for r in RESULTS])
BOCHA = Case(
    "bocha", BochaSearch, FakeBocha, "BOCHA_API_KEY", "/v1/web-search",
    lambda n: {"query": QUERY, "freshness": "noLimit", "summary": True, "count": n},
    [(p["name"], p["url"], p["summary"] or p["snippet"]) for p in PAGES])
CASES = pytest.mark.parametrize("case", [TAVILY, BOCHA], ids=lambda c: c.name)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy may intercept 127.0.0.1, and no developer key or provider choice may leak into Settings."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", *_ENV):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def run(case: Case, mode: str = "ok", timeout: float | None = None, **kw: Any) -> tuple[WebOutcome, Any]:
    with case.fake(mode=mode) as fake:
        outcome = case.provider(fake, **kw).search(QUERY, timeout=timeout)
    return outcome, fake


def assert_failure(outcome: WebOutcome, status: str, case: Case) -> None:
    assert outcome.status == status, outcome
    assert outcome.provider == case.name
    assert outcome.results == []
    assert outcome.message and CJK.search(outcome.message), outcome.message
    assert KEY not in outcome.message
    assert outcome.query == QUERY


# ---------------------------------------------------------------------- the request
@CASES
def test_request_is_the_documented_shape(case: Case) -> None:
    outcome, fake = run(case, web_results=3)
    assert outcome.status == "ok"
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert (req.method, req.path, req.query) == ("POST", case.path, "")
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"].startswith("application/json")
    assert req.json == case.body(3)
    # the key travels in the Authorization header only
    assert KEY not in req.path + req.query + req.raw_body
    assert [name for name, value in req.headers.items() if KEY in value] == ["authorization"]


@CASES
def test_base_url_from_settings(case: Case) -> None:
    with case.fake() as fake:
        provider = case.cls(case.settings(**{f"{case.name}_base_url": fake.base_url + "/"}))
        outcome = provider.search(QUERY)
    assert outcome.status == "ok"
    assert fake.requests[0].path == case.path


@pytest.mark.parametrize(("cls", "host"), [(TavilySearch, "https://api.tavily.com"),
                                           (BochaSearch, "https://api.bochaai.com")])
def test_default_base_url(cls: type, host: str) -> None:
    assert cls(Settings(_env_file=None)).base_url == host


# ---------------------------------------------------------------------- results
@CASES
def test_ok_results_are_normalised(case: Case) -> None:
    outcome, _ = run(case)
    assert outcome.status == "ok" and outcome.provider == case.name and outcome.query == QUERY
    assert outcome.message == ""
    assert all(isinstance(r, WebResult) for r in outcome.results)
    assert [(r.title, r.link, r.snippet) for r in outcome.results] == case.expected[:5]
    assert {r.source for r in outcome.results} == {case.name}


@CASES
def test_results_capped_and_entries_without_url_skipped(case: Case) -> None:
    with case.fake() as fake:
        outcome = case.provider(fake, web_results=10).search(QUERY)
    assert len(outcome.results) == 6  # everything the fake has, since the server honours the requested count

    extra = [{"title": "无链接", "name": "无链接", "content": "x", "snippet": "x"}, "not a dict", {"url": "   "}]
    with case.fake() as fake:
        fake.payload = _payload_with(case, extra)  # a server that ignores the requested count
        outcome = case.provider(fake, web_results=2).search(QUERY)
    assert outcome.status == "ok"
    assert [(r.title, r.link, r.snippet) for r in outcome.results] == case.expected[:2]


def _payload_with(case: Case, leading: list[Any]) -> dict[str, Any]:
    if case is TAVILY:
        return {"query": QUERY, "answer": None, "results": [*leading, *RESULTS], "response_time": 0.5}
    payload = bocha_payload({"query": QUERY, "count": 50})
    payload["data"]["webPages"]["value"][:0] = leading
    return payload


# ---------------------------------------------------------------------- failures
@CASES
@pytest.mark.parametrize(("mode", "status", "needle"), [
    ("unauthorized", "error", "_API_KEY"),
    ("quota", "quota", "额度"),
    ("rate_limited", "quota", "频繁"),
    ("error", "error", "500"),
    ("malformed", "error", "解析"),
    ("empty", "empty", "没有找到"),
])
def test_failure_modes(case: Case, mode: str, status: str, needle: str) -> None:
    outcome, fake = run(case, mode)
    assert_failure(outcome, status, case)
    assert needle in outcome.message
    assert len(fake.requests) == 1
    if mode == "unauthorized":
        assert case.key_var in outcome.message


@CASES
@pytest.mark.parametrize("key", [None, "", "   "])
def test_no_key_makes_no_request(case: Case, key: str | None) -> None:
    outcome, fake = run(case, key=key)
    assert outcome.status == "no_key"
    assert case.key_var in outcome.message and CJK.search(outcome.message)
    assert outcome.results == []
    assert fake.requests == []
    assert case.provider(None, key=key).configured() is False


@CASES
def test_empty_query_makes_no_request(case: Case) -> None:
    with case.fake() as fake:
        outcome = case.provider(fake).search("   ")
    assert outcome.status == "error" and CJK.search(outcome.message)
    assert fake.requests == []


@CASES
def test_slow_server_times_out_within_the_given_timeout(case: Case) -> None:
    start = time.perf_counter()
    outcome, fake = run(case, "slow", timeout=0.5)  # settings say 5 s: the argument wins
    elapsed = time.perf_counter() - start
    assert_failure(outcome, "timeout", case)
    assert "超时" in outcome.message
    assert len(fake.requests) == 1
    assert elapsed < 2.0


@CASES
def test_timeout_defaults_to_settings(case: Case) -> None:
    start = time.perf_counter()
    outcome, _ = run(case, "slow", web_timeout_s=0.5)
    assert outcome.status == "timeout"
    assert time.perf_counter() - start < 2.0


@CASES
def test_connection_refused_is_error(case: Case) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    outcome = case.cls(case.settings(), base_url=f"http://127.0.0.1:{port}").search(QUERY, timeout=1.0)
    assert_failure(outcome, "error", case)
    assert "无法连接" in outcome.message


@CASES
def test_api_key_is_never_logged(case: Case, caplog: pytest.LogCaptureFixture) -> None:
    # root and httpx at DEBUG (another library imported earlier in the run may have raised httpx's level)
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="httpx"):
        for mode in ("ok", "unauthorized", "quota", "error", "malformed", "slow"):
            run(case, mode, timeout=0.5)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert f"web search ({case.name}) timeout" in text  # failures are logged …
    assert "httpx" in {r.name for r in caplog.records}  # … httpx's own request lines too …
    assert KEY not in text  # … but never the key


# ---------------------------------------------------------------------- provider-specific error shapes
@pytest.mark.parametrize(("status", "detail", "expected"), [
    (433, "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard",
     "quota"),
    (403, "Forbidden", "error"),
    (400, "Invalid topic. Must be 'general' or 'news'.", "error"),
    (502, "Bad Gateway", "error"),
])
def test_tavily_error_statuses(status: int, detail: str, expected: str) -> None:
    with FakeTavily(payload={"detail": {"error": detail}}, status=status) as fake:
        outcome = TAVILY.provider(fake).search(QUERY)
    assert_failure(outcome, expected, TAVILY)
    if status == 403:
        assert "TAVILY_API_KEY" in outcome.message
    if status in (400, 502):
        assert str(status) in outcome.message


@pytest.mark.parametrize("payload", [{"query": QUERY, "answer": None}, {"results": "nope"}, ["a", "list"]])
def test_tavily_unexpected_shape_is_error(payload: Any) -> None:
    with FakeTavily(payload=payload) as fake:
        outcome = TAVILY.provider(fake).search(QUERY)
    assert_failure(outcome, "error", TAVILY)


@pytest.mark.parametrize(("status", "body", "expected", "needle"), [
    (200, {"code": 403, "msg": "余额不足", "log_id": "x"}, "quota", "额度"),  # business error inside a 200
    (200, {"code": "401", "message": "Invalid API KEY", "log_id": "x"}, "error", "BOCHA_API_KEY"),
    (400, {"code": "400", "message": "The API KEY is missing", "log_id": "x"}, "error", "BOCHA_API_KEY"),
    (400, {"code": "400", "message": "Missing parameter query", "log_id": "x"}, "error", "400"),
    (403, {"code": "403", "message": "Forbidden", "log_id": "x"}, "error", "BOCHA_API_KEY"),
    (503, "Service Unavailable", "error", "503"),
])
def test_bocha_error_bodies(status: int, body: Any, expected: str, needle: str) -> None:
    with FakeBocha(payload=body, status=status) as fake:
        outcome = BOCHA.provider(fake).search(QUERY)
    assert_failure(outcome, expected, BOCHA)
    assert needle in outcome.message


@pytest.mark.parametrize("payload", [
    {"code": 200, "log_id": "x", "msg": None},  # no data
    {"code": 200, "log_id": "x", "msg": None, "data": {"webPages": {"value": "nope"}}},
    {"code": 200, "log_id": "x", "msg": None, "data": {"webPages": ["a", "list"]}},
])
def test_bocha_unexpected_shape_is_error(payload: dict[str, Any]) -> None:
    with FakeBocha(payload=payload) as fake:
        outcome = BOCHA.provider(fake).search(QUERY)
    assert_failure(outcome, "error", BOCHA)


def test_bocha_null_value_is_empty() -> None:
    payload = {"code": 200, "log_id": "x", "msg": None, "data": {"webPages": {"value": None}}}
    with FakeBocha(payload=payload) as fake:
        outcome = BOCHA.provider(fake).search(QUERY)
    assert_failure(outcome, "empty", BOCHA)


# ---------------------------------------------------------------------- the registry
def _settings(provider: str = "auto", **keys: str) -> Settings:
    return Settings(_env_file=None, web_search_provider=provider, **{f"{k}_api_key": v for k, v in keys.items()})


def test_registry_order_is_the_auto_preference() -> None:
    assert list(PROVIDERS) == ["serpapi", "tavily", "bocha"]


@pytest.mark.parametrize(("choice", "cls"), [("tavily", TavilySearch), ("bocha", BochaSearch)])
def test_make_provider_explicit_choice(choice: str, cls: type) -> None:
    provider = make_provider(_settings(choice, **{choice: KEY}))
    assert isinstance(provider, cls) and provider.name == choice and provider.configured()
    # chosen but without a key: still that provider, which then answers no_key without a request
    unkeyed = make_provider(_settings(choice))
    assert isinstance(unkeyed, cls) and unkeyed.search(QUERY).status == "no_key"


@pytest.mark.parametrize(("keys", "expected"), [
    ({"serpapi": KEY, "tavily": KEY, "bocha": KEY}, "serpapi"),
    ({"tavily": KEY, "bocha": KEY}, "tavily"),
    ({"bocha": KEY}, "bocha"),
    ({"tavily": KEY}, "tavily"),
    ({"tavily": "  ", "bocha": KEY}, "bocha"),  # a blank key is no key
])
def test_make_provider_auto_takes_the_first_configured(keys: dict[str, str], expected: str) -> None:
    provider = make_provider(_settings("auto", **keys))
    assert provider is not None and provider.name == expected


def test_make_provider_auto_without_keys_and_none() -> None:
    assert make_provider(_settings("auto")) is None
    assert make_provider(_settings("none", serpapi=KEY, tavily=KEY, bocha=KEY)) is None
