"""Security at the boundary, over HTTP against a real `adk web --log_level DEBUG` with fake provider keys.

* keys and server paths never leave the server: every GET endpoint in the server's own OpenAPI spec is fetched
  (the Dev UI's graph and app-info, sessions, events, traces …) and no response, no log line and no byte of the
  session database holds a key; the graph holds no absolute server path;
* the input guard stores an oversize question as a short marker, and an empty message gets a clear rejection
  instead of HTTP 500.
"""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentic_rag.config import PROJECT_ROOT
from tests import hermetic
from tests.fakes.fake_llm import role_of
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.serpapi_server import FakeSerpApi
from tests.test_api_server import APP, free_port, merged_state, new_session, run_body, stop, wait_until_up

KEYS = {"DEEPSEEK_API_KEY": "sk-deepseek-SECRET-7f3a9c", "SERPAPI_API_KEY": "serp-SECRET-b41d2e",
        "TAVILY_API_KEY": "tvly-SECRET-0c9e55", "BOCHA_API_KEY": "sk-bocha-SECRET-91aa07"}
BAD_GRADE = json.dumps({"relevance": 3, "completeness": 2, "accuracy": 3, "coverage": 2})
ANSWER = "# 法律咨询意见\n依据第三十一条，需要取得监护人同意。"
QUESTION = "我家孩子10岁，App收集他的信息要我同意吗？"


def script(body: dict) -> str:
    prompt = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
    role = role_of(prompt)
    return {"rewriter": json.dumps({"main_query": "不满十四周岁 监护人同意"}, ensure_ascii=False),
            "evaluator": BAD_GRADE, "router": json.dumps({"route": "kb"})}.get(role, ANSWER)


@pytest.fixture(scope="module")
def web(pipl_data_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sec")
    with FakeOpenAIServer(script) as llm, FakeSerpApi(mode="ok") as serp:
        env = dict(KEYS, AGENTIC_RAG_MODEL="deepseek/deepseek-chat", DEEPSEEK_API_BASE=llm.base_url,
                   SERPAPI_BASE_URL=serp.base_url, DATA_DIR=str(pipl_data_dir), RERANKER="none",
                   AGENTIC_MAX_RETRIES="0", LLM_MAX_RETRIES="0")
        port, db, log = free_port(), tmp / "s.db", tmp / "web.log"
        adk = Path(sys.executable).with_name("adk")
        proc = hermetic.popen([str(adk), "web", "--host", "127.0.0.1", "--port", str(port), "--log_level", "DEBUG",
                               "--session_service_uri", f"sqlite:///{db}", "."], cwd=PROJECT_ROOT, env_extra=env,
                              stdout=open(log, "wb"), stderr=subprocess.STDOUT)
        wait_until_up(proc, port, log)
        yield {"base": f"http://127.0.0.1:{port}", "db": db, "log": log, "proc": proc, "serp": serp}
        stop(proc)


def _get_endpoints(base: str, values: dict[str, str]) -> dict[str, httpx.Response]:
    """Every GET path of the server's OpenAPI spec whose parameters we can fill in."""
    spec = httpx.get(f"{base}/openapi.json", timeout=30).json()
    out = {}
    for path, ops in spec["paths"].items():
        names = re.findall(r"{(\w+)}", path)
        if "get" not in ops or any(n not in values for n in names):
            continue
        url = base + re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)
        out[path] = httpx.get(url, timeout=60)
    return out


def test_keys_and_server_paths_never_leave_the_server(web):
    base = web["base"]
    sid = new_session(base)
    r = httpx.post(f"{base}/run", json=run_body(sid, QUESTION), timeout=300)
    assert r.status_code == 200, r.text
    events = r.json()
    state = merged_state(events)
    assert state["path"] == "web" and len(web["serp"].requests) == 1  # the key was really used for a search
    assert web["serp"].requests[0].params["api_key"] == KEYS["SERPAPI_API_KEY"]
    values = {"app_name": APP, "user_id": "u", "session_id": sid, "event_id": events[-1]["id"]}
    responses = _get_endpoints(base, values)
    assert {"/dev/apps/{app_name}/build_graph", "/apps/{app_name}/users/{user_id}/sessions/{session_id}"} <= set(responses)
    assert responses["/dev/apps/{app_name}/build_graph"].status_code == 200
    bodies = {path: resp.text for path, resp in responses.items()} | {"/run": r.text}
    log_text = web["log"].read_text(encoding="utf-8", errors="replace")
    assert "DEBUG" in log_text and "serpapi" in log_text.lower()  # the log is really at DEBUG and saw the search
    db_bytes = web["db"].read_bytes()
    for name, key in KEYS.items():
        leaks = [path for path, text in bodies.items() if key in text]
        assert not leaks, f"{name} in {leaks}"
        assert key not in log_text, f"{name} in the server log"
        assert key.encode() not in db_bytes, f"{name} in the session database"
    graph = bodies["/dev/apps/{app_name}/build_graph"]
    assert str(PROJECT_ROOT) not in graph and "data_dir" not in graph and "Settings" not in graph


def test_oversize_question_is_stored_as_a_marker(web):
    base = web["base"]
    sid = new_session(base)
    question = "我的个人信息被泄露了怎么办" * 500  # 6,500 characters
    r = httpx.post(f"{base}/run", json=run_body(sid, question), timeout=120)
    assert r.status_code == 200
    state = merged_state(r.json())
    assert state["path"] == "rejected" and "问题过长（6500 字" in state["final_answer"]
    with sqlite3.connect(web["db"]) as con:
        stored = "".join(str(row) for row in con.execute("select * from events"))
    assert question[:200] not in stored and "问题过长未保存：6500 字" in stored


def test_empty_message_gets_a_clear_rejection_not_a_500(web):
    base = web["base"]
    sid = new_session(base)
    body = run_body(sid, "")
    body["newMessage"]["parts"] = []
    r = httpx.post(f"{base}/run", json=body, timeout=60)
    assert r.status_code == 200, r.text
    state = merged_state(r.json())
    assert state["path"] == "rejected" and "问题为空" in state["final_answer"]
