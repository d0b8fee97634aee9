"""The ADK entry points: `root_agent` (the ConditionalWorkflowAgent) and `app` (the same agent with the input
guard plugin; `adk web` / `adk api_server` / `adk run` load `app` first)."""
from __future__ import annotations

from google.adk.apps import App

from .config import get_settings
from .safety import redact
from .safety.guard import InputGuard
from .workflow import ConditionalWorkflowAgent

_settings = get_settings()
redact.install(_settings.secrets())

root_agent = ConditionalWorkflowAgent(settings=_settings)
app = App(name="agentic_rag", root_agent=root_agent, plugins=[InputGuard(_settings.max_query_chars)])
