"""`make demo`: answer one question end to end and show how the answer was reached (further messages continue the
same conversation: `python -m agentic_rag.demo "问题" 1` picks the first article a refusal lists).

Runs the ADK workflow (`root_agent`'s ConditionalWorkflowAgent) in process and prints the progress of each stage,
the retrieved articles with per-channel ranks and scores, the path taken, the four quality scores, the checked
citations and the answer. `--retrieval-only` shows just the LocalRetriever's work (no LLM).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import shlex
import sys
import time

from .config import get_settings
from .knowledge.index import IndexError_
from .legal.laws import short
from .retrieval.channels import MATCHERS
from .retrieval.retriever import LocalRetriever, QueryError
from .retrieval.types import Retrieval
from .state import CITATIONS, CONVERSATION, DIMENSIONS, FINAL_ANSWER, PATH, QUALITY, RETRIEVAL, TIMINGS
from .weights import ModelNotAvailableError

CHANNELS = ("lookup", "vector", "bm25", "gram", "follow_up")
DEMO_QUESTION = "公司把我的手机号卖给别人合法吗？"


def format_retrieval(result: Retrieval, single_law: bool = False) -> str:
    """The retrieval table; every article is named with its law unless the knowledge base holds only one."""
    lines = [f"问题: {result.query}",
             f"类型: {result.query_type}   匹配器: {result.matcher}   "
             + (f"最高向量相似度: {result.max_vector_score:.3f}" if result.max_vector_score is not None else ""),
             f"{'#':>2} {'条文':12} {'得分':>8} " + " ".join(f"{c + ' 名次/分数':>18}" for c in CHANNELS)]
    for i, a in enumerate(result.articles, start=1):
        cells = []
        for c in CHANNELS:
            ch = a.channels.get(c)
            cells.append(f"{int(ch['rank']):>4} / {ch['score']:<11.4f}" if ch and "rank" in ch
                         else f"{'引用':>18}" if ch else f"{'-':>18}")
        lines.append(f"{i:>2} {a.article_cn:12} {a.score:>8.4f} " + " ".join(f"{c:>18}" for c in cells))
        law = f"《{short(a.law)}》" if a.law and not single_law else ""
        lines.append(f"   {law}{a.text[:90]}{'…' if len(a.text) > 90 else ''}")
    timing = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    lines.append(f"耗时: {timing}")
    return "\n".join(line for line in lines if line)


async def run_conversation(app, messages: list[str]) -> list[dict]:
    """Ask the messages in order in one session, printing each stage's progress line as it happens and the answer
    as it streams (sentence by sentence, each checked before it is shown); return the state after each turn."""
    from .oneshot import converse
    from .stages.answer.agent import AnswerStage

    started = time.perf_counter()
    streamed: list[str] = []
    shown: set[int] = set()

    def show(turn: int, ev) -> None:
        if len(messages) > 1 and turn not in shown:
            shown.add(turn)
            print(f"[{time.perf_counter() - started:6.1f}s] 用户: {messages[turn]}", flush=True)
        text = (ev.content.parts[0].text or "") if ev.content and ev.content.parts else ""
        if ev.partial and text:
            if not streamed:
                print(f"[{time.perf_counter() - started:6.1f}s] 回答（逐句核对后显示）：", flush=True)
            streamed.append(text)
            print(text, end="", flush=True)
        elif text.strip() and ev.author != AnswerStage.agent_name:
            if streamed:  # the previous turn's streamed answer is complete
                print(f"\n[{time.perf_counter() - started:6.1f}s] 回答完毕", flush=True)
                streamed.clear()
            line = text.strip().splitlines()[0][:150]
            print(f"[{time.perf_counter() - started:6.1f}s] {ev.author}: {line}", flush=True)

    states = await converse(app, messages, show, stream=True)
    if streamed:
        print(f"\n[{time.perf_counter() - started:6.1f}s] 回答完毕", flush=True)
    return states


def pick_hint(state: dict, messages: list[str]) -> str:
    """After a refusal that lists articles, how to reply with a number here (the demo asks its messages and ends)."""
    conversation = CONVERSATION.get(state)
    if not (conversation and conversation.pending and conversation.pending.articles):
        return ""
    quoted = " ".join(shlex.quote(m) for m in messages)  # pasted into a shell: a quote or $ in a message is kept
    return (f"\n\n提示：adk run / adk web 中直接回复序号即可按该条回答；在这里把序号接在问题后面再问一次，例如：\n"
            f"  .venv/bin/python -m agentic_rag.demo {quoted} 1")


def format_outcome(state: dict) -> str:
    lines = [""]
    quality = QUALITY.get(state)
    if quality:
        scores = "，".join(f"{k} {quality.scores.get(k, 0):g}" for k in DIMENSIONS)
        lines.append(f"路径: {PATH.get(state)}   质量: " + scores
                     + f"   总分 {quality.total:g}/40 → {quality.verdict.upper()} ({quality.source})")
    citations = CITATIONS.get(state)
    if citations:
        lines.append(f"引用核对: 有效 {citations.valid}  未核实 {citations.invalid}")
    timings = TIMINGS.get(state) or {}
    if timings:
        lines.append("耗时: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
    lines += ["", "=" * 60, FINAL_ANSWER.get(state) or "(no answer)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("messages", nargs="*", default=[DEMO_QUESTION],
                   help="the question, and any further messages of the same conversation (e.g. 「1」 to pick an article)")
    p.add_argument("--matcher", default="ensemble", choices=list(MATCHERS),
                   help="with --retrieval-only: the matcher whose ranking is shown (the agent uses ensemble)")
    p.add_argument("--retrieval-only", action="store_true", help="show retrieval only, no LLM")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not args.retrieval_only:
        return answer(args.messages)
    try:
        retriever = LocalRetriever.from_settings(get_settings())
        result = retriever.retrieve(args.messages[0], matcher=args.matcher)
    except (QueryError, IndexError_, ModelNotAvailableError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_retrieval(result, single_law=retriever.law is not None))
    return 0


def answer(messages: list[str]) -> int:
    from .oneshot import build_app
    from .safety import redact
    from .workflow import ConditionalWorkflowAgent

    settings = get_settings()
    redact.install(settings.secrets())
    state = asyncio.run(run_conversation(build_app(ConditionalWorkflowAgent(settings=settings), settings), messages))[-1]
    retrieval = RETRIEVAL.get(state)
    if retrieval:
        print()
        print(format_retrieval(retrieval, single_law=len({a.law for a in retrieval.articles}) <= 1))
    print(format_outcome(state) + pick_hint(state, messages))
    return 0 if PATH.get(state) not in ("error", "rejected") else 1


if __name__ == "__main__":
    sys.exit(main())
