"""Security at the boundary, over HTTP against a real `adk web --log_level DEBUG` with fake provider keys.

* keys and server paths never leave the server: the question goes to the web once through each of the three web
  providers (SerpApi, Tavily, 博查: a server per provider, configured in turn, on one session database), each
  fake provider checks it received its key, and then every GET endpoint of the server's own OpenAPI spec is
  fetched with every path parameter filled (app, user, the three sessions and their events, an artifact, an eval
  set and its case, a saved test …). Every endpoint must answer (2xx, or a status listed below with its reason);
  one that cannot be filled must be listed with its reason. No response, no log line of the three servers, no row
  of any table of the session database, no byte of it and no file the server wrote holds a key; the graph holds no
  absolute server path;
* the input guard stores an oversize question as a short marker, and an empty message gets a clear rejection
  instead of HTTP 500.

The server runs on a temporary agents folder whose `agentic_rag` package is a shim that loads the project's own
package in its place, so the eval set, test file and artifact the test creates are written there and never into the
source tree.
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
from tests.fakes.bocha_server import FakeBocha
from tests.fakes.fake_llm import role_of
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.serpapi_server import FakeSerpApi
from tests.fakes.tavily_server import FakeTavily
from tests.test_api_server import APP, free_port, merged_state, new_session, run_body, stop, wait_until_up

KEYS = {"DEEPSEEK_API_KEY": "sk-deepseek-SECRET-7f3a9c", "SERPAPI_API_KEY": "serp-SECRET-b41d2e",
        "TAVILY_API_KEY": "tvly-SECRET-0c9e55", "BOCHA_API_KEY": "sk-bocha-SECRET-91aa07"}
PROVIDERS = ("tavily", "bocha", "serpapi")  # in turn; the last server stays up for the other tests
BAD_GRADE = json.dumps({"relevance": 3, "completeness": 2, "accuracy": 3, "coverage": 2})
ANSWER = "# 法律咨询意见\n依据第三十一条，需要取得监护人同意。"
QUESTION = "我家孩子10岁，App收集他的信息要我同意吗？"
USER = "u"
EVAL_SET, EVAL_CASE, TEST_NAME, ARTIFACT = "leak_check", "leak_case", "leak_test", "note.txt"

# GET endpoints that answer with an error status even with every parameter filled, and why.
NO_EVAL_EXTRAS = "ADK's eval extras (google-adk[eval]) are not installed"
EXPECTED_STATUS = {
    "/apps/{app_name}/app-info": (400, "the root agent is a custom workflow agent, not an LlmAgent"),
    "/dev/apps/{app_name}/debug/trace/{event_id}":
        (404, "the workflow calls its models itself, not through an LlmAgent: ADK traces no call_llm span, so no "
              "event has a trace (and the session's trace is an empty list)"),
    "/dev/apps/{app_name}/metrics-info": (400, NO_EVAL_EXTRAS),
    "/dev/apps/{app_name}/eval_results/{eval_result_id}":
        (404, f"no eval result exists: running an eval needs what {NO_EVAL_EXTRAS} would bring"),
    "/dev/apps/{app_name}/eval-results/{eval_result_id}":
        (404, f"no eval result exists: running an eval needs what {NO_EVAL_EXTRAS} would bring"),
}
# GET endpoints the test cannot fill, and why (none at present: every path parameter has a value below).
UNFILLABLE: dict[str, str] = {}

SHIM = """# A shim (tests/test_security.py): importing it loads the project's own package in its place.
import importlib.util
import sys

