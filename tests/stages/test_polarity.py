"""The model's polarity where the label rules say 视情况: which label a logit decides, and that the shipped thresholds
are the ones eval/polarity_decision.py chooses from the committed scores."""
from __future__ import annotations

import importlib.util
import json
import sys

from agentic_rag.stages.answer import polarity
from tests.conftest import PROJECT_ROOT

MODEL = polarity.PolarityModel(below=-0.9, above=1.1, model="m.gguf", provenance={})


def test_only_the_extremes_decide_and_the_label_follows_the_ask_kind():
    need, allowed = "公司得先把理由通知工会吗？", "有公司抓取网上公开的简历卖给猎头，这合法吗？"
    assert [polarity.decided(need, d, MODEL) for d in (1.1, 0.0, -0.9)] == ["需要", None, "不需要"]
    assert [polarity.decided(allowed, d, MODEL) for d in (2.0, 1.0, -2.0)] == ["可以", None, "不可以"]
    assert polarity.tail(allowed, "视情况") and polarity.tail(allowed, "可以") is None


def test_the_shipped_thresholds_are_those_the_eval_chooses_from_the_committed_scores():
    spec = importlib.util.spec_from_file_location("polarity_decision", PROJECT_ROOT / "eval" / "polarity_decision.py")
    sys.path.insert(0, str(PROJECT_ROOT / "eval"))
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(PROJECT_ROOT / "eval"))
    chosen = module.report(module.OUT)["d_kind"]
    shipped = polarity.polarity_model()
    assert chosen["thresholds"] == [shipped.below, shipped.above]
    stored = json.loads((PROJECT_ROOT / "eval" / "results" / "polarity_decision.json").read_text(encoding="utf-8"))
    assert stored["d_kind"] == chosen
    for held_out in ("answers-test", "fresh", "fresh2"):  # what the provenance claims: no opposite label added
        assert chosen[held_out]["opposite"] == stored["rules"][held_out]["opposite"]


def test_a_clause_silent_on_the_ask_is_not_the_models_to_decide():
    from agentic_rag.legal.modality import clauses
    from agentic_rag.stages.answer.conclusion import decide
    officer, = clauses("处理个人信息达到国家网信部门规定数量的个人信息处理者应当指定个人信息保护负责人。")
    asked = "公司指定我当个人信息保护负责人，要公开我的联系方式。这得先经过我本人同意吗？"
    decision = decide(asked, officer)
    assert decision.label == "视情况" and polarity.tail(asked, decision.label, decision.rule) is None
    assert polarity.tail(asked, "视情况", "need/oblige")


def test_a_childs_age_the_question_does_not_give_is_not_the_models_to_decide():
    from agentic_rag.legal.modality import clauses
    from agentic_rag.stages.answer.conclusion import decide
    sensitive, = clauses("敏感个人信息包括生物识别、医疗健康等信息，以及不满十四周岁未成年人的个人信息。")
    asked = "未成年人的信息算敏感信息吗？"
    decision = decide(asked, sensitive)
    assert decision.label == "视情况" and polarity.tail(asked, decision.label, decision.rule) is None
