"""The state contract: every slot has exactly one writer (a stage, or the workflow), each writer declares what it
writes, and writing anything else is refused."""
from __future__ import annotations

import pytest

from agentic_rag import state
from agentic_rag.stages.answer.agent import AnswerStage
from agentic_rag.stages.base import UndeclaredWrite
from agentic_rag.stages.clarify import ClarifyStage
from agentic_rag.stages.contextualise.agent import ContextualiseStage
from agentic_rag.stages.grade.agent import GradeStage
from agentic_rag.stages.retrieve import RetrieveStage
from agentic_rag.stages.rewrite.agent import RewriteStage
from agentic_rag.stages.router.agent import RouterStage
from agentic_rag.stages.web import WebStage
from agentic_rag.workflow import ConditionalWorkflowAgent
from tests.fakes.adk import run_agent

WRITERS = (ContextualiseStage, ClarifyStage, RouterStage, RewriteStage, RetrieveStage, GradeStage, WebStage,
           AnswerStage, ConditionalWorkflowAgent)
SLOTS = {v.key: name for name, v in vars(state).items() if isinstance(v, state.Slot)}


def test_every_slot_has_exactly_one_writer():
    owners: dict[str, list[str]] = {}
    for writer in WRITERS:
        for slot in writer.writes:
            owners.setdefault(slot.key, []).append(writer.__name__)
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert set(owners) == set(SLOTS)  # no slot without a writer: a slot nobody writes would be dead


def test_the_per_question_reset_covers_only_per_question_slots():
    assert state.CONVERSATION not in state.PER_QUESTION and state.USER_QUERY not in state.PER_QUESTION
    assert {s.key for s in state.PER_QUESTION} < set(SLOTS)


def test_a_stage_that_writes_an_undeclared_slot_is_stopped(fake_settings):
    class Rogue(WebStage):
        async def _run_async_impl(self, ctx):
            yield self.emit(ctx, state.FINAL_ANSWER.delta("written by the wrong stage"))

    with pytest.raises(UndeclaredWrite, match="final_answer"):
        run_agent(Rogue(name="Rogue", settings=fake_settings))
