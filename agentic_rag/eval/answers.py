"""The answers evaluation: what an answer SAYS, scored against a lawyer's labels (eval/answers_eval.jsonl).

Per question (both knowledge bases in one run: the PIPL index and the six-law index):

* answered_from_governing — the answer's basis (the articles it quotes or cites, checked) includes a governing
  article; built_on_wrong_article — it answers from articles none of which governs;
* conclusion_correct — the conclusion read from the answer's first sentence (「结论：不可以。…」, or for answers
  without that line the first polarity word) equals the reference label;
* key_point_recall and must_not — the labelled regexes on the answer text (whitespace removed);
* model_sentences / model_unsupported_proxy — the sentences the model wrote (recorded by the answer stage) and the
  share of them with less than half of their character bigrams in the given articles or the question: a cheap,
  independent proxy (the expert read in eval/results is the real measure); model_unsupported_shown — those of them
  the user reads in the final answer (the stage's support check drops the rest, and a task written back is never
  shown), a bare label (「需要。」, the conclusion itself) not counted;
* refused (the "not in the knowledge base" reply), hedged (the ambiguous action), latency, first text, LLM calls;
* refusal_lists — where the refusal lists the nearest articles for the user to pick from, whether a governing one
  is among them ("first", "listed", "no"): a reply of its number answers from it (`conversation.refusal_pending`).

Out-of-scope rows (out_of_kb / chitchat) are correct when no knowledge-base answer is given. Resumable like e2e:
each finished question is appended to a checkpoint that records the configuration it ran with.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path

from ..config import Settings
from ..conversation import offered_articles
from ..oneshot import ask
from ..stages.answer.conclusion import OPPOSITE, POLARITY_LABELS, SHOWN_AS, SHOWN_LAWFUL
from ..stages.base import user_text
from ..state import ANSWER, CITATIONS, FINAL_ANSWER, LLM_CALLS, PATH, QUALITY, RETRIEVAL, TIMINGS
from .e2e import CheckpointMismatchError, _append, key, run_config
from .retrieval import gold_keys

LABELS = ("不可以", "不需要", "视情况", "可以", "需要", "说明", "不适用")
ANSWER_PATHS = ("pass", "hedged", "web", "degraded")
REFUSAL_PATHS = ("none", "out_of_kb", "chitchat", "rejected", "error")
# The first polarity word of an answer without a 结论 line (negative forms first: 不可以 contains 可以).
_POLARITY = [("不可以", r"不可以|不能|不得|不合法|不允许|违法|无权|禁止"), ("不需要", r"不需要|无需|不必|不用"),
             ("视情况", r"视情况|取决于|要看|分情况|视具体"), ("需要", r"需要|应当|必须|须"),
             ("可以", r"可以|能够|合法|有权|允许")]
# 「结论：属于。」 shows a 需要 label, 「结论：不合法。」 a 不可以 one (`conclusion.shown_label`)
_SHOWN_LABEL = {shown: label for label, shown in (*SHOWN_AS.items(), *SHOWN_LAWFUL.items())}
_CONCLUSION = re.compile(r"结论\**\s*[:：]\s*\**\s*(" + "|".join((*_SHOWN_LABEL, *LABELS)) + ")")
_SENTENCE = re.compile(r"[^。！？；\n]+[。！？；]?")
_EXPLAINED = re.compile(r"^\**答复\**\s*[:：]", re.M)  # how-to and lookup answers: an explanation, no polar label


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text or "")


def conclusion_label(answer: str) -> str | None:
    """The label an answer concludes with: its 结论 line, else the first polarity word of its first sentences."""
    m = _CONCLUSION.search(answer or "")
    if m:
        return _SHOWN_LABEL.get(m.group(1), m.group(1))
    if _EXPLAINED.search(answer or ""):
        return "说明"
    body = re.sub(r"^#.*$|^\s*>.*$", "", answer or "", flags=re.M)
    for sentence in _SENTENCE.findall(body)[:3]:
        hits = [(m.start(), label) for label, pattern in _POLARITY for m in [re.search(pattern, sentence)] if m]
        if hits:
            return min(hits)[1]
    return None


def matches(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def bigram_support(sentence: str, sources: str) -> float:
    """Share of the sentence's character bigrams (CJK and digits) found in the sources."""
    chars = re.sub(r"[^\u4e00-\u9fff0-9]", "", sentence)
    grams = {chars[i:i + 2] for i in range(len(chars) - 1)}
    return sum(g in sources for g in grams) / len(grams) if grams else 1.0


