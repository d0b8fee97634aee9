"""Where the label rules say 视情况 on a yes/no question, the embedded model may still decide it — at the extremes.

Most of the label rules' misses are an honest 视情况 where a lawyer, reading the facts against the clause, concludes
(`conclusion`). Asked on the answer's own prefix whether the answer is yes (logit(是) − logit(否) after the ask
kind's tail, `prompt.POLARITY_TAIL`), the 1.5B separates little in the middle but its extremes are telling: fitted
on 213 labelled questions (`eval/polarity_decision.py`), at or above `above` the ask's positive label, at or below
`below` the negative one, else 视情况 stays. The thresholds are that model's: another model (an API model, a smaller
GGUF) keeps the rules' label, since its logits are on another scale.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import prompt
from .conclusion import OPPOSITE, ask_kind, fact_unstated

POSITIVE = {"permission": "可以", "right": "可以", "need": "需要"}  # the yes/no ask kinds (`prompt.POLARITY_TAIL`)
NEGATIVE = {kind: OPPOSITE[label] for kind, label in POSITIVE.items()}


@dataclass(frozen=True)
class PolarityModel:
    below: float  # logit difference at or below which the answer is the ask's negative label
    above: float  # … at or above which it is the positive one
    model: str  # the GGUF the thresholds were chosen for
    provenance: dict


@lru_cache(maxsize=1)
def polarity_model() -> PolarityModel:
    data = json.loads((resources.files("agentic_rag") / "resources" / "polarity_calibration.json").read_text("utf-8"))
    return PolarityModel(below=data["below"], above=data["above"], model=data["model"],
                         provenance=data.get("provenance", {}))


def tail(question: str, label: str, rule: str = "") -> str | None:
    """The model's task for a question the rules answered 视情况, if it is a yes/no question — not where they found
    the clause silent on the consent asked about (`conclusion.CONSENT_UNANSWERED`: the model's yes would be the
    clause's duty, not the ask's) or the child's age unstated (`conclusion.fact_unstated`)."""
    if label != "视情况" or fact_unstated(rule):
        return None
    return prompt.POLARITY_TAIL.get(ask_kind(question))


def decided(question: str, d: float, model: PolarityModel) -> str | None:
    """The label the logit decides, or None where it is not far enough from the middle."""
    kind = ask_kind(question)
    if d >= model.above:
        return POSITIVE[kind]
    if d <= model.below:
        return NEGATIVE[kind]
    return None
