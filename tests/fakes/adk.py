"""Run one stage (or the whole workflow) through ADK's InMemoryRunner with a given starting state."""
from __future__ import annotations

import asyncio
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.runners import InMemoryRunner
from google.genai import types


def run_agent(agent: BaseAgent, question: str = "", state: dict[str, Any] | None = None,
              streaming: bool = False) -> tuple[dict, list]:
    async def go():
        runner = InMemoryRunner(agent=agent, app_name="t")
        session = await runner.session_service.create_session(app_name="t", user_id="u", state=state or {})
        config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
        events = [ev async for ev in runner.run_async(
            user_id="u", session_id=session.id, run_config=config,
            new_message=types.Content(role="user", parts=[types.Part(text=question or "?")]))]
        session = await runner.session_service.get_session(app_name="t", user_id="u", session_id=session.id)
        return dict(session.state), events

    return asyncio.run(go())


def texts(events) -> list[tuple[str, str]]:
    """(author, text) of the events that carry text, partial ones included."""
    return [(e.author, e.content.parts[0].text) for e in events
            if e.content and e.content.parts and e.content.parts[0].text]
