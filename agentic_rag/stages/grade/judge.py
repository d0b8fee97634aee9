"""The calibrated gate: the design's four dimensions computed from evidence, not from a sampled digit.

Evidence (all of it measured, none of it the model's opinion of itself):

* per article, d = logit(是) − logit(否) of the embedded model asked whether the article is the legal basis for
  the question (`llm.scoring`; CRAG-style per-document relevance), combined with the article's place in the
  ranking and its dense cosine into P(relevant) — the small model alone ranks worse than retrieval (on the PIPL
  set its best-scored article was gold 19 times in 40, the retriever's first 28), so its logit is one piece of
  evidence among three;
* retrieval signals (`Retrieval.signals`): the best dense cosine of the question, how much it stands out from the
  fifth, the share of the question's words the top article has, and whether an article was looked up by number.

The dense cosines here are the dense channel's hits: with a query adapter (`retrieval/adapter.py`), the adapted
question's, which is what the shipped weights were fitted on; they tell whether a lay question is one this knowledge
base answers far better than the plain question's (eval/calibrate_gate.py, docs/evaluation.md, stop 36).

The action (CRAG): PASS → correct; below PASS, ambiguous when the best article's P(relevant) still reaches
`ambiguous_relevance` (a hedged answer from it), else incorrect (the web, or "not in this knowledge base").

How they combine (each dimension is a calibrated probability × 10; PASS iff the total ≥ 32, i.e. they average
at least 0.8):

* 相关性 relevance    = 10 · max over articles of P(relevant | d, 1/rank, cosine)
* 准确性 accuracy     = 10 · P(answerable | d of the retriever's first pick, best cosine)
* 完整性 completeness = 10 · P(answerable | cosine, cosine margin, lexical overlap, exact lookup)
* 覆盖面 coverage     = 10 · min over sub-questions of the best P(relevant) among that sub-question's articles
  (= relevance for a single question)

The logistic weights are fitted on a dev part of the eval sets by `eval/calibrate_gate.py` and shipped in
`resources/gate_calibration.json` with their provenance. The four dimensions share one logit offset (`gate_shift`,
a prior shift chosen on dev) that puts the design's PASS ≥ 32/40 where out-of-scope questions fail at least nine
times in ten; articles whose unshifted P(relevant) reaches `relevant_threshold` (chosen on dev for citation
precision) are the ones the answer may cite (at least the best one).

Where the retrieval evidence alone already decides (`SkipModel`), the embedded model is not asked: the signals
gate's total (the same judge with the logit left out, `gate_calibration_signals.json`) below `fail_below` or above
`pass_above`, bounds chosen on dev as the widest where it decided as this gate did on every question, the same
article judged most relevant (`eval/calibrate_gate.py cascade`). That is about half of all questions, decided in
milliseconds.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

from ...retrieval.types import RetrievalSignals
from ...state import DIMENSIONS, Article, Quality, Retrieval

SIGNALS = tuple(RetrievalSignals.model_fields)  # best_cosine, cosine_margin, lexical_overlap, exact_hit


class SkipModel(NamedTuple):
    """The signals gate's totals outside which it decides as the model's gate would (on every dev question), for the
    PASS threshold they were chosen at: below `fail_below` FAIL, above `pass_above` PASS, with no model call."""
    fail_below: float
    pass_above: float
    threshold: float

    def decides(self, total: float, threshold: float) -> bool:
        return threshold == self.threshold and not self.fail_below <= total <= self.pass_above


@dataclass(frozen=True)
class Calibration:
    relevance: tuple[float, ...]  # intercept, weights of d, 1 / (rank + 1), the article's dense cosine
    accuracy: tuple[float, float, float]  # intercept, weight of the top article's d, of the best cosine
    completeness: tuple[float, ...]  # intercept, then one weight per SIGNALS entry
    relevant_threshold: float = 0.5
    gate_shift: float = 0.0  # logit offset of the four dimensions: where PASS ≥ 32 sits
    # CRAG's middle action: below PASS, an answer hedged from the best article when its P(relevant) reaches this
    ambiguous_relevance: float = 0.5
    skip_model: SkipModel | None = None
    provenance: dict = field(default_factory=dict)


CALIBRATIONS = {"logit": "gate_calibration.json", "signals": "gate_calibration_signals.json"}


@lru_cache(maxsize=2)
def calibration(evidence: str = "logit") -> Calibration:
    """The shipped weights: `logit` uses the model's per-article 是/否 logit, `signals` retrieval evidence alone
    (fitted with the logit taken out: its weights are 0, so its diffs are 0 and no model is called)."""
    name = CALIBRATIONS[evidence]
    data = json.loads((resources.files("agentic_rag") / "resources" / name).read_text("utf-8"))
    skip = data.get("skip_model")
    return Calibration(relevance=tuple(data["relevance"]), accuracy=tuple(data["accuracy"]),
                       completeness=tuple(data["completeness"]), relevant_threshold=data["relevant_threshold"],
                       gate_shift=data.get("gate_shift", 0.0), ambiguous_relevance=data.get("ambiguous_relevance", 0.5),
                       skip_model=SkipModel(skip["fail_below"], skip["pass_above"], skip["threshold"]) if skip else None,
                       provenance=data.get("provenance", {}))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


def linear(weights: tuple[float, ...], values: list[float]) -> float:
    return weights[0] + sum(w * v for w, v in zip(weights[1:], values))


def article_evidence(article: Article, rank: int, d: float) -> list[float]:
    return [d, 1.0 / (rank + 1), float(article.channels.get("vector", {}).get("score", 0.0))]


def article_probabilities(articles: list[Article], diffs: list[float], cal: Calibration,
                          shift: float = 0.0) -> dict[str, float]:
    return {a.id: round(sigmoid(linear(cal.relevance, article_evidence(a, i, d)) + shift), 4)
            for i, (a, d) in enumerate(zip(articles, diffs))}


def weakest_sub_question(subs: list[int | None], values: list[float]) -> float:
    """The weakest sub-question's best value (coverage; `subs[i]` is article i's sub-question). Articles of no
    sub-question (those the evidence refers to, those the previous turn cited) are not a sub-question of their own:
    they would set a multi-intent question's coverage. eval/calibrate_gate.py scores its features with it too."""
    pairs = [(s, v) for s, v in zip(subs, values) if s is not None] or list(zip(subs, values))
    best: dict[int | None, float] = {}
    for sub, value in pairs:
        best[sub] = max(best.get(sub, value), value)
    return min(best.values())


