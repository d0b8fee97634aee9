"""ADK evalsets from the project's labelled sets, so that ADK's own `adk eval` (and the Dev UI's eval tab) runs the app.

    python -m agentic_rag.eval adk-evalsets            # writes agentic_rag/*.evalset.json + test_config*.json
    adk eval agentic_rag agentic_rag/answers_pipl_test.evalset.json --print_detailed_results
    adk eval agentic_rag agentic_rag/conversation_pipl_test.evalset.json \
        --config_file_path agentic_rag/test_config_no_reference.json

What is written (ADK's schemas: `EvalSet` / `EvalCase` / `Invocation` / `Rubric`, `EvalConfig`):

* `answers_<kb>_<split>` — eval/answers_eval.jsonl, one single-turn case per row; the expected final response is
  the row's reference answer; rubrics (type FINAL_RESPONSE_QUALITY): the conclusion, the governing article, the key
  points and the wrong claims it must not make, or for out-of-scope rows that no article of the knowledge base is the
  basis.
* `conversation_<kb>_<split>` — eval/conversation_eval.jsonl, one case per conversation, one invocation per user
  turn (ADK replays them in one session). No reference answers exist, so no expected final response: each turn has
  the rubric of its gold articles, or `asks_back` for a vague opener.
* `retrieval_pipl` — eval/pipl_eval.jsonl (111 questions, gold articles, no reference answers): does the answer cite
  a gold article.

Only `pipl` sets run against the default index (`data/`, 《个人信息保护法》); `multilaw` sets need the six-law
index (`DATA_DIR=data-multilaw`, README). The eval set ids say which.

Criteria (agentic_rag/test_config.json, for sets with reference answers; `adk eval` picks it up beside the evalset
file when one file is given):

* `response_match_score` ≥ RESPONSE_MATCH_THRESHOLD — ADK's ROUGE-1 (per character for Chinese). An answer of our
  form (「**结论**：<label>。」, the governing article quoted, the footer) built on the first gold article scores
  0.376–0.843 against the reference answers of the 76 in-scope PIPL rows, the "not found" reply at most 0.30
  (tests/test_adk_eval.py checks both on every row). It separates "answered from the law" from "refused" — not right
  from wrong, which is what the next two are for.
* `conclusion_match` = 1.0 and `governing_article` = 1.0 — custom metrics (agentic_rag/eval/adk_metrics.py).

test_config_no_reference.json (conversations, retrieval_pipl): `governing_article` only — `response_match_score`
would score every turn without a reference 0.

With `--judge-model` (a LiteLLM model string such as `deepseek/deepseek-chat`, its key in the environment), also
test_config_judge.json / test_config_no_reference_judge.json: the above plus `rubric_based_final_response_quality_v1`
(the judge reads the rubrics above) and, with references, `final_response_match_v2` (git-ignored: a local choice).
Without a judge they are left out: their default judge is a Gemini model this project has no access to.
`hallucinations_v1` is not offered: its judge sees the agents' instructions, tool results and grounding metadata,
and this workflow passes the retrieved articles to its model as none of these, so every quoted clause would read
as unsupported.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from google.adk.evaluation.eval_case import EvalCase, Invocation, SessionInput
from google.adk.evaluation.eval_config import CustomMetricConfig, EvalConfig
from google.adk.evaluation.eval_metrics import JudgeModelOptions, LlmAsAJudgeCriterion, RubricsBasedCriterion
from google.adk.evaluation.eval_rubrics import Rubric, RubricContent
from google.adk.evaluation.eval_set import EvalSet
from google.genai import types

from ..config import PROJECT_ROOT
from ..legal.laws import short
from ..legal.numerals import article_cn

APP_NAME = "agentic_rag"
AGENT_DIR = PROJECT_ROOT / APP_NAME
EVAL_DIR = PROJECT_ROOT / "eval"
ANSWERS = EVAL_DIR / "answers_eval.jsonl"
CONVERSATIONS = EVAL_DIR / "conversation_eval.jsonl"
PIPL_QUESTIONS = EVAL_DIR / "pipl_eval.jsonl"
RUBRIC_TYPE = "FINAL_RESPONSE_QUALITY"  # what rubric_based_final_response_quality_v1 reads from an invocation
RESPONSE_MATCH_THRESHOLD = 0.35
CONFIG = "test_config.json"
CONFIG_NO_REFERENCE = "test_config_no_reference.json"
KB_NOTE = {"pipl": "runs against the default index (data/, 个人信息保护法)",
           "multilaw": "needs the six-law index: DATA_DIR=data-multilaw (init_index.py --law …, README)"}


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _content(role: str, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def _rubric(rubric_id: str, text: str, description: str | None = None) -> Rubric:
    return Rubric(rubric_id=rubric_id, rubric_content=RubricContent(text_property=text), description=description,
                  type=RUBRIC_TYPE)


def article_name(g) -> str:
    return f"《{short(g['law'])}》{article_cn(g['article'])}" if isinstance(g, dict) else article_cn(g)


def basis_rubric(gold: list) -> Rubric:
    """The machine-checkable rubric of a turn: the gold articles it should rest on, or none (out of scope)."""
    if not gold:
        return _rubric("no_kb_basis", "问题不在知识库范围内：回答应说明这一点，不以知识库的条文作为依据，也不给出结论。")
    return _rubric("governing_article", f"回答以{'或'.join(article_name(g) for g in gold)}为依据（至少引用其中一条）。",
                   json.dumps({"gold": gold}, ensure_ascii=False))


ASKS_BACK = _rubric("asks_back", "问题过于笼统：助手应先追问具体情况（涉及的主体、行为、想解决的问题），而不是检索作答。")


def answer_rubrics(row: dict) -> list[Rubric]:
    rubrics = [basis_rubric(row["gold"])]
    label, condition = row["conclusion"]["label"], row["conclusion"].get("condition", "")
    if label not in ("说明", "不适用"):
        rubrics.append(_rubric("conclusion", f"回答的结论是“{label}”" + (f"（{condition}）" if condition else "") + "。",
                               json.dumps({"label": label}, ensure_ascii=False)))
    rubrics += [_rubric(f"key_point_{i}", f"回答说明了：{k['point']}。") for i, k in enumerate(row["key_points"], 1)]
    rubrics += [_rubric(f"must_not_{i}", f"回答没有这样的错误说法：{m['claim']}（例如“{m['example']}”）。")
                for i, m in enumerate(row["must_not"], 1)]
    return rubrics


def _session() -> SessionInput:
    return SessionInput(app_name=APP_NAME, user_id="eval_user")


def answer_case(row: dict) -> EvalCase:
    return EvalCase(eval_id=row["id"], session_input=_session(), conversation=[Invocation(
        invocation_id=f"{row['id']}-1", user_content=_content("user", row["query"]),
        final_response=_content("model", row["reference_answer"]), rubrics=answer_rubrics(row))])


def conversation_case(conv: dict) -> EvalCase:
    turns = [Invocation(invocation_id=f"{conv['id']}-{n}", user_content=_content("user", t["user"]),
                        rubrics=[ASKS_BACK if t["expect"] == "clarify" else basis_rubric(t["gold"])])
             for n, t in enumerate(conv["turns"], 1)]
    return EvalCase(eval_id=conv["id"], session_input=_session(), conversation=turns)


def question_case(row: dict) -> EvalCase:
    return EvalCase(eval_id=row["id"], session_input=_session(), conversation=[Invocation(
        invocation_id=f"{row['id']}-1", user_content=_content("user", row["query"]), rubrics=[basis_rubric(row["gold"])])])


def eval_set(eval_set_id: str, description: str, cases: Iterable[EvalCase]) -> EvalSet:
    return EvalSet(eval_set_id=eval_set_id, name=eval_set_id, description=description, eval_cases=list(cases))


def build_sets(answers: Path = ANSWERS, conversations: Path = CONVERSATIONS, questions: Path = PIPL_QUESTIONS,
               ids: set[str] | None = None) -> list[EvalSet]:
    """Every evalset (or, with `ids`, one `answers_selected` set of those answers_eval rows, for smoke runs)."""
    rows = load_jsonl(answers)
    if ids is not None:
        picked = [r for r in rows if r["id"] in ids]
        missing = ids - {r["id"] for r in picked}
        if missing:
            raise ValueError(f"not in {answers.name}: {', '.join(sorted(missing))}")
        kbs = sorted({r["kb"] for r in picked})
        return [eval_set("answers_selected", f"{len(picked)} rows of {answers.name} ({', '.join(kbs)}); "
                         + "; ".join(KB_NOTE[kb] for kb in kbs), map(answer_case, picked))]
    sets = []
    for kb in ("pipl", "multilaw"):
        for split in ("test", "dev"):
            part = [r for r in rows if r["kb"] == kb and r["split"] == split]
            sets.append(eval_set(f"answers_{kb}_{split}", f"{answers.name}, {kb} {split} split ({len(part)} questions; "
                                 f"reference answers as expected responses); {KB_NOTE[kb]}.", map(answer_case, part)))
    convs = load_jsonl(conversations)
    for kb in ("pipl", "multilaw"):
        for split in ("test", "dev"):
            part = [c for c in convs if c["kb"] == kb and c["split"] == split]
            sets.append(eval_set(f"conversation_{kb}_{split}", f"{conversations.name}, {kb} {split} split "
                                 f"({len(part)} conversations, one invocation per user turn, no reference answers: run "
                                 f"with --config_file_path agentic_rag/{CONFIG_NO_REFERENCE}); {KB_NOTE[kb]}.",
                                 map(conversation_case, part)))
    qs = load_jsonl(questions)
    sets.append(eval_set("retrieval_pipl", f"{questions.name} ({len(qs)} questions, gold articles, no reference "
                         f"answers: run with --config_file_path agentic_rag/{CONFIG_NO_REFERENCE}); {KB_NOTE['pipl']}.",
                         map(question_case, qs)))
    return sets


def _custom(name: str, description: str) -> CustomMetricConfig:
    return CustomMetricConfig(code_config={"name": f"agentic_rag.eval.adk_metrics.{name}"}, description=description)


CUSTOM = {"conclusion_match": _custom("conclusion_match", "结论 label of the answer equals the reference answer's"),
          "governing_article": _custom("governing_article", "the answer cites a gold article (or, out of scope, none; "
                                                            "for a vague opener, asks back)")}


def configs(judge_model: str | None = None) -> dict[str, EvalConfig]:
    """test_config.json (sets with reference answers), test_config_no_reference.json, and with a judge model the
    same two with the judge's criteria added (…_judge.json)."""
    ref = {"response_match_score": RESPONSE_MATCH_THRESHOLD, "conclusion_match": 1.0, "governing_article": 1.0}
    noref = {"governing_article": 1.0}
    out = {CONFIG: EvalConfig(criteria=ref, custom_metrics=CUSTOM),
           CONFIG_NO_REFERENCE: EvalConfig(criteria=noref, custom_metrics={"governing_article": CUSTOM["governing_article"]})}
    if judge_model:
        judge = JudgeModelOptions(judge_model=judge_model, num_samples=3)
        rubric = RubricsBasedCriterion(threshold=0.8, judge_model_options=judge)  # rubrics come from the invocations
        out["test_config_judge.json"] = EvalConfig(criteria={
            **ref, "rubric_based_final_response_quality_v1": rubric,
            "final_response_match_v2": LlmAsAJudgeCriterion(threshold=0.8, judge_model_options=judge)},
            custom_metrics=CUSTOM)
        out["test_config_no_reference_judge.json"] = EvalConfig(
            criteria={**noref, "rubric_based_final_response_quality_v1": rubric},
            custom_metrics={"governing_article": CUSTOM["governing_article"]})
    return out


def dump(model) -> str:
    """ADK's own on-disk form (LocalEvalSetsManager: snake_case, defaults and Nones left out), UTF-8 kept readable."""
    text = model.model_dump_json(indent=2, exclude_none=True, exclude_defaults=True)
    return json.dumps(json.loads(text), ensure_ascii=False, indent=2) + "\n"


def write(out_dir: Path = AGENT_DIR, judge_model: str | None = None, ids: set[str] | None = None,
          **sources: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for s in build_sets(ids=ids, **sources):
        path = out_dir / f"{s.eval_set_id}.evalset.json"
        path.write_text(dump(s), encoding="utf-8")
        written.append(path)
    for name, config in configs(judge_model).items():
        path = out_dir / name
        path.write_text(dump(config), encoding="utf-8")
        written.append(path)
    return written
