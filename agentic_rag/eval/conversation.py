"""Conversation evaluation (issue 19): eval/conversation_eval.jsonl replayed through the whole agent.

    python -m agentic_rag.eval conversation --dataset eval/conversation_eval.jsonl [--split dev|test|all]
           [--mode on|off|both] [--pipl-dir data] [--multilaw-dir data-multilaw] [--checkpoint F] [--json F]

`on`: the turns of a conversation in order, in one session (ADK's InMemoryRunner with the app's plugins), so a
follow-up is understood with the history and a vague opener gets the clarifying question whose reply follows.
`off`: every turn asked on its own, in a fresh session (no history): the baseline.
`both`: on, then every later turn of the conversation alone as well, in the same run (`summary` is on,
`summary_alone` the baseline, whose first turns are on's: a first turn never reads history).

Per turn kind (first, pronoun, ellipsis, penalty, more, law_change, topic_switch, vague_first, clarify_reply):

* answered_from_gold — the answer puts forward (lists or cites and verifies) a gold article: `citations.listed` /
  `valid_keys` ∩ gold, on a path whose text is an answer built on articles (`e2e.ANSWERS`: pass / web / degraded;
  a hedged answer is not counted);
* retrieved_gold — a gold article is among the articles retrieved (evidence, history and follow-up candidates);
* clarified — the turn ended with a clarifying question: wanted on vague_first, never elsewhere;
* contextualise_calls, contextualise_s — model calls of the contextualise step per turn and its seconds;
* must_keep — share of the turn's must_keep words in the question the pipeline answered;
* unchanged — first turns: the question is the message and no contextualise call was made;
* history_used — the turn was understood with the history (wanted on follow-ups, never on topic switches).

The cheap signals (follow-up / self-contained, vague opener) are also scored on the split without running the
agent (`signals`). Results are checkpointed per conversation (JSONL, resumable; a file of another configuration is
refused), as in `e2e`.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from google.adk.apps import App

from ..config import Settings
from ..llm.models import ROLES, model_name
from ..oneshot import converse
from ..stages.contextualise import prompt as contextualise_prompt
from ..stages.contextualise import signals
from ..state import CITATIONS, CONTEXT, FINAL_ANSWER, LLM_CALLS, PATH, QUALITY, QUESTION, RETRIEVAL, TIMINGS
from .e2e import ANSWERS, PROMPT_MODULES, _append, cited, keys, load_checkpoint
from .retrieval import gold_keys

KINDS = ("first", "pronoun", "ellipsis", "penalty", "more", "law_change", "topic_switch", "vague_first",
         "clarify_reply")
FOLLOW_UP_KINDS = ("pronoun", "ellipsis", "penalty", "more", "law_change")
FIRST_KINDS = ("first", "vague_first")
MODES = ("on", "off", "both")
Progress = Callable[[int, int, dict], None]


def load_conversations(path: Path, split: str = "all", kbs: tuple[str, ...] = ("pipl", "multilaw")) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r for r in rows if (split == "all" or r["split"] == split) and r["kb"] in kbs]


def run_config(settings: Settings, mode: str, indexes: dict[str, str]) -> dict:
    """What must be equal for results to be pooled: models, prompts (the contextualiser's too), mode, indexes."""
    modules = (*PROMPT_MODULES, contextualise_prompt)
    text = "".join(v for module in modules for k, v in sorted(vars(module).items())
                   if k.isupper() and isinstance(v, str))
    return {"models": {role: model_name(role, settings) for role in ROLES},
            "prompts": hashlib.sha256(text.encode()).hexdigest()[:12], "threshold": settings.quality_threshold,
            "mode": mode, "indexes": indexes}


def retrieved_keys(state: dict, gold: list) -> set:
    retrieval = RETRIEVAL.get(state)
    if retrieval is None:
        return set()
    if gold and isinstance(gold[0], dict):
        return {(a.law, a.article) for a in retrieval.articles}
    return {a.article for a in retrieval.articles}


def gate_view(state: dict, gold: list) -> dict | None:
    """The gate's four scores and whether its most relevant article is gold (the scores are calibrated
    probabilities × 10: a threshold or logit shift can be replayed on them without asking the model again)."""
    quality, retrieval = QUALITY.get(state), RETRIEVAL.get(state)
    if quality is None or retrieval is None or not quality.article_relevance:
        return None
    several = bool(gold and isinstance(gold[0], dict))
    key = {a.id: (a.law, a.article) if several else a.article for a in retrieval.articles}
    best = max(quality.article_relevance, key=quality.article_relevance.get)
    return {"scores": quality.scores, "total": quality.total, "action": quality.act,
            "best_is_gold": key.get(best) in gold_keys(gold) if gold else False}


def turn_result(turn: dict, index: int, state: dict, latency: float) -> dict:
    """One turn of a conversation: what the agent did with it (read through the state slots)."""
    context, citations = CONTEXT.get(state), CITATIONS.get(state)
    path, question = PATH.get(state), QUESTION.get(state) or ""
    gold = gold_keys(turn["gold"])
    put_forward = keys(cited(citations, turn["gold"])) if path in ANSWERS else set()
    timings = TIMINGS.get(state) or {}
    return {"turn": index + 1, "kind": turn["kind"], "expect": turn["expect"], "user": turn["user"],
            "question": question, "path": path, "clarified": path == "clarify",
            "context": context.kind if context else None, "source": context.source if context else None,
            "error": context.error if context else None,
            "contextualise_calls": int(bool(context and context.called)),
            "contextualise_s": round(timings.get("contextualise", 0.0), 3),
            "must_keep": [w for w in turn["must_keep"] if w in question], "must_keep_of": len(turn["must_keep"]),
            "gold": turn["gold"], "cited": sorted(map(str, put_forward)),
            "answered_from_gold": bool(gold and put_forward & gold),
            "retrieved_gold": bool(gold and retrieved_keys(state, turn["gold"]) & gold),
            "llm_calls": LLM_CALLS.get(state, 0), "latency_s": round(latency, 2),
            "gate": gate_view(state, turn["gold"]), "answer": FINAL_ANSWER.get(state) or ""}


async def _alone(app: App, turns: list[dict]) -> list[dict]:
    """Each turn asked on its own, in a fresh session (no history)."""
    out = []
    for i, turn in turns:
        t0 = time.perf_counter()
        state = (await converse(app, [turn["user"]]))[0]
        out.append(turn_result(turn, i, state, time.perf_counter() - t0))
    return out


async def _in_session(app: App, row: dict) -> list[dict]:
    texts = [t["user"] for t in row["turns"]]
    start, last = time.perf_counter(), {}

    def seen(turn: int, event) -> None:  # the time of each turn's last event
        last[turn] = time.perf_counter()

    states = await converse(app, texts, on_event=seen)
    ends = [last.get(i, start) for i in range(len(texts))]
    latencies = [end - (ends[i - 1] if i else start) for i, end in enumerate(ends)]
    return [turn_result(turn, i, state, latency)
            for i, (turn, state, latency) in enumerate(zip(row["turns"], states, latencies))]


async def _conversation(app: App, row: dict, mode: str) -> list[dict]:
    """`both`: in one session, then every later turn alone too (under "alone"); a first turn is not asked twice
    (it never reads history: `first_turns_unchanged` checks that)."""
    if mode == "off":
        return await _alone(app, list(enumerate(row["turns"])))
    turns = await _in_session(app, row)
    if mode == "both":
        later = [(i, t) for i, t in enumerate(row["turns"]) if t["kind"] not in FIRST_KINDS]
        for result in await _alone(app, later):
            turns[result["turn"] - 1]["alone"] = result
    return turns


async def _run(rows: list[dict], apps: dict[str, App], mode: str, config: dict, progress: Progress,
               checkpoint: Path | None) -> list[dict]:
    done = load_checkpoint(checkpoint, config) if checkpoint else {}
    out = []
    for i, row in enumerate(rows, start=1):
        if row["id"] in done:
            out.append(done[row["id"]])
            continue
        turns = await _conversation(apps[row["kb"]], row, mode)
        result = {"id": row["id"], "kb": row["kb"], "split": row["split"], "turns": turns, "run": config,
                  "finished_at": datetime.now(UTC).isoformat(timespec="seconds")}
        if checkpoint:
            _append(checkpoint, result)
        out.append(result)
        progress(i, len(rows), result)
    return out


def _mean(values) -> float | None:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 4) if values else None


