"""What a question may spend and has spent — its deadline and LLM calls, stage times, errors — kept per invocation
by the agent answering it (the workflow shares its accounts with its stages; a stage run on its own keeps its own)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from google.adk.agents.invocation_context import InvocationContext

from ..config import Settings
from ..llm.call import Budget
from ..llm.models import question_deadline


@dataclass
class QuestionRun:
    budget: Budget
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)


class Accounts:
    """The runs of the questions being answered, by invocation id (several sessions may ask at once)."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._runs: dict[str, QuestionRun] = {}

    def of(self, ctx: InvocationContext) -> QuestionRun:
        """This invocation's run, started on first use (its deadline counts from then)."""
        run = self._runs.get(ctx.invocation_id)
        if run is None:
            run = self._runs[ctx.invocation_id] = QuestionRun(Budget.starting_now(question_deadline(self._settings)))
        return run

    def end(self, ctx: InvocationContext) -> QuestionRun | None:
        return self._runs.pop(ctx.invocation_id, None)