def old_form_sentences(text: str) -> list[str]:
    """The model-written part of an answer of the earlier form (listing by code, then ## 问题分析 by the model)."""
    start = text.find("## 问题分析")
    if start < 0:
        return []
    body = re.split(r"\*\*免责声明\*\*|\n> 核对说明", text[start:])[0]
    body = re.sub(r"^#+.*$", "", body, flags=re.M)
    return [s.strip() for s in _SENTENCE.findall(body) if len(re.sub(r"[^\u4e00-\u9fff]", "", s)) >= 4]


def score(row: dict, state: dict) -> dict:
    """One question's scores from the final session state."""
    text = FINAL_ANSWER.get(state) or ""
    flat, path = squash(text), PATH.get(state)
    citations, answer = CITATIONS.get(state), ANSWER.get(state)
    as_key = key if row["kb"] == "multilaw" else itemgetter(1)
    cited = {as_key(p) for p in citations.listed + citations.valid_keys} if citations is not None else set()
    gold = gold_keys(row["gold"])
    offered = [as_key((a.law, a.article)) for a in offered_articles(state)] if path == "none" else []
    answered = path in ANSWER_PATHS
    # the label the answer shows (its 结论 line); a lookup shows the article itself, which the stage records as 说明
    label = (answer.asks[0].label if answer and answer.asks and answer.asks[0].rule == "lookup"
             else conclusion_label(text)) if answered else None
    sentences = [s.text for s in answer.sentences] if answer else old_form_sentences(text)
    retrieval = RETRIEVAL.get(state)
    sources = squash((row["query"] or "") + "".join(a.text for a in (retrieval.articles if retrieval else [])))
    return {
        "answered": answered, "refused": path in REFUSAL_PATHS, "hedged": path == "hedged",
        "answered_from_governing": answered and bool(cited & gold),
        "built_on_wrong_article": answered and bool(gold) and not (cited & gold),
        "label": label, "conclusion_correct": label == row["conclusion"]["label"] if row["gold"] else not answered,
        "key_points": [matches(k["patterns"], flat) for k in row["key_points"]],
        "must_not": [m["claim"] for m in row["must_not"] if matches(m["patterns"], flat)],
        "model_sentences": sentences,
        "model_unsupported_proxy": (unsupported := [s for s in sentences if bigram_support(s, sources) < 0.5]),
        "model_unsupported_shown": shown_claims(unsupported, text),
        "cited": sorted(map(str, cited)),
        "refusal_lists": (None if not offered or not gold else "first" if offered[0] in gold
                          else "listed" if set(offered) & gold else "no"),
    }


BARE_LABEL = re.compile(rf"({'|'.join(POLARITY_LABELS)})[。.]?")


def shown_claims(sentences: list[str], text: str) -> list[str]:
    """The sentences of `sentences` the final answer shows, other than a bare label (the conclusion, scored apart)."""
    return [s for s in sentences if s.strip() in text and not BARE_LABEL.fullmatch(s.strip())]


def _reference(r: dict) -> str | None:
    return (r.get("reference") or r.get("conclusion") or {}).get("label")  # a checkpoint line / a labelled row


def _mean(xs) -> float | None:
    xs = list(xs)
    return round(sum(xs) / len(xs), 4) if xs else None


def _p50(xs) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def metrics(results: list[dict]) -> dict:
    """The user-facing numbers over one group of results."""
    scope = [r for r in results if r["gold"]]
    out = [r for r in results if not r["gold"]]
    answered = [r for r in scope if r["answered"]]
    sentences = [s for r in answered for s in r["model_sentences"]]
    return {
        "n": len(results), "n_in_scope": len(scope),
        "answered_from_governing": _mean(r["answered_from_governing"] for r in scope),
        "built_on_wrong_article": _mean(r["built_on_wrong_article"] for r in scope),
        "conclusion_accuracy": _mean(r["conclusion_correct"] for r in scope),
        "conclusion_accuracy_answered": _mean(r["conclusion_correct"] for r in answered),
        "wrong_conclusion": _mean(r["answered"] and r["label"] is not None and not r["conclusion_correct"]
                                  for r in scope),
        # the opposite of the lawyer's polarity (可以 for 不可以 …); an honest 视情况 is not counted here
        "opposite_conclusion": _mean(r["answered"] and OPPOSITE.get(_reference(r)) == r["label"] for r in scope),
        "key_point_recall": _mean(x for r in scope for x in r["key_points"]),
        "answers_with_must_not": _mean(bool(r["must_not"]) for r in answered),
        "model_sentences_per_answer": _mean(len(r["model_sentences"]) for r in answered),
        "model_unsupported_proxy": _mean(s in r["model_unsupported_proxy"] for r in answered
                                         for s in r["model_sentences"]) if sentences else None,
        # what the user reads: answers showing a model sentence the proxy finds unsupported (older lines lack it)
        "answers_showing_unsupported": _mean(bool(r["model_unsupported_shown"]) for r in answered
                                             if "model_unsupported_shown" in r),
        "refused": _mean(r["refused"] for r in scope), "hedged": _mean(r["hedged"] for r in scope),
        # of in-scope refusals: the governing article offered first / among the options (older lines lack the field)
        "refusal_lists_governing_first": _mean(r["refusal_lists"] == "first" for r in scope
                                               if r["refused"] and "refusal_lists" in r),
        "refusal_lists_governing": _mean(r["refusal_lists"] in ("first", "listed") for r in scope
                                         if r["refused"] and "refusal_lists" in r),
        "out_of_scope_rejected": _mean(not r["answered"] for r in out),
        "p50_latency_s": _p50(r["latency_s"] for r in results),
        "p50_first_text_s": _p50(r.get("first_text_s") for r in results),
        "llm_calls_per_question": _mean(r["llm_calls"] for r in results),
    }


