"""Ask the workflow one question in process (InMemoryRunner) and get the final session state back.

Used by `make demo` and the end-to-end evaluation; `adk run/web/api_server` users go through ADK's own runners.
"""
from __future__ import annotations

from collections.abc import Callable

from google.adk.agents import BaseAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.runners import InMemoryRunner
from google.genai import types

APP_NAME = "agentic_rag"


async def ask(agent: BaseAgent, question: str, on_event: Callable[[Event], None] | None = None,
              state: dict | None = None, stream: bool = False) -> dict:
    """The final session state; with `stream` the answer also arrives in checked partial events."""
    runner = InMemoryRunner(agent=agent, app_name=APP_NAME)
    session = await runner.session_service.create_session(app_name=APP_NAME, user_id="local", state=state or {})
    message = types.Content(role="user", parts=[types.Part(text=question)])
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    async for event in runner.run_async(user_id="local", session_id=session.id, new_message=message,
                                        run_config=config):
        if on_event is not None:
            on_event(event)
    session = await runner.session_service.get_session(app_name=APP_NAME, user_id="local", session_id=session.id)
    return dict(session.state)


async def ask_stage(stage: BaseAgent, question: str) -> dict:
    """Run one stage on its own for `question` (it reads the question from state, as in the workflow)."""
    from .state import USER_QUERY

    return await ask(stage, question, state=USER_QUERY.delta(question))