_spec = importlib.util.spec_from_file_location("agentic_rag", {init!r}, submodule_search_locations=[{real!r}])
_package = importlib.util.module_from_spec(_spec)
sys.modules["agentic_rag"] = _package
_spec.loader.exec_module(_package)
"""


def script(body: dict) -> str:
    prompt = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
    role = role_of(prompt)
    return {"rewriter": json.dumps({"main_query": "不满十四周岁 监护人同意"}, ensure_ascii=False),
            "evaluator": BAD_GRADE, "router": json.dumps({"route": "kb"})}.get(role, ANSWER)


def agents_folder(tmp: Path) -> Path:
    agents = tmp / "agents"
    (agents / APP).mkdir(parents=True)
    real = PROJECT_ROOT / APP
    (agents / APP / "__init__.py").write_text(SHIM.format(real=str(real), init=str(real / "__init__.py")),
                                              encoding="utf-8")
    return agents


def start_web(env: dict, agents: Path, db: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    adk = Path(sys.executable).with_name("adk")
    proc = hermetic.popen([str(adk), "web", "--host", "127.0.0.1", "--port", str(port), "--log_level", "DEBUG",
                           "--session_service_uri", f"sqlite:///{db}", str(agents)], cwd=agents, env_extra=env,
                          stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    wait_until_up(proc, port, log)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def web(pipl_data_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sec")
    agents, db = agents_folder(tmp), tmp / "s.db"
    with FakeOpenAIServer(script) as llm, FakeSerpApi(mode="ok") as serpapi, FakeTavily(mode="ok") as tavily, \
            FakeBocha(mode="ok") as bocha:
        fakes = {"serpapi": serpapi, "tavily": tavily, "bocha": bocha}
        env = dict(KEYS, AGENTIC_RAG_MODEL="deepseek/deepseek-chat", DEEPSEEK_API_BASE=llm.base_url,
                   SERPAPI_BASE_URL=serpapi.base_url, TAVILY_BASE_URL=tavily.base_url, BOCHA_BASE_URL=bocha.base_url,
                   DATA_DIR=str(pipl_data_dir), RERANKER="none", AGENTIC_MAX_RETRIES="0", LLM_MAX_RETRIES="0")
        runs, logs, proc = {}, [], None
        try:
            for provider in PROVIDERS:
                if proc is not None:
                    stop(proc)
                logs.append(tmp / f"web-{provider}.log")
                proc, base = start_web({**env, "WEB_SEARCH_PROVIDER": provider}, agents, db, logs[-1])
                sid = new_session(base)
                r = httpx.post(f"{base}/run", json=run_body(sid, QUESTION), timeout=300)
                runs[provider] = {"session_id": sid, "response": r}
            yield {"base": base, "db": db, "logs": logs, "runs": runs, "fakes": fakes, "agents": agents}
        finally:
            if proc is not None:
                stop(proc)


def test_each_provider_really_searched_with_its_key(web):
    for provider, run in web["runs"].items():
        assert run["response"].status_code == 200, run["response"].text
        state = merged_state(run["response"].json())
        assert state["path"] == "web" and state["web_search"]["provider"] == provider, provider
        requests = web["fakes"][provider].requests
        assert len(requests) == 1, provider  # one question per provider, none through another
        key = KEYS[f"{provider.upper()}_API_KEY"]
        sent = requests[0].params["api_key"] if provider == "serpapi" else requests[0].headers["authorization"]
        assert sent == (key if provider == "serpapi" else f"Bearer {key}")


def _create_everything_a_get_can_name(base: str, sid: str) -> dict[str, str]:
    """An artifact, an eval set holding the session as a case, a saved test: what the Dev UI lets a user create."""
    r = httpx.post(f"{base}/apps/{APP}/users/{USER}/sessions/{sid}/artifacts", timeout=30,
                   json={"filename": ARTIFACT, "artifact": {"text": "用户的笔记"}})
    assert r.status_code == 200, r.text
    version = str(r.json()["version"])
    r = httpx.post(f"{base}/dev/apps/{APP}/eval-sets", json={"eval_set": {"eval_set_id": EVAL_SET, "eval_cases": []}},
                   timeout=30)
    assert r.status_code == 200, r.text
    r = httpx.post(f"{base}/dev/apps/{APP}/eval_sets/{EVAL_SET}/add_session", timeout=60,
                   json={"eval_id": EVAL_CASE, "session_id": sid, "user_id": USER})
    assert r.status_code == 200, r.text
    session = httpx.get(f"{base}/apps/{APP}/users/{USER}/sessions/{sid}", timeout=30).json()
    r = httpx.put(f"{base}/dev/apps/{APP}/tests/{TEST_NAME}", json={"session_data": session}, timeout=30)
    assert r.status_code == 200, r.text
    return {"artifact_name": ARTIFACT, "version_id": version, "eval_set_id": EVAL_SET, "eval_case_id": EVAL_CASE,
            "test_name": TEST_NAME, "eval_result_id": "no-such-result"}


def get_every_endpoint(base: str, value_sets: list[dict[str, str]]) -> tuple[dict[str, list[httpx.Response]], set[str]]:
    """Every GET path of the server's OpenAPI spec with the responses to each distinct filling of its parameters
    (redirects followed), and the paths no value set fills."""
    spec = httpx.get(f"{base}/openapi.json", timeout=30).json()
    responses, unfilled = {}, set()
    for path, ops in spec["paths"].items():
        if "get" not in ops:
            continue
        names = re.findall(r"{(\w+)}", path)
        urls = dict.fromkeys(base + re.sub(r"{(\w+)}", lambda m: values[m.group(1)], path)
                             for values in value_sets if all(n in values for n in names))
        if urls:
            responses[path] = [httpx.get(url, timeout=60, follow_redirects=True) for url in urls]
        else:
            unfilled.add(path)
    return responses, unfilled


def every_table(db: Path) -> dict[str, str]:
    """Every row of every table of the session database, as text."""
    with sqlite3.connect(db) as con:
        tables = [t for (t,) in con.execute("select name from sqlite_master where type = 'table'")]
        return {t: "\n".join(map(str, con.execute(f'select * from "{t}"'))) for t in tables}


def test_keys_and_server_paths_never_leave_the_server(web):
    base, runs = web["base"], web["runs"]
    common = {"app_name": APP, "user_id": USER}
    value_sets = []
    for provider in PROVIDERS:
        events = runs[provider]["response"].json()
        for event in (events[0], events[-1]):
            value_sets.append({**common, "session_id": runs[provider]["session_id"], "event_id": event["id"]})
    value_sets[-1].update(_create_everything_a_get_can_name(base, runs["serpapi"]["session_id"]))

    responses, unfilled = get_every_endpoint(base, value_sets)
    assert unfilled == set(UNFILLABLE), "GET endpoints left unfilled without a listed reason (or listed in vain)"
    assert len(responses) >= 35 and len(responses["/apps/{app_name}/users/{user_id}/sessions/{session_id}"]) == 3
    wrong = {f"{path} -> {r.status_code}": r.text[:300] for path, rs in responses.items() for r in rs
             if not (r.is_success or EXPECTED_STATUS.get(path, (None,))[0] == r.status_code)}
    assert wrong == {}, "endpoints that did not answer"
    assert set(EXPECTED_STATUS) <= set(responses)  # nothing listed in vain
    # what was created is really served back, with the session's question in it
    case = responses["/dev/apps/{app_name}/eval_sets/{eval_set_id}/evals/{eval_case_id}"][0].text
    saved_test = responses["/dev/apps/{app_name}/tests/{test_name}"][0].text
    assert QUESTION in case and QUESTION in saved_test

    bodies = {f"GET {r.request.url} ({path})": r.text + json.dumps(dict(r.headers))
              for path, rs in responses.items() for r in rs}
    bodies |= {f"/run ({p})": runs[p]["response"].text for p in PROVIDERS}
    logs = {log.name: log.read_text(encoding="utf-8", errors="replace") for log in web["logs"]}
    for provider, log in zip(PROVIDERS, logs.values()):
        assert " - DEBUG - " in log and f"web search ({provider}) ok" in log  # really at DEBUG, and it searched
    tables = every_table(web["db"])
    assert {"sessions", "events"} <= set(tables) and all(tables[t] for t in ("sessions", "events"))
    db_bytes = web["db"].read_bytes()
    written = {str(p.relative_to(web["agents"])): p.read_bytes() for p in web["agents"].rglob("*") if p.is_file()}
    assert any(f.endswith(".evalset.json") for f in written) and any(ARTIFACT in f for f in written)
    for name, key in KEYS.items():
        assert not [url for url, text in bodies.items() if key in text], f"{name} in a response"
        assert not [log for log, text in logs.items() if key in text], f"{name} in a server log"
        assert not [t for t, rows in tables.items() if key in rows], f"{name} in a table of the session database"
        assert key.encode() not in db_bytes, f"{name} in the session database file"
        assert not [f for f, data in written.items() if key.encode() in data], f"{name} in a file the server wrote"
    graph = responses["/dev/apps/{app_name}/build_graph"][0].text
    assert responses["/dev/apps/{app_name}/build_graph"][0].status_code == 200
    for path in (str(PROJECT_ROOT), str(web["agents"])):
        assert path not in graph
    assert "data_dir" not in graph and "Settings" not in graph


def test_oversize_question_is_stored_as_a_marker(web):
    base = web["base"]
    sid = new_session(base)
    question = "我的个人信息被泄露了怎么办" * 500  # 6,500 characters
    r = httpx.post(f"{base}/run", json=run_body(sid, question), timeout=120)
    assert r.status_code == 200
    state = merged_state(r.json())
    assert state["path"] == "rejected" and "问题过长（6500 字" in state["final_answer"]
    stored = "".join(every_table(web["db"]).values())
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
