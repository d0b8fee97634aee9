#!/usr/bin/env python3
"""Concurrency and restart: `adk api_server` (sqlite sessions) with a fake LLM on 127.0.0.1, many sessions at once.

N sessions ask Q questions each, all sessions in parallel (questions within a session in order, as a chat does).
Reports how many were answered (HTTP 200 with a final answer), latency p50/p95, then restarts the server and
checks every session and event is still there. The LLM is a local fake (instant), so the numbers measure the app
and ADK (routing, retrieval, state writes, sqlite), not a model. Writes bench/results/concurrency.json.

    .venv/bin/python bench/bench_concurrency.py [--sessions 20] [--questions 5]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["AGENTIC_RAG_ENV_FILE"] = os.devnull

from tests.fakes.openai_server import FakeOpenAIServer
from tests.test_api_server import APP, Script, free_port, run_body, start_server, stop

QUESTIONS = ["我家孩子10岁，App收集他的信息要我同意吗？", "公司把我的手机号卖给别人合法吗？", "第二十八条是什么内容？",
             "人脸识别门禁要单独同意吗？", "你好"]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


async def session_run(client: httpx.AsyncClient, base: str, n: int, latencies: list[float]) -> tuple[str, int]:
    sid = (await client.post(f"{base}/apps/{APP}/users/u{n}/sessions", json={})).json()["id"]
    answered = 0
    for i in range(ARGS.questions):
        body = run_body(sid, QUESTIONS[(n + i) % len(QUESTIONS)])
        body["userId"] = f"u{n}"
        t0 = time.perf_counter()
        r = await client.post(f"{base}/run", json=body)
        latencies.append(time.perf_counter() - t0)
        state = {}
        for ev in r.json() if r.status_code == 200 else []:
            state.update((ev.get("actions") or {}).get("stateDelta") or {})
        answered += bool(r.status_code == 200 and state.get("final_answer"))
    return sid, answered


async def load(base: str) -> dict:
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=600) as client:
        t0 = time.perf_counter()
        results = await asyncio.gather(*[session_run(client, base, n, latencies) for n in range(ARGS.sessions)])
        wall = time.perf_counter() - t0
    return {"sessions": [sid for sid, _ in results], "answered": sum(a for _, a in results),
            "asked": ARGS.sessions * ARGS.questions, "wall_s": round(wall, 1),
            "latency_p50_s": percentile(latencies, 0.5), "latency_p95_s": percentile(latencies, 0.95),
            "questions_per_s": round(len(latencies) / wall, 2)}


def boundary_probes(base: str) -> dict:
    """What ADK's server decides before any app code runs (documented in docs/adk-boundary.md)."""
    sid = httpx.post(f"{base}/apps/{APP}/users/u/sessions", json={}).json()["id"]
    body = run_body(sid, "你好")
    no_message = {k: v for k, v in body.items() if k != "newMessage"}
    big_delta = {**body, "stateDelta": {"junk": "x" * 1_000_000}}
    r1 = httpx.post(f"{base}/run", json=no_message, timeout=60)
    r2 = httpx.post(f"{base}/run", json=big_delta, timeout=60)
    stored = httpx.get(f"{base}/apps/{APP}/users/u/sessions/{sid}", timeout=60).json()["state"].get("junk", "")
    return {"no_newMessage_status": r1.status_code, "no_newMessage_body": r1.text[:200],
            "stateDelta_1MB_status": r2.status_code, "stateDelta_1MB_stored_chars": len(stored)}


def main() -> int:
    data_dir = ROOT / "data"
    with FakeOpenAIServer(Script()) as llm, tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SERPAPI", "AGENTIC", "DEEPSEEK"))}
        env.update({"AGENTIC_RAG_MODEL": "deepseek/deepseek-chat", "DEEPSEEK_API_KEY": "bench-key",
                    "DEEPSEEK_API_BASE": llm.base_url, "DATA_DIR": str(data_dir), "RERANKER": "none",
                    "ADK_DISABLE_LOAD_DOTENV": "1", "NO_PROXY": "127.0.0.1,localhost"})
        port, db = free_port(), Path(tmp) / "sessions.db"
        proc = start_server(port, env, db, Path(tmp) / "server.log")
        base = f"http://127.0.0.1:{port}"
        httpx.post(f"{base}/run", json=run_body(httpx.post(f"{base}/apps/{APP}/users/w/sessions", json={}).json()["id"]),
                   timeout=600)  # warm-up: models load on the first question
        result = asyncio.run(load(base))
        result["boundary"] = boundary_probes(base)
        events_before = {s: len(httpx.get(f"{base}/apps/{APP}/users/u{n}/sessions/{s}").json()["events"])
                         for n, s in enumerate(result["sessions"])}
        stop(proc)
        proc = start_server(port, env, db, Path(tmp) / "server2.log")
        events_after = {s: len(httpx.get(f"{base}/apps/{APP}/users/u{n}/sessions/{s}").json()["events"])
                        for n, s in enumerate(result["sessions"])}
        stop(proc)
    result.update(events_before=sum(events_before.values()), events_after_restart=sum(events_after.values()),
                  sessions_intact=sum(events_before[s] == events_after[s] for s in events_before))
    del result["sessions"]
    result.update(cores=os.cpu_count(), note="fake LLM on 127.0.0.1: measures the app, ADK and sqlite, not a model")
    out = ROOT / "bench" / "results" / "concurrency.json"
    out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0 if result["answered"] == result["asked"] else 1


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=20)
    p.add_argument("--questions", type=int, default=5)
    ARGS = p.parse_args()
    sys.exit(main())
