"""The answers eval scores what an answer says: the conclusion it reaches, the labelled key points and wrong claims,
whether it stands on a governing article — checked on hand-made answers, and end to end with a scripted model."""
from __future__ import annotations

import json

from agentic_rag.eval.answers import conclusion_label, metrics, old_form_sentences, score
from agentic_rag.state import ANSWER, CITATIONS, FINAL_ANSWER, PATH, Answer, Citations, Sentence

PIPL = "中华人民共和国个人信息保护法"
ROW = {"id": "ans-pipl-900", "kb": "pipl", "query": "网站能把我的浏览记录卖给广告商吗？", "type": "no", "gold": [10, 23],
       "conclusion": {"label": "不可以", "condition": "须单独同意"}, "split": "test",
       "key_points": [{"point": "不得买卖", "patterns": ["不得.{0,6}买卖"]},
                      {"point": "单独同意", "patterns": ["单独同意"]}],
       "must_not": [{"claim": "同意即可", "patterns": ["(?<!单独)同意即可"], "example": "用户同意即可。"}]}


def state(text: str, path: str = "pass", listed=((PIPL, 10),), sentences=()) -> dict:
    return {**FINAL_ANSWER.delta(text), **PATH.delta(path),
            **CITATIONS.delta(Citations(listed=[list(x) for x in listed])),
            **ANSWER.delta(Answer(action="correct", sentences=[Sentence(text=s) for s in sentences]))}


def test_the_conclusion_is_read_from_the_conclusion_line_or_the_first_polarity_word():
    assert conclusion_label("**结论**：不可以。网站不能卖。") == "不可以"
    assert conclusion_label("**结论**：视情况。要看是否必需。") == "视情况"
    # a 算…吗 ask is shown 属于 / 不属于 and scored as the 需要 / 不需要 it is
    assert conclusion_label("**结论**：不属于。") == "不需要" and conclusion_label("**结论**：属于。") == "需要"
    assert conclusion_label("# 法律咨询意见\n\n公司出售您的手机号是违法的。") == "不可以"
    assert conclusion_label("您有权要求删除，但应当先注销。") == "可以"  # the first polarity word decides
    assert conclusion_label("根据第十条。") is None
    assert conclusion_label("**答复**：可以向履行个人信息保护职责的部门投诉。") == "说明"  # how-to: no polar label


def test_a_right_answer_scores_its_points_and_a_wrong_claim_is_caught():
    good = score(ROW, state("**结论**：不可以。\n\n**依据**：第十条规定：“不得非法买卖、提供或者公开他人个人信息”；"
                            "第二十三条：须取得个人的单独同意。", listed=((PIPL, 10), (PIPL, 23))))
    assert good["conclusion_correct"] and good["key_points"] == [True, True] and good["must_not"] == []
    assert good["answered_from_governing"] and not good["built_on_wrong_article"]
    bad = score(ROW, state("**结论**：可以。用户同意即可。", listed=((PIPL, 47),), sentences=["用户同意即可。"]))
    assert not bad["conclusion_correct"] and bad["must_not"] == ["同意即可"]
    assert bad["built_on_wrong_article"] and bad["model_unsupported_proxy"] == ["用户同意即可。"]


def test_only_unsupported_sentences_the_user_reads_count_as_shown_and_a_bare_label_is_not_a_claim():
    echoed = "以“可以”开头，说明这条规定用在用户所问的情况上的结果。"  # a task written back, dropped before display
    shown = score(ROW, state("**结论**：需要。用户同意即可。", sentences=[echoed, "需要。", "用户同意即可。"]))
    assert shown["model_unsupported_proxy"] == [echoed, "需要。", "用户同意即可。"]
    assert shown["model_unsupported_shown"] == ["用户同意即可。"]
    clean = score(ROW, state("**结论**：需要。", sentences=[echoed, "需要。"]))
    assert clean["model_unsupported_shown"] == []
    rows = [{**ROW, **r, "latency_s": 1.0, "llm_calls": 1} for r in (shown, clean)]
    assert metrics(rows)["answers_showing_unsupported"] == 0.5


def test_a_refusal_is_not_an_answer_and_out_of_scope_rows_want_one():
    refused = score(ROW, state("很抱歉……", path="none", listed=()))
    assert refused["refused"] and not refused["answered"] and not refused["conclusion_correct"]
    out = {**ROW, "type": "out_of_kb", "gold": [], "conclusion": {"label": "不适用", "condition": ""}}
    assert score(out, state("不在本知识库的范围内", path="out_of_kb", listed=()))["conclusion_correct"]
    summary = metrics([{**ROW, **refused, "latency_s": 1.0, "llm_calls": 0},
                       {**out, **score(out, state("x", path="out_of_kb", listed=())), "latency_s": 2.0, "llm_calls": 1}])
    assert summary["refused"] == 1.0 and summary["out_of_scope_rejected"] == 1.0 and summary["p50_latency_s"] == 2.0


