#!/usr/bin/env python3
"""The contextualise step's model call, side by side on the conversation set's dev follow-ups (issue 19: ≤ 3 s p50).

For every follow-up (and clarification reply) of the dev half, the stage's own prompt and check are run with:

* `1.5b-shared` — the embedded 1.5B model as the agent runs it by default: its one context was last used by another
  stage (the previous answer), so only the system message is reused and the examples are evaluated again;
* `1.5b-own`    — the same model when its context last held a contextualise prompt (the examples reused);
* `0.5b-own`    — the 0.5B file of the same family on its own context (a second model instance that only the
  contextualiser uses, so the examples stay cached between turns).

Per configuration: seconds per call (p50, mean), share of lines that pass `check` (else the rule form is used),
must_keep recall of the question used, and whether a gold article is among the first five retrieved for it (the
previous turn's articles, which the agent adds as candidates, are not added here). The history given is the
conversation's labelled standalone questions and the previous turn's gold article titles, so every configuration
sees the same input. Calls alternate per item so that machine noise falls on all alike; ratios are reported.

    .venv/bin/python bench/contextualise.py [--split dev] [--limit N] [--json bench/results/contextualise.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.genai import types  # noqa: E402

from agentic_rag.config import get_settings  # noqa: E402
from agentic_rag.conversation import clip  # noqa: E402
from agentic_rag.legal.laws import short  # noqa: E402
from agentic_rag.legal.numerals import article_cn  # noqa: E402
from agentic_rag.llm import local  # noqa: E402
from agentic_rag.retrieval.retriever import LocalRetriever  # noqa: E402
from agentic_rag.safety.fence import history_block  # noqa: E402
from agentic_rag.stages.base import SYSTEM  # noqa: E402
from agentic_rag.stages.contextualise import prompt  # noqa: E402
from agentic_rag.stages.contextualise.agent import MAX_TOKENS, rule_form  # noqa: E402
from agentic_rag.stages.contextualise.check import check  # noqa: E402

PIPL = "中华人民共和国个人信息保护法"
LARGE, SMALL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# `own` before `shared` on the same file: `own` then finds the previous item's prompt (same examples, other history)
CONFIGS = (("1.5b-own", LARGE, False), ("1.5b-shared", LARGE, True), ("0.5b-own", SMALL, False))
KINDS = ("pronoun", "ellipsis", "penalty", "more", "law_change", "clarify_reply")


def gold_pairs(gold: list) -> set:
    return {(g["law"], g["article"]) if isinstance(g, dict) else (PIPL, g) for g in gold}


def items(split: str) -> list[dict]:
    rows = [json.loads(line) for line in (ROOT / "eval" / "conversation_eval.jsonl").read_text("utf-8").splitlines()]
    out = []
    for row in rows:
        if row["split"] != split:
            continue
        for i, turn in enumerate(row["turns"]):
            if turn["kind"] in KINDS:
                earlier = row["turns"][max(0, i - 2):i]
                reply = turn["kind"] == "clarify_reply"
                titles = [] if reply else [f"{short(law)}{article_cn(n)}" for law, n in
                                           sorted(gold_pairs(row["turns"][i - 1]["gold"]))]
                out.append({"id": f"{row['id']}#{i}", "kb": row["kb"], "kind": turn["kind"], "follow_up": turn["user"],
                            "questions": [earlier[-1]["user"]] if reply else [t["standalone"] for t in earlier],
                            "titles": titles, "gold": gold_pairs(turn["gold"]), "must_keep": turn["must_keep"],
                            "rule": prompt.MERGED if reply else prompt.FALLBACK})
    return out


async def condense(model: local.LocalLlamaLlm, text: str) -> str:
    config = types.GenerateContentConfig(system_instruction=SYSTEM, temperature=0.0, max_output_tokens=MAX_TOKENS)
    request = LlmRequest(model=model.model, config=config,
                         contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    parts = [r.content.parts[0].text async for r in model.generate_content_async(request) if r.content]
    return "".join(p or "" for p in parts)


def evict(name: str) -> None:
    """What another stage's call does to the shared context: nothing of this prompt but the system message stays."""
    for loaded in local._MODELS.values():
        if loaded.path.name == name:
            with loaded.lock:
                loaded.llama.reset()


