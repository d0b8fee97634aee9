"""The ADK entry points: `root_agent` (the ConditionalWorkflowAgent) and `app` (the same agent with the input
guard plugin; `adk web` / `adk api_server` / `adk run` load `app` first). Under `adk run`, the answer streams to the
terminal (`terminal.py`).

Loading the app starts warming up the knowledge base and the embedded model in the background, so the first
question does not wait on a bare progress bar while a gigabyte of weights loads.
"""
from __future__ import annotations

import logging
import threading

from . import terminal
from .config import Settings, get_settings
from .llm.models import LOCAL_PREFIX, ROLES, model_name
from .oneshot import build_app
from .retrieval.retriever import get_retriever
from .safety import redact
from .workflow import ConditionalWorkflowAgent

log = logging.getLogger(__name__)


def warm_up(settings: Settings) -> None:
    """Open the index and load the models a first question needs (errors surface later, with a message)."""
    try:
        get_retriever(settings).warm_up()
        local = {model_name(r, settings) for r in ROLES if model_name(r, settings).startswith(LOCAL_PREFIX)}
        if local:
            from .llm.local import load_model, local_model_path

            for name in local:
                load_model(local_model_path(name, settings), settings)
    except Exception as e:  # noqa: BLE001 - the first question reports it to the user
        log.warning("warm-up failed: %s", e)


_settings = get_settings()
redact.install(_settings.secrets())
terminal.install()  # `adk run` only: stream the answer there too
threading.Thread(target=warm_up, args=(_settings,), name="warm-up", daemon=True).start()

root_agent = ConditionalWorkflowAgent(settings=_settings)
app = build_app(root_agent, _settings)
