"""Is a first message too vague to retrieve for? A logistic model over the embedder's vector of the message.

The lexical rule (`signals.vague`: a generic form such as 怎么办 / 合法吗 and no content noun) was written from the
conversation set's few vague openers. On openers written blind (`eval/vague_openers.jsonl`, its held-out half) it
asked back only 10 of 29 vague ones and 2 of 31 clear ones: users say "nothing happened yet" in more words than a
lexicon holds (求助！！急！！, 和邻居闹矛盾了，法律上怎么说) and state facts in words jieba tags oddly (拖欠工资).
A message's vector places it among messages that do or do not say what happened; the weights are fitted by
`eval/fit_vague_opener.py` on labelled openers and dev questions and shipped in `resources/vague_opener.json` with
the embedder they belong to. With another embedder (an API or BGE-M3 index), the lexical rule decides.

What no model decides: a message longer than 40 characters, one that cites an article or names a law, a definition
question and a greeting are never vague.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from ...legal.refs import find_article_refs
from ..grade.judge import sigmoid
from ..router.signals import is_chitchat
from . import signals

log = logging.getLogger(__name__)

RESOURCE = "vague_opener.json"


@dataclass(frozen=True)
class OpenerModel:
    embedder_id: str
    weights: np.ndarray  # one per vector dimension
    bias: float
    threshold: float  # P(vague) at or above which the message is asked back

    def probability(self, vector: np.ndarray) -> float:
        return sigmoid(float(vector @ self.weights) + self.bias)


@lru_cache(maxsize=1)
def shipped() -> OpenerModel | None:
    try:
        data = json.loads((resources.files("agentic_rag") / "resources" / RESOURCE).read_text("utf-8"))
        return OpenerModel(data["embedder_id"], np.asarray(data["weights"], dtype=np.float32), float(data["bias"]),
                           float(data["threshold"]))
    except (OSError, KeyError, ValueError) as e:  # a damaged resource must not stop first questions
        log.warning("vague-opener model not loaded (%s): the lexical rule decides", e)
        return None


def never_vague(message: str) -> bool:
    return (len(message) > signals.VAGUE_MAX_CHARS or bool(find_article_refs(message)) or signals.names_law(message)
            or signals.asks_definition(message) or is_chitchat(message))


def vague(message: str, embedder=None, model: OpenerModel | None = None) -> str | None:
    """Why `message`, a first message, is too vague to retrieve for, or None. `embedder`: the knowledge base's."""
    if never_vague(message):
        return None
    model = model or shipped()
    if embedder is None or model is None or getattr(embedder, "model_id", None) != model.embedder_id \
            or getattr(embedder, "dim", None) != model.weights.shape[0]:
        return signals.vague(message)
    p = model.probability(embedder.encode_queries([message])[0])
    return "没有说明发生了什么事、涉及什么" if p >= model.threshold else None