def summarize(results: list[dict]) -> dict:
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(r["type"], []).append(r)
        groups.setdefault(f"kb:{r['kb']}", []).append(r)
    return {**metrics(results), "by_type": {t: metrics(rs) for t, rs in sorted(groups.items())}}


Progress = Callable[[int, int, dict], None]


def result_of(row: dict, state: dict, latency: float, first_text: float | None, run: dict) -> dict:
    """One checkpoint line: the question, what the workflow did, its scores and its time."""
    quality = QUALITY.get(state)
    return {"id": row["id"], "kb": row["kb"], "type": row["type"], "split": row["split"], "gold": row["gold"],
            "reference": row["conclusion"], "path": PATH.get(state), "gate": quality.summary() if quality else None,
            **score(row, state), "latency_s": round(latency, 2),
            "first_text_s": round(first_text, 2) if first_text is not None else None,
            "llm_calls": LLM_CALLS.get(state, 0), "timings": TIMINGS.get(state) or {},
            "answer": FINAL_ANSWER.get(state) or "", "run": run}


def finished(path: Path, configs: list[dict]) -> dict[str, dict]:
    """Results already in the checkpoint; a line of another configuration is refused (never pooled)."""
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            result = json.loads(line)
        except json.JSONDecodeError:  # a line torn by a kill: that question runs again
            continue
        if result.get("run") not in configs:
            raise CheckpointMismatchError(f"{path}:{n} was made with another configuration: use another file")
        done[result["id"]] = result
    return done


async def _run(rows: list[dict], settings_by_kb: dict[str, Settings], progress: Progress,
               checkpoint: Path | None, label: str) -> list[dict]:
    from ..retrieval.retriever import get_retriever
    from ..workflow import ConditionalWorkflowAgent

    agents, configs = {}, {}
    for kb, settings in settings_by_kb.items():
        retriever = get_retriever(settings)  # one per knowledge base (per settings), shared with its agent
        m = retriever.index.manifest
        configs[kb] = {**run_config(settings, f"{m.embedder_id}:{m.corpus_sha256[:16]}:{m.doc_count}"),
                       "label": label}
        agents[kb] = ConditionalWorkflowAgent(settings=settings)
    done = finished(checkpoint, list(configs.values())) if checkpoint else {}
    out = []
    for i, row in enumerate(rows, start=1):
        if row["id"] in done:
            out.append(done[row["id"]])
            continue
        agent = agents[row["kb"]]
        t0, first_text = time.perf_counter(), []

        def seen(event, t0=t0, first_text=first_text, name=agent.answerer.name):
            if not first_text and event.author == name and user_text(event.content):
                first_text.append(time.perf_counter() - t0)

        state = await ask(agent, row["query"], on_event=seen, stream=True)
        result = result_of(row, state, time.perf_counter() - t0, first_text[0] if first_text else None,
                           configs[row["kb"]])
        if checkpoint:
            _append(checkpoint, result)
        out.append(result)
        progress(i, len(rows), result)
    return out


def load_rows(path: Path, split: str | None = None, kbs: tuple[str, ...] = ("pipl", "multilaw")) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if (split is None or r["split"] == split) and r["kb"] in kbs]


def evaluate_answers(rows: list[dict], settings_by_kb: dict[str, Settings], progress: Progress = lambda *a: None,
                     checkpoint: Path | None = None, label: str = "") -> dict:
    results = asyncio.run(_run(rows, settings_by_kb, progress, checkpoint, label))
    return {"summary": summarize(results), "questions": results}
