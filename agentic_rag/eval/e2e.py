"""End-to-end evaluation: the whole agent over a labelled question set.

Per question: the route and the path taken (pass / web / none / degraded / error / rejected / chitchat /
out_of_kb), the attempts of the retry loop, the sub-questions, the four scores, the articles used as evidence, the
cited articles and the latency. Summary:

* pass_rate_in_scope — share of questions with gold articles that were answered on the PASS path;
* fail_rate_out_of_scope — share of questions without gold (other laws, chit-chat) that did NOT pass the gate;
* citation_precision — cited ∩ gold / cited, over in-scope questions whose answer cites something;
* citation_recall — cited ∩ gold / gold, over in-scope questions;
* p50_latency_s, p50_first_text_s (streamed, until the answer's first checked sentence), llm_calls_per_question; route counts and paths, overall and per question type.

A run over a whole eval set with a local model takes hours, so results can be checkpointed: with a checkpoint file
every finished question is appended at once (JSONL), and a later run with the same file skips what is done. Each
line records the run it belongs to (models, prompts, threshold, index): mixing configurations in one file is refused.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import zip_longest
from pathlib import Path

from ..config import Settings
from ..llm.models import ROLES, model_name
from ..oneshot import ask
from ..stages.answer import prompt as answer_prompt
from ..stages.base import user_text
from ..stages.grade import prompt as grade_prompt
from ..stages.rewrite import prompt as rewrite_prompt
from ..stages.router import prompt as router_prompt
from ..state import (
    ATTEMPTS,
    CITATIONS,
    ERRORS,
    FINAL_ANSWER,
    LLM_CALLS,
    LLM_USAGE,
    PATH,
    QUALITY,
    RETRIEVAL,
    ROUTE,
    TIMINGS,
)
from .retrieval import gold_keys

PROMPT_MODULES = (router_prompt, rewrite_prompt, grade_prompt, answer_prompt)

Progress = Callable[[int, int, dict], None]


class CheckpointMismatchError(ValueError):
    """The checkpoint file holds results of another configuration (model or index)."""


def run_config(settings: Settings, index_fingerprint: str) -> dict:
    """What must be equal for results to be pooled: the model of every role, the prompts and the index."""
    prompt_text = "".join(v for module in PROMPT_MODULES for k, v in sorted(vars(module).items())
                          if k.isupper() and isinstance(v, str))
    return {"models": {role: model_name(role, settings) for role in ROLES},
            "prompts": hashlib.sha256(prompt_text.encode()).hexdigest()[:12],
            "threshold": settings.quality_threshold, "index": index_fingerprint}


def interleave_types(rows: list[dict], key: Callable[[dict], object] = lambda r: r["type"]) -> list[dict]:
    """Round-robin over question types (file order within a type), so that any prefix is a stratified sample."""
    by_type: dict[object, list[dict]] = {}
    for row in rows:
        by_type.setdefault(key(row), []).append(row)
    return [row for group in zip_longest(*by_type.values()) for row in group if row is not None]


def load_checkpoint(path: Path, config: dict) -> dict[str, dict]:
    """Finished results by question id; raises CheckpointMismatchError when a line belongs to another run.

    A last line torn by a kill is closed with a newline here, once, so that the next append starts a line of its
    own instead of extending (and spoiling) it.
    """
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n")
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            result = json.loads(line)
        except json.JSONDecodeError:  # a line cut by a kill: that question is simply run again
            continue
        if result.get("run") != config:
            raise CheckpointMismatchError(
                f"{path}:{line_no} was made with {result.get('run')}, this run is {config}: use another file")
        done[result["id"]] = result
    return done


def _append(path: Path, result: dict) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(result, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def cited(citations, gold: list) -> list:
    """What the answer puts forward as its basis — the articles listed above the analysis and those the analysis
    cites: (law, article) pairs when the gold names laws, else article numbers."""
    if citations is None:
        return []
    if gold and isinstance(gold[0], dict):
        keys = citations.listed + citations.valid_keys + citations.invalid_keys
    else:
        keys = [n for _, n in citations.listed] + citations.valid + citations.invalid
    return list(dict.fromkeys(map(key, keys)))


def question_result(row: dict, state: dict, latency: float, config: dict) -> dict:
    """One checkpoint line: what the workflow did with one eval question (read through the state slots)."""
    quality, citations, route = QUALITY.get(state), CITATIONS.get(state), ROUTE.get(state)
    retrieval = RETRIEVAL.get(state)
    return {"id": row["id"], "type": row["type"], "gold": row["gold"], "path": PATH.get(state),
            "route": route.kind if route else None, "route_source": route.source if route else None,
            "sub_questions": route.sub_questions if route else [],
            "attempts": [a.model_dump(include={"attempt", "matcher", "total", "articles", "passed", "stop"})
                         for a in ATTEMPTS.get(state) or []],
            "scores": quality.scores if quality else None, "total": quality.total if quality else None,
            "grader": quality.source if quality else None,
            "cited": cited(citations, row["gold"]),
            "invalid_citations": citations.invalid if citations else [],
            "retrieved": retrieval.numbers() if retrieval else [],
            "llm_calls": LLM_CALLS.get(state, 0), "llm_usage": LLM_USAGE.get(state) or {},
            "latency_s": round(latency, 2), "answer": FINAL_ANSWER.get(state) or "",
            "timings": TIMINGS.get(state) or {}, "errors": ERRORS.get(state) or [], "run": config,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds")}


async def _run(rows: list[dict], settings: Settings, progress: Progress, checkpoint: Path | None) -> list[dict]:
    from ..retrieval.retriever import get_retriever
    from ..workflow import ConditionalWorkflowAgent

    retriever = get_retriever(settings)
    manifest = retriever.index.manifest
    config = run_config(settings, f"{manifest.embedder_id}:{manifest.corpus_sha256[:16]}:{manifest.doc_count}")
    done = load_checkpoint(checkpoint, config) if checkpoint else {}
    agent = ConditionalWorkflowAgent(settings=settings, retriever_factory=lambda: retriever)
    out = []
    for i, row in enumerate(rows, start=1):
        if row["id"] in done:
            out.append(done[row["id"]])
            continue
        t0, first_text = time.perf_counter(), []

        def seen(event, t0=t0, first_text=first_text):  # the answer's first checked words, as a user sees them
            if not first_text and event.author == agent.answerer.name and user_text(event.content):
                first_text.append(time.perf_counter() - t0)

        state = await ask(agent, row["query"], on_event=seen, stream=True)
        result = question_result(row, state, time.perf_counter() - t0, config)
        result["first_text_s"] = round(first_text[0], 2) if first_text else None
        if checkpoint:
            _append(checkpoint, result)
        out.append(result)
        progress(i, len(rows), result)
    return out


ANSWERS = ("pass", "web", "degraded")  # the paths whose text is an answer built on articles


def _metrics(results: list[dict]) -> dict:
    """Pass/fail rates, citation precision/recall against gold, latency and LLM calls over one group of results."""
    in_scope = [r for r in results if r["gold"]]
    out_scope = [r for r in results if not r["gold"]]
    sets = [(keys(put_forward(r)), gold_keys(r["gold"])) for r in in_scope]
    precisions = [len(c & g) / len(c) for c, g in sets if c]
    recalls = [len(c & g) / len(g) for c, g in sets]
    latencies = sorted(r["latency_s"] for r in results)
    first_text = sorted(r["first_text_s"] for r in results if r.get("first_text_s") is not None)

    def mean(xs):
        return round(sum(xs) / len(xs), 4) if xs else None

    return {
        "n": len(results),
        "pass_rate_in_scope": mean([r["path"] == "pass" for r in in_scope]),
        "fail_rate_out_of_scope": mean([r["path"] != "pass" for r in out_scope]),
        "citation_precision": mean(precisions),
        "citation_recall": mean(recalls),
        "invalid_citation_rate": mean([bool(r["invalid_citations"]) for r in results if r["path"] in ANSWERS]),
        "p50_latency_s": latencies[len(latencies) // 2] if latencies else None,
        "p50_first_text_s": first_text[len(first_text) // 2] if first_text else None,
        "llm_calls_per_question": mean([r["llm_calls"] for r in results]),
        "paths": _counts(r["path"] for r in results),
        "routes": _counts(r.get("route") for r in results),
    }


def put_forward(result: dict) -> list:
    """The citations of an answer; a fixed reply (greeting, out of scope, nothing found) puts none forward, even
    when it names the nearest articles or an example such as 第十条 (older checkpoints recorded those)."""
    return result["cited"] if result["path"] in ANSWERS else []


def key(item):
    """An article number, or a (law, article) pair as a tuple (JSON gives lists)."""
    return tuple(item) if isinstance(item, list) else item


def keys(items: list) -> set:
    return set(map(key, items))


def _counts(values) -> dict[str, int]:
    values = [str(v) for v in values]
    return {v: values.count(v) for v in sorted(set(values))}


def summarize(results: list[dict]) -> dict:
    """The metrics over all results and, under by_type, per question type: the pooled numbers hide that exact
    lookups and chit-chat behave nothing like semantic questions."""
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(str(r.get("type")), []).append(r)
    return {**_metrics(results), "by_type": {t: _metrics(groups[t]) for t in sorted(groups)}}


def evaluate_e2e(rows: list[dict], settings: Settings, progress: Progress = lambda i, n, r: None,
                 checkpoint: Path | None = None) -> dict:
    results = asyncio.run(_run(rows, settings, progress, checkpoint))
    return {"summary": summarize(results), "questions": results}
