"""ADK-native evaluation: the committed evalsets are what the generator writes and load with ADK's own schemas, the
response-match threshold is one a correct answer of our form reaches, the custom metrics score what they claim, and
`adk eval` itself (a hermetic subprocess, the real index, a scripted OpenAI-compatible model) PASSES a case whose
scripted model behaves and FAILS one whose scripted grader rejects the right articles.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_config import get_eval_metrics_from_config, get_evaluation_criteria_or_default
from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
from google.adk.evaluation.evaluator import EvalStatus
from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores
from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager, load_eval_set_from_file
from google.genai import types

from agentic_rag.config import PROJECT_ROOT, Settings
from agentic_rag.eval import adk_evalsets, adk_metrics
from agentic_rag.eval.__main__ import main as eval_main
from agentic_rag.knowledge.corpus import load_corpus
from agentic_rag.legal.numerals import article_cn
from agentic_rag.stages.answer import prompt
from tests import hermetic
from tests.fakes.fake_llm import role_of
from tests.fakes.openai_server import FakeOpenAIServer

AGENT_DIR = PROJECT_ROOT / "agentic_rag"
PIPL = "《中华人民共和国个人信息保护法》"


# ---------------------------------------------------------------------------------------------- the evalsets
def test_committed_evalsets_are_what_the_generator_writes(tmp_path):
    assert eval_main(["adk-evalsets", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in AGENT_DIR.iterdir() if p.name.endswith(".evalset.json")
                       or (p.name.startswith("test_config") and p.suffix == ".json"
                           and not p.name.endswith("_judge.json")))  # a local --judge-model choice, git-ignored
    assert written == committed and "answers_pipl_test.evalset.json" in written
    for name in written:
        assert (tmp_path / name).read_text(encoding="utf-8") == (AGENT_DIR / name).read_text(encoding="utf-8"), (
            f"{name} is stale: run python -m agentic_rag.eval adk-evalsets")


def test_evalsets_load_with_adks_schemas_and_the_dev_ui_lists_them():
    ids = LocalEvalSetsManager(agents_dir=str(PROJECT_ROOT)).list_eval_sets("agentic_rag")  # the Dev UI's eval tab
    assert {"answers_pipl_test", "answers_pipl_dev", "conversation_pipl_test", "retrieval_pipl"} <= set(ids)
    answers = load_eval_set_from_file(str(AGENT_DIR / "answers_pipl_test.evalset.json"), "x")
    assert answers.eval_set_id == "answers_pipl_test" and len(answers.eval_cases) == 44
    first = answers.eval_cases[0].conversation[0]
    assert first.final_response.parts[0].text.startswith("结论：不可以。")
    assert {r.rubric_id for r in first.rubrics} >= {"governing_article", "conclusion", "key_point_1", "must_not_1"}
    assert all(r.type == "FINAL_RESPONSE_QUALITY" for r in first.rubrics)  # what the rubric judge metric reads
    conv = load_eval_set_from_file(str(AGENT_DIR / "conversation_pipl_test.evalset.json"), "x")
    rows = [json.loads(line) for line in (PROJECT_ROOT / "eval/conversation_eval.jsonl").read_text().splitlines()]
    want = {r["id"]: len(r["turns"]) for r in rows if r["kb"] == "pipl" and r["split"] == "test"}
    assert {c.eval_id: len(c.conversation) for c in conv.eval_cases} == want  # a turn per invocation
    assert all(i.final_response is None for c in conv.eval_cases for i in c.conversation)  # no reference answers
    multilaw = load_eval_set_from_file(str(AGENT_DIR / "answers_multilaw_test.evalset.json"), "x")
    assert "DATA_DIR=data-multilaw" in multilaw.description


def test_configs_name_adks_criteria_and_the_custom_metrics():
    config = get_evaluation_criteria_or_default(str(AGENT_DIR / "test_config.json"))
    names = [m.metric_name for m in get_eval_metrics_from_config(config)]
    assert names[:3] == ["response_match_score", "conclusion_match", "governing_article"]
    assert config.criteria["response_match_score"] == adk_evalsets.RESPONSE_MATCH_THRESHOLD
    assert config.custom_metrics["conclusion_match"].code_config.name == "agentic_rag.eval.adk_metrics.conclusion_match"
    noref = get_evaluation_criteria_or_default(str(AGENT_DIR / "test_config_no_reference.json"))
    assert list(noref.criteria) == ["governing_article"]  # response_match_score would fail every turn with no reference
    judged = adk_evalsets.configs("deepseek/deepseek-chat")
    assert judged["test_config_judge.json"].criteria["rubric_based_final_response_quality_v1"].judge_model_options \
        .judge_model == "deepseek/deepseek-chat"
    assert "final_response_match_v2" not in judged["test_config_no_reference_judge.json"].criteria


def test_selected_rows_make_one_small_evalset(tmp_path):
    written = adk_evalsets.write(tmp_path, ids={"ans-pipl-005", "ans-pipl-029"})
    s = load_eval_set_from_file(str(tmp_path / "answers_selected.evalset.json"), "x")
    assert [c.eval_id for c in s.eval_cases] == ["ans-pipl-005", "ans-pipl-029"] and len(written) == 3
    with pytest.raises(ValueError, match="ans-pipl-999"):
        adk_evalsets.build_sets(ids={"ans-pipl-999"})


# ---------------------------------------------------------------------------------------------- the threshold
def test_response_match_threshold_is_reached_by_an_answer_of_our_form_and_not_by_a_refusal():
    """For every PIPL row: an answer of our form (the reference's conclusion, the first gold article verbatim, the
    footer) reaches the threshold; the "not found" reply does not reach it on an in-scope row; the out-of-scope reply
    our app gives reaches it on an out-of-scope row."""
    settings = Settings(_env_file=None)
    text = {d.article: d.text for d in load_corpus(settings.corpus_path, structure=settings.corpus_structure)}
    threshold = adk_evalsets.RESPONSE_MATCH_THRESHOLD
    rows = [r for r in adk_evalsets.load_jsonl(adk_evalsets.ANSWERS) if r["kb"] == "pipl"]
    refusal = prompt.NOT_FOUND.format(law=PIPL, web_note="")
    ours, refused = [], []
    for r in rows:
        ref = r["reference_answer"]
        if r["gold"]:
            g = r["gold"][0]
            answer = (prompt.CONCLUSION.format(label=r["conclusion"]["label"]) + "\n\n"
                      + prompt.REASON.format(quotes=prompt.QUOTE.format(title=article_cn(g), text=text[g]))
                      + prompt.FOOTER.format(basis=PIPL + article_cn(g)))
            refused.append(_calculate_rouge_1_scores(refusal, ref).fmeasure)
        else:
            answer = (prompt.CHITCHAT.format(law=PIPL) if r["type"] == "chitchat" else
                      prompt.OUT_OF_KB.format(topic="其他法律领域", laws=PIPL, web_note=""))
        ours.append(_calculate_rouge_1_scores(answer, ref).fmeasure)
    assert len(ours) == 83 and len(refused) == 76
    assert min(ours) >= threshold > max(refused), (min(ours), max(refused))


# ---------------------------------------------------------------------------------------------- the metrics
def _inv(text: str | None, rubrics=None) -> Invocation:
    content = types.Content(role="model", parts=[types.Part(text=text)]) if text is not None else None
    return Invocation(user_content=types.Content(role="user", parts=[types.Part(text="?")]), final_response=content,
                      rubrics=rubrics)


def _metric(name: str, threshold: float = 1.0) -> EvalMetric:
    return EvalMetric(metric_name=name, criterion=BaseCriterion(threshold=threshold))


def test_conclusion_match():
    ref = _inv("结论：不可以。依据第十条，任何组织、个人不得非法买卖……")
    right = _inv("**结论**：不可以。\n\n**依据**：第十条规定：“……”")
    wrong = _inv("**结论**：可以。\n\n**依据**：第十条规定：“……”")
    r = adk_metrics.conclusion_match(_metric("conclusion_match"), [right, wrong], [ref, ref])
    assert [p.eval_status for p in r.per_invocation_results] == [EvalStatus.PASSED, EvalStatus.FAILED]
    assert r.overall_score == 0.5 and r.overall_eval_status == EvalStatus.FAILED
    assert adk_metrics.conclusion_match(_metric("conclusion_match", 0.5), [right, wrong], [ref, ref]) \
        .overall_eval_status == EvalStatus.PASSED
    how = _inv("说明：依据第四十五条……")  # no conclusion label in the reference: not scored, not failed
    r = adk_metrics.conclusion_match(_metric("conclusion_match"), [wrong, wrong], [how, _inv(None)])
    assert r.overall_eval_status == EvalStatus.NOT_EVALUATED and r.overall_score is None


def test_governing_article():
    pipl = adk_evalsets.basis_rubric([10, 23])
    ml = adk_evalsets.basis_rubric([{"law": "中华人民共和国劳动合同法", "article": 39}])
    out = adk_evalsets.basis_rubric([])
    cases = [
        ("**结论**：不可以。\n\n**依据**：第二十三条规定：“……”", pipl, True),
        ("**结论**：不可以。\n\n**依据**：第二十四条规定：“……”", pipl, False),
        ("依据《中华人民共和国民法典》第二十三条……", pipl, False),  # another law's 23
        ("**依据**：《中华人民共和国劳动合同法》第三十九条规定：“……”", ml, True),
        ("**依据**：第三十九条规定：“……”", ml, False),  # which law's 39 is not said
        (prompt.OUT_OF_KB.format(topic="劳动纠纷", laws=PIPL, web_note=""), out, True),
        ("**结论**：可以。\n\n**依据**：第十条规定：“……”", out, False),
        (prompt.NOT_FOUND.format(law=PIPL, web_note=""), adk_evalsets.ASKS_BACK, True),  # asks for details
        (prompt.NOT_FOUND_NEAREST.format(law=PIPL, web_note="") + prompt.NEAREST.format(options="1. 第二十三条：向他人提供…"),
         pipl, False),  # the listed articles are options, not an answer's basis
        (prompt.NOT_FOUND_NEAREST.format(law=PIPL, web_note="") + prompt.NEAREST.format(options="1. 第二十三条：向他人提供…"),
         adk_evalsets.ASKS_BACK, True),
        ("**结论**：视情况。依据第十条……", adk_evalsets.ASKS_BACK, False),
    ]
    for text, rubric, want in cases:
        r = adk_metrics.governing_article(_metric("governing_article"), [_inv(text)], [_inv(None, [rubric])])
        assert r.overall_score == float(want), (text, rubric.rubric_id)
    judge_only = adk_evalsets.answer_rubrics(adk_evalsets.load_jsonl(adk_evalsets.ANSWERS)[0])[2:]
    r = adk_metrics.governing_article(_metric("governing_article"), [_inv("x")], [_inv(None, judge_only)])
    assert r.overall_eval_status == EvalStatus.NOT_EVALUATED


# ---------------------------------------------------------------------------------------------- adk eval itself
RIGHT = {"ans-pipl-005"}  # the scripted model rewrites and grades well: our answer is right
WRONG = "ans-pipl-017"  # the scripted grader rejects every article: the app replies "not found", the eval must fail
GOOD_GRADE = {"relevance": 9, "completeness": 8, "accuracy": 9, "coverage": 8}
BAD_GRADE = {"relevance": 2, "completeness": 2, "accuracy": 2, "coverage": 2, "missing": "没有相关规定"}


class Script:
    """The fake provider's replies: the question itself as the rewrite, a grade, and the one sentence per ask."""

    def __init__(self, questions: dict[str, str]):
        self.questions = questions  # eval id -> question

    def __call__(self, body: dict) -> str:
        text = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
        case = next((i for i, q in self.questions.items() if q in text), None)
        role = role_of(text)
        if role == "rewriter":
            return json.dumps({"main_query": self.questions.get(case, ""), "variants": [], "keywords": [],
                               "domain": "个人信息保护", "complexity": "simple"}, ensure_ascii=False)
        if role in ("evaluator", "relevance"):
            return json.dumps(BAD_GRADE if case == WRONG else GOOD_GRADE, ensure_ascii=False)
        label = re.search(r"结论已经确定为“(.+?)”", text)
        return f"{label.group(1)}，依照上面这条规定处理。" if label else "依照上面这条规定处理。"