def hit(retriever: LocalRetriever, question: str, gold: set) -> bool:
    articles = [a for a in retriever.retrieve(question).articles if a.role == "evidence"][:5]
    return bool({(a.law, a.article) for a in articles} & gold)


def run_item(item: dict, models: dict, retrievers: dict, max_chars: int) -> dict:
    text = prompt.CONDENSE.format(history=history_block(item["questions"], item["titles"]), follow_up=item["follow_up"])
    fallback = clip(rule_form(item["rule"], item["questions"][-1], item["follow_up"]), max_chars)
    out = {"id": item["id"], "kind": item["kind"], "kb": item["kb"],
           "rule_hit": hit(retrievers[item["kb"]], fallback, item["gold"])}
    for name, path, shared in CONFIGS:
        if shared:
            evict(path)
        t0 = time.perf_counter()
        raw = asyncio.run(condense(models[path], text))
        seconds = time.perf_counter() - t0
        checked = check(raw, item["follow_up"], item["questions"], item["titles"])
        question = checked.question or fallback
        out[name] = {"seconds": round(seconds, 2), "raw": raw.strip()[:200], "passed": checked.question is not None,
                     "problem": checked.problem, "question": question,
                     "must_keep": [w in question for w in item["must_keep"]],
                     "hit": hit(retrievers[item["kb"]], question, item["gold"])}
    return out


def summary(results: list[dict]) -> dict:
    def mean(xs):
        xs = list(xs)
        return round(sum(xs) / len(xs), 4) if xs else None
    out = {"n": len(results), "rule_form_hit@5": mean(r["rule_hit"] for r in results)}
    for name, _, _ in CONFIGS:
        rows = [r[name] for r in results]
        out[name] = {"p50_s": round(statistics.median(r["seconds"] for r in rows), 2),
                     "mean_s": mean(r["seconds"] for r in rows), "check_passed": mean(r["passed"] for r in rows),
                     "must_keep": mean(k for r in rows for k in r["must_keep"]),
                     "hit@5": mean(r["hit"] for r in rows),
                     "per_kind_hit@5": {k: mean(r[name]["hit"] for r in results if r["kind"] == k)
                                        for k in sorted({r["kind"] for r in results})}}
    base = out["1.5b-shared"]["p50_s"]
    out["p50_ratio_to_1.5b-shared"] = {name: round(out[name]["p50_s"] / base, 3) for name, _, _ in CONFIGS}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--split", default="dev", choices=("dev", "test"))
    p.add_argument("--limit", type=int)
    p.add_argument("--pipl-dir", default="data")
    p.add_argument("--multilaw-dir", default="data-multilaw")
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "contextualise.json")
    a = p.parse_args()
    settings = get_settings().model_copy(update={"reranker": "none"})
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": Path(d)}))
                  for kb, d in (("pipl", a.pipl_dir), ("multilaw", a.multilaw_dir))}
    models = {path: local.LocalLlamaLlm(model=f"local/{path}") for path in (LARGE, SMALL)}
    for model in models.values():  # loading the file is not part of a call
        asyncio.run(condense(model, prompt.CONDENSE.format(history="", follow_up="")))
    results = []
    for item in items(a.split)[: a.limit]:
        results.append(run_item(item, models, retrievers, settings.max_query_chars))
        r = results[-1]
        print(item["id"], item["kind"], " | ".join(f"{n} {r[n]['seconds']}s {'ok' if r[n]['passed'] else r[n]['problem']}"
                                                   f" hit={r[n]['hit']}" for n, _, _ in CONFIGS), flush=True)
    report = {"split": a.split, "summary": summary(results), "items": results}
    a.json.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(report["summary"], ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
