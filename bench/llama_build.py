#!/usr/bin/env python3
"""How llama.cpp is compiled, side by side: the gate's model call and a short answer with two builds.

The gate's call (the articles prefix, then one 是/否 tail per article) is what stands between a question and its first
answer text with the embedded model; it is prompt processing, which is where the CPU's vector width shows. Each build
(`name=DIR`: DIR holds an unpacked llama-cpp-python wheel put first on sys.path; `name=` is the venv's own) runs in a
child process, one after the other, never two at once; the builds alternate over rounds so that machine noise falls
on both. Per build: seconds per gate call (p50), prompt tokens per second, generation tokens per second, llama.cpp's
system info (which instruction sets it uses); ratios against the first build.

    .venv/bin/python bench/llama_build.py portable= native=/path/to/unpacked/native/wheel \
        [--questions 8] [--rounds 2] [--json bench/results/llama_build.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "eval" / "answers_eval.jsonl"


def child(n_questions: int) -> dict:
    """One build: the gate's scoring call on the first dev PIPL questions of the answers set, then a generation."""
    sys.path.insert(0, str(ROOT))
    import llama_cpp

    from agentic_rag.config import get_settings
    from agentic_rag.llm import local
    from agentic_rag.llm.models import make_model
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.stages.base import SYSTEM
    from agentic_rag.stages.evidence import label, prompt_articles, shared_prefix
    from agentic_rag.stages.grade.prompt import relevance_questions

    settings = get_settings().model_copy(update={"reranker": "none"})
    retriever = LocalRetriever.from_settings(settings)
    model = make_model("evaluator", settings)
    rows = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()]
    questions = [r["query"] for r in rows if r["split"] == "dev" and r["kb"] == "pipl" and r["gold"]][:n_questions]
    gate, tokens = [], []
    for q in questions:
        articles = prompt_articles(retriever.retrieve(q).articles)
        prefix, tails = relevance_questions(shared_prefix(q, articles, one_law=True),
                                            [label(a, True) for a in articles])
        t0 = time.perf_counter()
        scored = asyncio.run(model.score_tails(SYSTEM, prefix, tails))
        gate.append(time.perf_counter() - t0)
        tokens.append(scored.prefix_tokens - scored.reused_tokens)
    llama = local.load_model(local.local_model_path(settings.local_llm, settings), settings).llama
    t0 = time.perf_counter()
    out = llama.create_completion("请用一句话说明个人信息处理者应当履行哪些义务。", max_tokens=48, temperature=0.0)
    gen_s = time.perf_counter() - t0
    generated = out["usage"]["completion_tokens"]
    return {"gate_s": [round(s, 3) for s in gate], "prefix_tokens": tokens,
            "prompt_tok_per_s": round(sum(tokens) / sum(gate), 1), "gen_tok_per_s": round(generated / gen_s, 1),
            "system_info": llama_cpp.llama_print_system_info().decode().strip()}


def run_build(site: str, n_questions: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from bench._common import env_with_first_path

    env = env_with_first_path(site)
    out = subprocess.run([sys.executable, __file__, "--child", str(n_questions)], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="*", help="name=DIR (DIR: an unpacked wheel; empty: the venv's own build)")
    p.add_argument("--questions", type=int, default=8)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json", type=Path)
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.child), ensure_ascii=False))
        return 0
    builds = dict(b.split("=", 1) for b in args.builds)
    runs: dict[str, list[dict]] = {name: [] for name in builds}
    for r in range(args.rounds):
        for name, site in builds.items():
            runs[name].append(run_build(site, args.questions))
            print(f"round {r + 1} {name}: p50 gate {statistics.median(runs[name][-1]['gate_s']):.2f} s, "
                  f"prompt {runs[name][-1]['prompt_tok_per_s']} tok/s", file=sys.stderr, flush=True)
    summary = {}
    for name, rs in runs.items():
        gate = [s for run in rs for s in run["gate_s"]]
        summary[name] = {"p50_gate_s": round(statistics.median(gate), 2),
                         "prompt_tok_per_s": round(statistics.mean(run["prompt_tok_per_s"] for run in rs), 1),
                         "gen_tok_per_s": round(statistics.mean(run["gen_tok_per_s"] for run in rs), 1),
                         "system_info": rs[0]["system_info"], "runs": rs}
    first = next(iter(summary.values()))
    for s in summary.values():
        s["ratio_p50_gate_vs_first"] = round(s["p50_gate_s"] / first["p50_gate_s"], 3)
        s["ratio_prompt_tok_per_s_vs_first"] = round(s["prompt_tok_per_s"] / first["prompt_tok_per_s"], 3)
    result = {"questions": args.questions, "rounds": args.rounds, "cpus": os.cpu_count(), "builds": summary}
    print(json.dumps({k: {x: y for x, y in v.items() if x != "runs"} for k, v in summary.items()}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
