"""`adk run` streaming (agentic_rag/terminal.py): the CLI's printer shows partial answer text as it comes and the
final event only completes it; everything else is printed by ADK's own printer, unchanged."""
from __future__ import annotations

from google.adk.events import Event
from google.genai import types

from agentic_rag import terminal


def event(author: str, text: str, partial: bool = False) -> Event:
    return Event(author=author, partial=partial, content=types.Content(role="model", parts=[types.Part(text=text)]))


class Screen:
    def __init__(self):
        self.text, self.delegated = "", []

    def echo(self, message: str = "", nl: bool = True) -> None:
        self.text += message + ("\n" if nl else "")

    def original(self, ev, jsonl=False, session_id=None) -> None:
        self.delegated.append(ev.author)
        self.echo(f"[{ev.author}]: {ev.content.parts[0].text}")


def test_partial_text_is_printed_as_it_comes_and_the_final_event_only_completes_it():
    screen = Screen()
    printer = terminal.StreamPrinter(screen.original, screen.echo)
    printer(event("RetrievalAgent", "检索到 5 条"))
    printer(event("AnswerAgent", "# 法律咨询意见\n", partial=True))
    assert screen.text.endswith("[AnswerAgent]: # 法律咨询意见\n")  # shown before the answer is complete
    printer(event("AnswerAgent", "依据第十条。", partial=True))
    printer(event("AnswerAgent", "# 法律咨询意见\n\n依据第十条。\n\n**免责声明：**仅供参考"))
    assert screen.text == "[RetrievalAgent]: 检索到 5 条\n[AnswerAgent]: # 法律咨询意见\n依据第十条。\n\n**免责声明：**仅供参考\n"
    assert screen.delegated == ["RetrievalAgent"]


def test_a_final_text_that_does_not_continue_the_stream_is_printed_whole():
    screen = Screen()
    printer = terminal.StreamPrinter(screen.original, screen.echo)
    printer(event("AnswerAgent", "依据第十条。", partial=True))
    printer(event("AnswerAgent", "模型服务暂不可用。"))  # e.g. the model failed mid-answer: the degraded text
    assert screen.text == "[AnswerAgent]: 依据第十条。\n模型服务暂不可用。\n"


def test_resume_point_ignores_whitespace_differences():
    assert terminal.resume_at("a\n\nb c d", "a b") == 4
    assert terminal.resume_at("abc", "") == 0
    assert terminal.resume_at("abc", "ax") is None


def test_only_adk_run_without_jsonl_streams_to_the_terminal():
    assert terminal.is_adk_run(["/venv/bin/adk", "run", "agentic_rag"])
    assert not terminal.is_adk_run(["/venv/bin/adk", "run", "--jsonl", "agentic_rag"])
    assert not terminal.is_adk_run(["/venv/bin/adk", "api_server", "."])
    assert not terminal.is_adk_run(["pytest"]) and not terminal.install(["pytest"]) and not terminal.streaming()


def test_the_retrieval_table_keeps_its_type_line_without_a_dense_score():
    from agentic_rag.demo import format_retrieval
    from agentic_rag.retrieval.types import Retrieval

    table = format_retrieval(Retrieval(query="第五十七条", query_type="exact", matcher="ensemble", articles=[]))
    assert "类型: exact   匹配器: ensemble" in table and "最高向量相似度" not in table
