"""Probabilities from the embedded model's logits: how strongly it answers 是 rather than 否, for several questions
that share one prompt prefix.

A small model is a poor judge when it samples a digit (the 1.5B gave 8/8/8/8 to almost everything) but its
next-token logits still rank: logit(是) − logit(否) after "does this article govern the question?" is a usable,
calibratable relevance signal (CRAG-style per-document relevance). The prefix (system message, question, the
articles block) is evaluated once; each article's question is only its short tail, evaluated on top of the cached
prefix. The answer prompt starts with the same prefix, so llama.cpp reuses it there too.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

CHATML_HEAD = "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"
CHATML_TAIL = "<|im_end|>\n<|im_start|>assistant\n"


class ScoringUnsupported(RuntimeError):
    """This model cannot give the logits: its chat template is not ChatML (tails cannot be appended to a shared
    prefix safely), its provider returns no logprobs, or the gate is configured to grade in JSON."""


@dataclass
class TailScores:
    diffs: list[float]  # logit(是) − logit(否) per tail
    prefix_tokens: int
    reused_tokens: int  # prefix tokens already in the KV cache (the previous call shared them)
    seconds: float


def _tokens(llama, text: str) -> list[int]:
    return llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)


def common_prefix(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def eval_prefix(llama, system: str, prefix: str) -> tuple[int, int]:
    """Evaluate the ChatML head and `prefix`, reusing what the KV cache already holds of them; (its tokens, reused)."""
    head = _tokens(llama, CHATML_HEAD.format(system=system) + prefix)
    reused = min(common_prefix(llama.input_ids[: llama.n_tokens], head), len(head) - 1)
    llama.n_tokens = reused  # eval() drops the KV cache beyond n_tokens before it evaluates
    llama.eval(head[reused:])
    return len(head), reused


def yes_no_diffs(llama, system: str, prefix: str, tails: list[str], stop: threading.Event | None = None) -> TailScores:
    """logit(是) − logit(否) after each tail; the caller holds the model's lock. When `stop` is set (the caller gave
    up) the tails left are not evaluated: fewer diffs than tails come back."""
    if "<|im_start|>" not in str((llama.metadata or {}).get("tokenizer.chat_template", "")):
        raise ScoringUnsupported("the local model's chat template is not ChatML")
    started = time.perf_counter()
    yes, no = _tokens(llama, "是")[0], _tokens(llama, "否")[0]
    prefix_tokens, reused = eval_prefix(llama, system, prefix)
    base = llama.n_tokens
    diffs = []
    for tail in tails:
        if stop is not None and stop.is_set():
            break
        llama.n_tokens = base
        llama.eval(_tokens(llama, tail + CHATML_TAIL))
        logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))
        diffs.append(float(logits[yes] - logits[no]))
    return TailScores(diffs, prefix_tokens, reused, time.perf_counter() - started)