def _metrics(turns: list[dict]) -> dict:
    answer = [t for t in turns if t["expect"] == "answer"]
    clarify = [t for t in turns if t["expect"] == "clarify"]
    called = [t for t in turns if t["contextualise_calls"]]
    return {
        "n": len(turns),
        "answered_from_gold": _mean(t["answered_from_gold"] for t in answer),
        "retrieved_gold": _mean(t["retrieved_gold"] for t in answer),
        "clarified_when_expected": _mean(t["clarified"] for t in clarify),
        "clarified_when_not": _mean(t["clarified"] for t in answer),
        "contextualise_calls_per_turn": _mean(t["contextualise_calls"] for t in turns),
        "contextualise_s_per_call": _mean(t["contextualise_s"] for t in called),
        "fallback_share_of_calls": _mean(t["source"] == "fallback" for t in called),
        "history_used": _mean(t["context"] in ("follow_up", "clarify_reply") for t in turns),
        "must_keep_kept": _mean(len(t["must_keep"]) / t["must_keep_of"] for t in turns
                                if t["must_keep_of"] and t["kind"] not in ("first", "vague_first")),
        "llm_calls_per_turn": _mean(t["llm_calls"] for t in turns),
        "latency_s_p50": round(statistics.median(t["latency_s"] for t in turns), 2) if turns else None,
        "paths": {p: sum(1 for t in turns if t["path"] == p) for p in sorted({str(t["path"]) for t in turns})},
    }