def judge(retrieval: Retrieval, articles: list[Article], diffs: list[float], threshold: int,
          cal: Calibration | None = None) -> Quality:
    """The four scores from the relevance logits of `articles` and the retrieval's signals."""
    cal = cal or calibration()
    probs = article_probabilities(articles, diffs, cal)
    gated = article_probabilities(articles, diffs, cal, cal.gate_shift)
    best = max(articles, key=lambda a: probs[a.id])
    signals = retrieval.signals.vector(SIGNALS)
    p = {"relevance": gated[best.id],
         "accuracy": sigmoid(linear(cal.accuracy, [diffs[0], signals[0]]) + cal.gate_shift),
         "completeness": sigmoid(linear(cal.completeness, signals) + cal.gate_shift),
         "coverage": weakest_sub_question([a.sub_question for a in articles], [gated[a.id] for a in articles])}
    scores = {d: round(10 * p[d], 1) for d in DIMENSIONS}
    total = round(sum(scores.values()), 1)
    relevant = [a.id for a in articles if probs[a.id] >= cal.relevant_threshold] or [best.id]
    reasons = {"relevance": f"最相关：{best.title}（P={probs[best.id]:.2f}）",
               "accuracy": f"首选条文 {articles[0].title}，最高相似度 {signals[0]:.2f}",
               "completeness": "检索信号：" + "，".join(f"{k}={v:.2f}" for k, v in zip(SIGNALS, signals)),
               "coverage": f"各子问题最相关条文的最低 P={p['coverage']:.2f}"}
    passed = total >= threshold
    action = "correct" if passed else "ambiguous" if probs[best.id] >= cal.ambiguous_relevance else "incorrect"
    return Quality(scores=scores, reasons=reasons, total=total, threshold=threshold, passed=passed,
                   verdict="pass" if passed else "fail", source="calibrated", relevant=relevant,
                   missing="" if passed else "检索到的条文与问题的相关性不足", article_relevance=probs, action=action)
