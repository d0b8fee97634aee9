"""The conversation eval (agentic_rag.eval.conversation) on two real conversations of the eval set, with the scripted
model and the fake-embedder PIPL index: per-turn records, the summary, `--mode off`, resuming from a checkpoint."""
from __future__ import annotations

import json

import pytest
from google.adk.models.registry import LLMRegistry

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.eval.__main__ import main
from agentic_rag.eval.conversation import evaluate_conversations, load_conversations, run_config, signal_report
from agentic_rag.eval.e2e import CheckpointMismatchError
from agentic_rag.oneshot import build_app
from agentic_rag.workflow import ConditionalWorkflowAgent
from tests.fakes.fake_llm import FakeLlm, install

DATASET = PROJECT_ROOT / "eval" / "conversation_eval.jsonl"
IDS = ("conv-pipl-001", "conv-pipl-002")  # vague opener → reply → penalty; first → pronoun → penalty
GOOD = json.dumps({"relevance": 9, "completeness": 8, "accuracy": 9, "coverage": 8}, ensure_ascii=False)


@pytest.fixture
def rows():
    rows = [r for r in load_conversations(DATASET, "all") if r["id"] in IDS]
    assert [r["id"] for r in rows] == list(IDS)
    return rows


def condenser(rows):
    """A perfect contextualiser: the eval set's reference standalone question of the follow-up it is asked about."""
    standalone = {t["user"]: t["standalone"] for r in rows for t in r["turns"]}

    def reply(prompt: str) -> str:
        data = prompt.split("【对话上文】")[1]
        follow_up = next(line for line in data.splitlines() if line.startswith("追问："))
        return standalone[follow_up.removeprefix("追问：")]

    return reply


@pytest.fixture
def apps(fake_settings, fake_retriever):
    LLMRegistry.register(FakeLlm)
    agent = ConditionalWorkflowAgent(settings=fake_settings, retriever_factory=lambda: fake_retriever)
    return {"pipl": build_app(agent, fake_settings)}


def test_conversations_on_and_off_and_resumed(rows, apps, fake_settings, tmp_path):
    install({"contextualiser": condenser(rows), "evaluator": GOOD, "answer": "可以。"})
    checkpoint = tmp_path / "conv.jsonl"
    config = run_config(fake_settings, "on", {"pipl": "fake-index"})
    result = evaluate_conversations(rows, apps, "on", config, checkpoint=checkpoint)
    vague, reply, penalty = result["conversations"][0]["turns"]
    assert vague["clarified"] and vague["path"] == "clarify" and vague["contextualise_calls"] == 0
    assert reply["context"] == "clarify_reply" and reply["contextualise_calls"] == 1 and not reply["clarified"]
    assert reply["must_keep"] == ["网店", "快递单", "两千块"]  # the reference standalone passed the check
    assert penalty["context"] == "follow_up" and penalty["question"] == rows[0]["turns"][2]["standalone"]
    first, pronoun, _ = result["conversations"][1]["turns"]
    assert first["question"] == first["user"] and first["contextualise_calls"] == 0 and first["context"] == "first"
    assert pronoun["contextualise_calls"] == 1 and pronoun["question"] == rows[1]["turns"][1]["standalone"]
    assert all(t["latency_s"] >= 0 for c in result["conversations"] for t in c["turns"])
    # what the user read, to be scored against the labels: the clarifying question, the answer to the penalty turn
    # (from the knowledge base: 快递单 names a PIPL topic, though 网店 names e-commerce)
    assert "请具体说说发生了什么" in vague["answer"] and "**依据**" in penalty["answer"] and "12348" not in penalty["answer"]
    summary = result["summary"]
    assert summary["clarified_when_expected"] == 1.0 and summary["clarified_when_not"] == 0.0
    assert summary["first_turns_unchanged"] == 1.0 and summary["contextualise_calls_per_turn"] == round(4 / 6, 4)
    assert summary["follow_ups"]["history_used"] == 1.0 and summary["must_keep_kept"] == 1.0
    assert set(summary["by_kind"]) == {"first", "vague_first", "clarify_reply", "pronoun", "penalty"}
    assert summary["by_kind"]["penalty"]["n"] == 2
    calls = len(FakeLlm.calls)
    again = evaluate_conversations(rows, apps, "on", config, checkpoint=checkpoint)  # resumed: nothing re-run
    assert len(FakeLlm.calls) == calls and again["conversations"] == result["conversations"]
    with pytest.raises(CheckpointMismatchError):
        evaluate_conversations(rows, apps, "off", run_config(fake_settings, "off", {"pipl": "fake-index"}),
                               checkpoint=checkpoint)
    # off: every turn alone — no history, no contextualise call; the vague opener is still clarified
    off = evaluate_conversations(rows, apps, "off", run_config(fake_settings, "off", {"pipl": "fake-index"}))
    turns = [t for c in off["conversations"] for t in c["turns"]]
    assert [t["context"] for t in turns] == ["vague", "first", "first", "first", "first", "first"]
    assert off["summary"]["contextualise_calls_per_turn"] == 0.0 and turns[0]["clarified"]
    # both: the session, then each later turn alone under "alone"; first turns are asked once
    calls = len(FakeLlm.calls)
    both = evaluate_conversations(rows, apps, "both", run_config(fake_settings, "both", {"pipl": "fake-index"}))
    session = [t for c in both["conversations"] for t in c["turns"]]
    assert [t["context"] for t in session] == ["vague", "clarify_reply", "follow_up", "first", "follow_up", "follow_up"]
    assert [t["alone"]["context"] for t in session if "alone" in t] == ["first"] * 4
    assert "alone" not in session[0] and "alone" not in session[3]
    assert both["summary"]["follow_ups"]["history_used"] == 1.0
    assert both["summary_alone"]["follow_ups"]["history_used"] == 0.0
    assert set(both["follow_ups_on_vs_alone"]["answered_from_gold"]) == {"on", "alone"}
    assert len(FakeLlm.calls) > calls


def test_the_signal_report_counts_the_rules_alone(rows):
    report = signal_report(rows)
    assert report["vague_opener"] == {"flagged_vague": 1, "vague": 1, "flagged_first": 0, "first": 1}
    assert report["follow_up"]["tp"] == 3 and report["follow_up"]["fp"] == 0 and report["follow_up"]["misses"] == []


def test_the_cli_needs_an_index(capsys):
    assert main(["conversation", "--dataset", str(DATASET)]) == 1
    assert "--pipl-dir" in capsys.readouterr().err
