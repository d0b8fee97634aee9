#!/usr/bin/env python
"""One checkout of the app answering questions for bench/answers_before_after.py (a separate process per checkout,
so an earlier version runs as it was, beside the current one, on the same machine at the same time).

    python bench/answer_worker.py <checkout> <pipl data dir> <multilaw data dir>

Reads one JSON object per line on stdin ({"kb": "pipl" | "multilaw", "query": "..."}), answers it with the
checkout's own workflow (streaming on, as a user of `adk web` with streaming sees it) and writes one JSON line:
{"state": <final session state>, "latency_s": …, "first_text_s": …}. Never more than one question at a time.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path


def main() -> int:
    checkout, pipl_dir, multilaw_dir = sys.argv[1:4]
    sys.path.insert(0, checkout)
    from agentic_rag.config import get_settings
    from agentic_rag.oneshot import ask
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.stages.base import user_text
    from agentic_rag.workflow import ConditionalWorkflowAgent

    agents = {}
    for kb, data_dir in (("pipl", pipl_dir), ("multilaw", multilaw_dir)):
        settings = get_settings().model_copy(update={"data_dir": Path(data_dir)})  # model_copy does not validate
        retriever = LocalRetriever.from_settings(settings)  # one per knowledge base (get_retriever is one per process)
        agents[kb] = ConditionalWorkflowAgent(settings=settings, retriever_factory=lambda r=retriever: r)
    import llama_cpp
    build = "AVX512" if "AVX512 = 1" in llama_cpp.llama_print_system_info().decode() else "AVX2"  # which build answers
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        agent = agents[request["kb"]]
        t0, first = time.perf_counter(), []

        def seen(event, agent=agent, t0=t0, first=first):
            if not first and event.author == agent.answerer.name and user_text(event.content):
                first.append(time.perf_counter() - t0)

        state = asyncio.run(ask(agent, request["query"], on_event=seen, stream=True))
        print(json.dumps({"state": state, "latency_s": round(time.perf_counter() - t0, 2), "llama_cpp": build,
                          "first_text_s": round(first[0], 2) if first else None}, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
