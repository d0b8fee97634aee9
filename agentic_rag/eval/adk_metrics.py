"""Custom metrics for `adk eval` (named in agentic_rag/test_config*.json under `custom_metrics`): deterministic checks
that fit this app's answers, where ADK's built-in text metrics cannot tell a right answer from a wrong one.

ADK's `response_match_score` is ROUGE-1 over characters for Chinese: 「结论：不可以」 and 「结论：可以」 score 0.95 against
each other, and an answer that quotes the right article verbatim overlaps a reference of another conclusion about as
much as one of the same. So two checks carry the verdict:

* `conclusion_match` — the label of the answer's 「结论：…」 line (or its first polarity word, as
  `python -m agentic_rag.eval answers` reads it) equals the label of the reference answer's 「结论：…」 line.
  Invocations whose reference has no such line (how-to / lookup answers open with 「说明：」; conversation turns have
  no reference) are NOT_EVALUATED, and a case with none evaluated leaves the metric out of its verdict.
* `governing_article` — the invocation's machine-checkable rubric (written by `adk_evalsets`): `governing_article`
  (the answer cites one of the gold articles, given as JSON in the rubric's description), `no_kb_basis` (an
  out-of-scope question: no 结论 line and no article of the knowledge base cited) or `asks_back` (a vague opener:
  no 结论 line, no article, a request for details).

Both give 1.0 or 0.0 per invocation and the mean per case; a case passes when the mean reaches the threshold of its
criterion. The same rubrics (type FINAL_RESPONSE_QUALITY) are what `rubric_based_final_response_quality_v1` asks a
judge model about when one is configured (test_config_judge.json).
"""
from __future__ import annotations

import json
import re
from typing import Optional

from google.adk.evaluation.eval_case import ConversationScenario, Invocation
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.eval_rubrics import Rubric
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult

from ..legal.refs import find_article_refs, law_matches
from .answers import LABELS, conclusion_label

PIPL = "中华人民共和国个人信息保护法"
CHECKED_RUBRICS = ("governing_article", "no_kb_basis", "asks_back")
_REFERENCE_CONCLUSION = re.compile(r"^\s*\**结论\**\s*[:：]\s*\**\s*(" + "|".join(LABELS) + ")")
# The "not found" reply ends by listing the nearest articles as options (「检索中最接近的条文（仅供参考，未必适用）：」 and
# the numbered list after it): pointers, not a basis.
_POINTERS = re.compile(r"^.*仅供参考，未必适用[\s\S]*", re.M)
_ASKS_BACK = re.compile(r"请.{0,16}(描述|补充|说明|提供|告诉)|[？?]\s*$|哪.{0,6}[？?]")


def text_of(invocation: Optional[Invocation]) -> str:
    content = invocation.final_response if invocation else None
    return "\n".join(p.text for p in (content.parts or []) if p.text) if content else ""


def reference_label(reference: str) -> str | None:
    """The label a reference answer opens with (「结论：不可以。…」); None for 「说明：…」 and for no reference."""
    m = _REFERENCE_CONCLUSION.match(reference or "")
    return m.group(1) if m else None


def cited(answer: str) -> list[tuple[str | None, int]]:
    """The articles an answer cites as its basis (pointers to the nearest articles excluded)."""
    return [(r.law, r.article) for r in find_article_refs(_POINTERS.sub("", answer))]


def cites_gold(answer: str, gold: list) -> bool:
    """Does the answer cite a gold article? PIPL gold is article numbers (a reference without a law name, or naming
    the PIPL, counts); multilaw gold is {"law", "article"} and the reference must name that law."""
    for law, number in cited(answer):
        for g in gold:
            if isinstance(g, dict):
                if number == g["article"] and law and law_matches(law, g["law"]):
                    return True
            elif number == g and (law is None or law_matches(law, PIPL)):
                return True
    return False


def rubric_met(rubric: Rubric, answer: str) -> bool | None:
    """Whether the answer meets a machine-checkable rubric; None for rubrics only a judge can read."""
    has_conclusion = bool(re.search(r"结论\**\s*[:：]", answer))
    if rubric.rubric_id == "governing_article":
        return cites_gold(answer, json.loads(rubric.description or "{}").get("gold", []))
    if rubric.rubric_id == "no_kb_basis":
        return bool(answer.strip()) and not has_conclusion and not cited(answer)
    if rubric.rubric_id == "asks_back":
        return bool(answer.strip()) and not has_conclusion and not cited(answer) and bool(_ASKS_BACK.search(answer))
    return None


def _threshold(eval_metric: EvalMetric) -> float:
    # ADK clears eval_metric.threshold before calling a custom metric; the criterion keeps it.
    criterion = eval_metric.criterion
    return criterion.threshold if criterion is not None and criterion.threshold is not None else 1.0


def _result(eval_metric: EvalMetric, actual: list[Invocation], expected: Optional[list[Invocation]],
            scores: list[float | None]) -> EvaluationResult:
    threshold = _threshold(eval_metric)
    per = [PerInvocationResult(actual_invocation=a, expected_invocation=e, score=s,
                               eval_status=EvalStatus.NOT_EVALUATED if s is None else
                               EvalStatus.PASSED if s >= threshold else EvalStatus.FAILED)
           for a, e, s in zip(actual, expected or [None] * len(actual), scores)]
    evaluated = [s for s in scores if s is not None]
    if not evaluated:
        return EvaluationResult(overall_eval_status=EvalStatus.NOT_EVALUATED, per_invocation_results=per)
    overall = sum(evaluated) / len(evaluated)
    return EvaluationResult(overall_score=overall, per_invocation_results=per,
                            overall_eval_status=EvalStatus.PASSED if overall >= threshold else EvalStatus.FAILED)


def _pairs(actual_invocations: list[Invocation], expected_invocations: Optional[list[Invocation]]):
    """Each actual invocation with the expected one at its place (None where the evalset has none)."""
    for i, actual in enumerate(actual_invocations):
        yield actual, expected_invocations[i] if expected_invocations and i < len(expected_invocations) else None


def conclusion_match(eval_metric: EvalMetric, actual_invocations: list[Invocation],
                     expected_invocations: Optional[list[Invocation]] = None,
                     conversation_scenario: Optional[ConversationScenario] = None) -> EvaluationResult:
    """1.0 when the answer's conclusion label equals the reference answer's, per invocation."""
    del conversation_scenario
    scores: list[float | None] = []
    for actual, expected in _pairs(actual_invocations, expected_invocations):
        want = reference_label(text_of(expected))
        scores.append(None if want is None else float(conclusion_label(text_of(actual)) == want))
    return _result(eval_metric, actual_invocations, expected_invocations, scores)


def governing_article(eval_metric: EvalMetric, actual_invocations: list[Invocation],
                      expected_invocations: Optional[list[Invocation]] = None,
                      conversation_scenario: Optional[ConversationScenario] = None) -> EvaluationResult:
    """1.0 when the answer rests on what it should (a gold article; nothing from the KB; a question back)."""
    del conversation_scenario
    scores: list[float | None] = []
    for actual, expected in _pairs(actual_invocations, expected_invocations):
        rubrics = [r for r in (expected.rubrics or [] if expected else []) if r.rubric_id in CHECKED_RUBRICS]
        verdicts = [rubric_met(r, text_of(actual)) for r in rubrics]
        scores.append(float(all(verdicts)) if verdicts else None)
    return _result(eval_metric, actual_invocations, expected_invocations, scores)