def summarize(results: list[dict], rows: list[dict]) -> dict:
    by_id = {r["id"]: r for r in rows}
    turns = [{**t, "conversation": result["id"]} for result in results for t in result["turns"]]
    first = [t for t in turns if t["kind"] == "first"]
    follow = [t for t in turns if t["kind"] in FOLLOW_UP_KINDS]
    return {**_metrics(turns),
            "first_turns_unchanged": _mean(t["question"] == t["user"] and not t["contextualise_calls"] for t in first),
            "follow_ups": _metrics(follow),
            "by_kind": {k: _metrics([t for t in turns if t["kind"] == k]) for k in KINDS
                        if any(t["kind"] == k for t in turns)},
            "by_kb": {kb: _metrics([t for t in turns if by_id[t["conversation"]]["kb"] == kb])
                      for kb in sorted({r["kb"] for r in rows})}}


def signal_report(rows: list[dict]) -> dict:
    """The cheap rules alone, on the given conversations: follow-up detection on turns after the first (clarify
    replies aside) and the lexical vague-opener rule on first turns. No agent, no model (the shipped vague decision
    is the embedder's model where it matches: `stages/contextualise/vagueness.py`, `eval/fit_vague_opener.py`)."""
    tp = fp = fn = tn = 0
    vague = {"flagged_vague": 0, "vague": 0, "flagged_first": 0, "first": 0}
    misses = []
    for row in rows:
        for i, turn in enumerate(row["turns"]):
            kind, user = turn["kind"], turn["user"]
            if i == 0:
                flagged = signals.vague(user) is not None
                key = "vague" if kind == "vague_first" else "first"
                vague[key] += 1
                vague[f"flagged_{key}"] += flagged
                continue
            if kind == "clarify_reply":
                continue
            predicted, gold = signals.reading(user).follow_up, kind in FOLLOW_UP_KINDS
            tp, fp, fn, tn = tp + (predicted and gold), fp + (predicted and not gold), fn + (gold and not predicted), \
                tn + (not predicted and not gold)
            if predicted != gold:
                misses.append({"id": row["id"], "turn": i + 1, "kind": kind, "user": user})
    return {"follow_up": {"precision": _mean([1] * tp + [0] * fp), "recall": _mean([1] * tp + [0] * fn),
                          "tp": tp, "fp": fp, "fn": fn, "tn": tn, "misses": misses},
            "vague_opener": vague}


def evaluate_conversations(rows: list[dict], apps: dict[str, App], mode: str, config: dict,
                           progress: Progress = lambda i, n, r: None, checkpoint: Path | None = None) -> dict:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    missing = sorted({r["kb"] for r in rows} - set(apps))
    if missing:
        raise ValueError(f"no index for the {', '.join(missing)} conversations (--pipl-dir / --multilaw-dir)")
    results = asyncio.run(_run(rows, apps, mode, config, progress, checkpoint))
    out = {"summary": summarize(results, rows), "signals": signal_report(rows), "conversations": results}
    if mode == "both":
        alone = [{**r, "turns": [t.get("alone", t) for t in r["turns"]]} for r in results]
        out["summary_alone"] = summarize(alone, rows)
        out["follow_ups_on_vs_alone"] = compare(out["summary"]["follow_ups"], out["summary_alone"]["follow_ups"])
    return out


def compare(on: dict, alone: dict) -> dict:
    keys = ("answered_from_gold", "retrieved_gold", "llm_calls_per_turn", "latency_s_p50")
    return {k: {"on": on.get(k), "alone": alone.get(k)} for k in keys}
