"""Ask the workflow in process (InMemoryRunner) and get the final session state back: one question (`ask`), or the
turns of one conversation in one session (`converse`). `build_app` is the app the CLIs load (agent.py) and the
tests run: the workflow with the input guard plugin.

Used by `make demo` and the evaluations; `adk run/web/api_server` users go through ADK's own runners.
"""
from __future__ import annotations

from collections.abc import Callable

from google.adk.agents import BaseAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import InMemoryRunner
from google.genai import types

from .config import Settings
from .safety.guard import InputGuard

APP_NAME = "agentic_rag"


def build_app(agent: BaseAgent, settings: Settings, name: str = APP_NAME) -> App:
    """The workflow as the CLIs load it: with the input guard (an oversize question is stored as a marker)."""
    return App(name=name, root_agent=agent, plugins=[InputGuard(settings.max_query_chars)])


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
    """Run one stage on its own for `question` (it reads the question from state, as in the workflow: the message
    and the question it answers are the same on a first turn)."""
    from .state import QUESTION, USER_QUERY, merge

    return await ask(stage, question, state=merge(USER_QUERY.delta(question), QUESTION.delta(question)))


async def converse(app: App, messages: list[str], on_event: Callable[[int, Event], None] | None = None,
                   stream: bool = False) -> list[dict]:
    """The messages of one conversation, in order, in one session; the session state after each turn."""
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="local")
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    states = []
    for turn, text in enumerate(messages):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="local", session_id=session.id, new_message=message,
                                            run_config=config):
            if on_event is not None:
                on_event(turn, event)
        done = await runner.session_service.get_session(app_name=app.name, user_id="local", session_id=session.id)
        states.append(dict(done.state))
    return states
