"""The gate's relevance evidence from an API model: logprobs, where the provider returns them.

ADK's `LiteLlm` drops logprobs when it converts a response, so the evaluator's LiteLLM model is this subclass: its
`score_tails` (the protocol the embedded model implements, `llm.scoring`) asks in ONE call for 是/否 per article,
one numbered line each, with ``logprobs`` and ``top_logprobs``, and reads at each 是/否 token
d = logprob(是) − logprob(否). The softmax normaliser cancels, so d is the same logit difference the embedded model
gives and the calibrated judge (`stages/grade/judge.py`) takes it unchanged. When the other answer is not among the
listed alternatives, its logprob is bounded by the lowest listed one, so |d| is understated, never overstated.

A provider that returns no logprobs (or an answer that cannot be aligned with the articles) raises
`ScoringUnsupported`; the grade then asks for the JSON scores as before, and this model remembers not to ask again.
"""
from __future__ import annotations

import re
import time
from typing import Any

from google.adk.models.lite_llm import LiteLlm
from pydantic import PrivateAttr

from .scoring import ScoringUnsupported, TailScores

TOP_LOGPROBS = 20
_TASK = "【任务】逐条判断：依次回答下面 {n} 个问题，每行只写序号和“是”或“否”（例如：1：是），不要写别的内容。\n{items}"
_ANSWER = re.compile(r"(是|否)\s*$")


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _answer_of(token: str) -> str | None:
    m = _ANSWER.search(token or "")
    return m.group(1) if m else None


def token_diff(entry: Any) -> float:
    """logprob(是) − logprob(否) at one answer token, from its listed alternatives (the sampled one included)."""
    options = [(_get(t, "token"), _get(t, "logprob")) for t in (_get(entry, "top_logprobs") or [])]
    options.append((_get(entry, "token"), _get(entry, "logprob")))
    floor = min(lp for _, lp in options)
    best = {a: max((lp for tok, lp in options if _answer_of(tok) == a), default=floor) for a in ("是", "否")}
    return float(best["是"] - best["否"])


def diffs_from_logprobs(content: list[Any], n: int) -> list[float]:
    """The first `n` 是/否 answers of the reply, in order; ScoringUnsupported when there are fewer."""
    diffs = [token_diff(e) for e in content if _answer_of(_get(e, "token"))][:n]
    if len(diffs) < n:
        raise ScoringUnsupported(f"{len(diffs)} of {n} yes/no answers could be read from the logprobs")
    return diffs


def task(tails: list[str]) -> str:
    return _TASK.format(n=len(tails), items="\n".join(f"{i}. {t}" for i, t in enumerate(tails, 1)))


class LogprobLiteLlm(LiteLlm):
    """LiteLlm that can also score yes/no questions from the provider's logprobs (one call for all of them)."""

    _no_logprobs: bool = PrivateAttr(default=False)

    async def score_tails(self, system: str, prefix: str, tails: list[str]) -> TailScores:
        if self._no_logprobs:
            raise ScoringUnsupported("this provider returns no logprobs")
        started = time.perf_counter()
        args = {k: v for k, v in self._additional_args.items() if k != "response_format"}  # lines, not JSON
        response = await self.llm_client.acompletion(
            model=self.model, tools=None, temperature=0.0, max_tokens=8 * len(tails) + 16,
            logprobs=True, top_logprobs=TOP_LOGPROBS, **{**args, "drop_params": True},
            messages=[{"role": "system", "content": system}, {"role": "user", "content": prefix + task(tails)}])
        choices = _get(response, "choices") or [None]
        content = _get(_get(choices[0], "logprobs"), "content") if choices[0] is not None else None
        if not content:
            self._no_logprobs = True
            raise ScoringUnsupported("the provider returned no logprobs")
        usage = _get(response, "usage")
        return TailScores(diffs_from_logprobs(content, len(tails)), int(_get(usage, "prompt_tokens") or 0), 0,
                          time.perf_counter() - started)