def test_an_honest_it_depends_is_a_miss_but_not_the_opposite_conclusion():
    rows = [{**ROW, **score(ROW, state(f"**结论**：{label}。")), "latency_s": 1.0, "llm_calls": 1}
            for label in ("不可以", "视情况", "可以")]
    summary = metrics(rows)
    assert summary["conclusion_accuracy"] == round(1 / 3, 4) and summary["wrong_conclusion"] == round(2 / 3, 4)
    assert summary["opposite_conclusion"] == round(1 / 3, 4)


def test_the_model_written_part_of_an_earlier_form_answer_is_what_follows_its_analysis_heading():
    text = ("# 法律咨询意见\n\n## 相关法条\n\n**第十条**：任何组织、个人不得……\n\n## 问题分析\n公司出售手机号违法。"
            "建议您报警。\n\n**免责声明**：仅供参考。")
    assert old_form_sentences(text) == ["公司出售手机号违法。", "建议您报警。"]


def test_the_cli_runs_the_workflow_over_the_labelled_rows(tmp_path, fake_data_dir, fake_settings, monkeypatch):
    from agentic_rag.eval import __main__ as cli
    from agentic_rag.eval.__main__ import main
    from tests.fakes.fake_llm import install

    dataset = tmp_path / "answers.jsonl"
    dataset.write_text(json.dumps(ROW, ensure_ascii=False) + "\n", encoding="utf-8")
    grade = json.dumps({**dict.fromkeys(("relevance", "completeness", "accuracy", "coverage"), 9),
                        "relevant": ["第十条"]})
    install({"evaluator": grade, "answer": "不可以，网站不能出售您的浏览记录。"})
    from agentic_rag.retrieval import retriever as retriever_module
    from tests.fakes.retriever import fake_retriever

    monkeypatch.setattr(cli, "get_settings", lambda: fake_settings)  # the fake model, no similarity floor
    opened = []  # each knowledge base gets its own retriever (the process-wide one would answer both from one index)
    monkeypatch.setattr(retriever_module.LocalRetriever, "from_settings",
                        classmethod(lambda cls, settings: opened.append(settings.data_dir) or fake_retriever(fake_data_dir)))
    out = tmp_path / "result.json"
    checkpoint = tmp_path / "run.jsonl"
    assert main(["answers", "--dataset", str(dataset), "--pipl-dir", str(fake_data_dir), "--json", str(out),
                 "--checkpoint", str(checkpoint), "--multilaw-dir", str(tmp_path / "none")]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    question = result["questions"][0]
    # the fake embedder picks the deciding clause by shared bigrams: whichever it is, the label is scored as read
    assert [str(d) for d in opened] == [str(fake_data_dir)]
    assert question["path"] == "pass" and question["answer"].startswith(f"**结论**：{question['label']}。")
    assert question["conclusion_correct"] == (question["label"] == "不可以")
    assert result["summary"]["by_type"]["no"]["n"] == 1 and len(checkpoint.read_text().splitlines()) == 1
    assert main(["answers", "--dataset", str(dataset), "--pipl-dir", str(fake_data_dir), "--checkpoint",
                 str(checkpoint), "--multilaw-dir", str(tmp_path / "none")]) == 0  # resumed: nothing runs again


def test_a_refusal_is_scored_by_whether_its_listed_options_offer_a_governing_article():
    from agentic_rag.retrieval.types import Article, Retrieval
    from agentic_rag.state import RETRIEVAL

    def refused(*numbers):
        articles = [Article(id=f"{PIPL}#{n}", title=f"第{n}条", law=PIPL, article=n, article_cn=f"第{n}条", text="…")
                    for n in numbers]
        retrieval = Retrieval(query=ROW["query"], query_type="semantic", matcher="ensemble", articles=articles)
        return score(ROW, {**state("很抱歉……", path="none", listed=()), **RETRIEVAL.delta(retrieval)})
    assert [refused(*n)["refusal_lists"] for n in ((23, 47), (47, 10), (47, 16, 17, 20, 10))] == ["first", "listed", "no"]
    answered = score(ROW, state("**结论**：不可以。"))
    assert answered["refusal_lists"] is None  # an answer offers no options
    rows = [{**ROW, **refused(23, 47), "latency_s": 1.0, "llm_calls": 1},
            {**ROW, **refused(47, 16), "latency_s": 1.0, "llm_calls": 1}]
    summary = metrics(rows)
    assert summary["refusal_lists_governing_first"] == 0.5 and summary["refusal_lists_governing"] == 0.5
