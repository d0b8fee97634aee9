"""SerpApiSearch with the real `serpapi` client against a local fake SerpApi (no network)."""
from __future__ import annotations

import logging
import re
import socket
import time

import pytest

from agentic_rag.config import Settings
from agentic_rag.state import WebOutcome as WebSearchOutcome
from agentic_rag.state import WebResult
from agentic_rag.web.serpapi import SerpApiSearch

try:
    from tests.fakes.serpapi_server import ORGANIC_RESULTS, FakeSerpApi
except ImportError:  # `tests/` without __init__.py, run by the bare `pytest` script
    from fakes.serpapi_server import ORGANIC_RESULTS, FakeSerpApi

KEY = "test-key-0123456789"
QUERY = "公司把我的手机号卖给别人合法吗"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy from the environment must not intercept 127.0.0.1."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def make_settings(key: str | None = KEY, timeout: float = 2.0, web_results: int = 5) -> Settings:
    return Settings(_env_file=None, serpapi_api_key=key, serpapi_timeout_s=timeout, web_results=web_results)


def run(mode: str, **settings_kw: object) -> tuple[WebSearchOutcome, FakeSerpApi]:
    with FakeSerpApi(mode=mode) as fake:  # type: ignore[arg-type]
        outcome = SerpApiSearch(make_settings(**settings_kw), base_url=fake.base_url).search(QUERY)
    return outcome, fake


def assert_failure(outcome: WebSearchOutcome, status: str) -> None:
    assert outcome.status == status, outcome
    assert outcome.results == []
    assert outcome.message and CJK.search(outcome.message), outcome.message
    assert KEY not in outcome.message
    assert outcome.query == QUERY


def test_ok_normalises_results_and_sends_params() -> None:
    outcome, fake = run("ok")
    assert outcome.status == "ok"
    assert outcome.query == QUERY
    assert len(outcome.results) == 3
    assert all(isinstance(r, WebResult) for r in outcome.results)
    assert [r.link for r in outcome.results] == [r["link"] for r in ORGANIC_RESULTS]
    assert [r.title for r in outcome.results] == [r["title"] for r in ORGANIC_RESULTS]
    assert outcome.results[0].snippet.startswith("为了保护个人信息权益")
    assert {r.source for r in outcome.results} == {"serpapi"}

    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert req.path in ("/search", "/search.json")
    assert req.params["engine"] == "google_light"
    assert req.params["q"] == QUERY
    assert req.params["hl"] == "zh-cn"
    assert req.params["gl"] == "cn"
    assert req.params["google_domain"] == "google.com"
    assert req.params["location"] == "China"
    assert req.params["num"] == "5"
    assert req.params["api_key"] == KEY

    d = outcome.model_dump()
    assert d["status"] == "ok" and len(d["results"]) == 3
    assert set(d["results"][0]) == {"title", "link", "snippet", "source"}


def test_ok_caps_results_and_skips_entries_without_link() -> None:
    payload = {"organic_results": [{"title": "无链接", "snippet": "x"}, *ORGANIC_RESULTS]}
    with FakeSerpApi(payload=payload) as fake:
        outcome = SerpApiSearch(make_settings(web_results=2), base_url=fake.base_url).search(QUERY)
    assert outcome.status == "ok"
    assert [r.link for r in outcome.results] == [r["link"] for r in ORGANIC_RESULTS[:2]]
    assert fake.requests[0].params["num"] == "2"


@pytest.mark.parametrize("key", [None, "", "   "])
def test_no_key_makes_no_request(key: str | None) -> None:
    outcome, fake = run("ok", key=key)
    assert outcome.status == "no_key"
    assert "SERPAPI_API_KEY" in outcome.message and CJK.search(outcome.message)
    assert outcome.results == []
    assert fake.requests == []


def test_unauthorized_is_error_about_the_key() -> None:
    outcome, _ = run("unauthorized")
    assert_failure(outcome, "error")
    assert "SERPAPI_API_KEY" in outcome.message


def test_quota_http_429() -> None:
    outcome, _ = run("quota")
    assert_failure(outcome, "quota")
    assert "额度" in outcome.message


def test_quota_error_in_200_body() -> None:
    with FakeSerpApi(payload={"error": "Your account has run out of searches."}) as fake:
        outcome = SerpApiSearch(make_settings(), base_url=fake.base_url).search(QUERY)
    assert_failure(outcome, "quota")


def test_server_error() -> None:
    outcome, _ = run("error")
    assert_failure(outcome, "error")
    assert "500" in outcome.message


def test_slow_server_times_out_quickly() -> None:
    start = time.perf_counter()
    outcome, fake = run("slow", timeout=0.5)
    elapsed = time.perf_counter() - start
    assert_failure(outcome, "timeout")
    assert "超时" in outcome.message
    assert len(fake.requests) == 1
    assert elapsed < 3.0


def test_empty_results() -> None:
    outcome, _ = run("empty")
    assert_failure(outcome, "empty")


def test_empty_error_body_is_empty() -> None:
    with FakeSerpApi(payload={"error": "Google hasn't returned any results for this query."}) as fake:
        outcome = SerpApiSearch(make_settings(), base_url=fake.base_url).search(QUERY)
    assert_failure(outcome, "empty")


def test_malformed_json() -> None:
    outcome, _ = run("malformed")
    assert_failure(outcome, "error")


def test_connection_refused_is_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    outcome = SerpApiSearch(make_settings(timeout=1.0), base_url=f"http://127.0.0.1:{port}").search(QUERY)
    assert_failure(outcome, "error")


def test_api_key_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agentic_rag.web.serpapi"):
        for mode in ("error", "unauthorized", "slow"):
            run(mode, timeout=0.5)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert text  # failures are logged …
    assert KEY not in text  # … but the key (part of every request URL) is redacted