HISTORY = AGENT_DIR / ".adk" / "eval_history"  # where `adk eval` keeps its results (.adk/ is git-ignored)


def _eval_history() -> set[Path]:
    return set(HISTORY.glob("*.evalset_result.json"))


def test_adk_eval_passes_right_answers_and_fails_a_wrong_one(pipl_data_dir, tmp_path):
    adk_evalsets.write(tmp_path, ids=RIGHT | {WRONG})
    evalset = tmp_path / "answers_selected.evalset.json"
    cases = load_eval_set_from_file(str(evalset), "x").eval_cases
    questions = {c.eval_id: c.conversation[0].user_content.parts[0].text for c in cases}
    before, fresh = _eval_history(), [d for d in (HISTORY.parent, HISTORY) if not d.exists()]
    with FakeOpenAIServer(Script(questions)) as llm:
        env = {"AGENTIC_RAG_MODEL": "deepseek/deepseek-chat", "DEEPSEEK_API_KEY": "test-key",
               "DEEPSEEK_API_BASE": llm.base_url, "DATA_DIR": str(pipl_data_dir), "RERANKER": "none",
               "LLM_MAX_RETRIES": "0", "REWRITE_FIRST_ATTEMPT": "true",
               # the custom metrics are imported by name: from this checkout, whatever `pip install -e` points at
               "PYTHONPATH": str(PROJECT_ROOT)}
        adk = Path(sys.executable).with_name("adk")
        out = hermetic.run([str(adk), "eval", "agentic_rag", str(evalset), "--config_file_path",
                            str(AGENT_DIR / "test_config.json"), "--print_detailed_results"],
                           cwd=PROJECT_ROOT, env_extra=env, capture_output=True, text=True, timeout=300)
    results = sorted(_eval_history() - before)
    try:
        log = out.stdout[-6000:] + out.stderr[-3000:]
        assert out.returncode == 1, log  # adk eval exits 1 when a case fails
        assert re.search(r"answers_selected:\s+Tests passed: 1\s+Tests failed: 1", out.stdout), log
        assert len(results) == 1, results
        saved = json.loads(results[0].read_text(encoding="utf-8"))
        per_case = {c["eval_id"]: c for c in saved["eval_case_results"]}
        assert {i: c["final_eval_status"] for i, c in per_case.items()} == {
            **{i: EvalStatus.PASSED.value for i in RIGHT}, WRONG: EvalStatus.FAILED.value}, log
        for eval_id, case in per_case.items():
            metrics = {m["metric_name"]: m for m in case["overall_eval_metric_results"]}
            right = eval_id in RIGHT
            for name in ("response_match_score", "conclusion_match", "governing_article"):
                want = EvalStatus.PASSED.value if right else EvalStatus.FAILED.value
                assert metrics[name]["eval_status"] == want, (eval_id, name, metrics[name]["score"])
            actual = case["eval_metric_result_per_invocation"][0]["actual_invocation"]["final_response"]
            text = actual["parts"][0]["text"]
            assert text.startswith("**结论**：") if right else "无法在" in text, text
    finally:  # leave the agent folder as it was
        for path in results:
            path.unlink()
        for d in reversed(fresh):
            if d.exists() and not any(d.iterdir()):
                d.rmdir()
