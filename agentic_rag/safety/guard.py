"""The input guard at the app boundary: what a user sends is checked before ADK stores it in the session.

ADK's runner calls plugins' `on_user_message_callback` before it appends the user message to the session, and a
returned message replaces the original. So an oversize question is stored as a short marker (its length and
hash), never in full; an empty message (`parts: []`, which ADK would refuse with a 500) becomes an empty text the
workflow answers with a clear message; non-text parts (files, images) are dropped, since the workflow reads text.
The workflow itself validates again, so it is safe without the plugin too (InMemoryRunner in tests and eval).
"""
from __future__ import annotations

import hashlib
import re

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

MARKER = "〔问题过长未保存：{n} 字，上限 {limit} 字，sha256:{digest}〕"
_MARKER_RE = re.compile(r"^〔问题过长未保存：(\d+) 字，上限 (\d+) 字，sha256:[0-9a-f]{16}〕$")


def parse_marker(text: str) -> tuple[int, int] | None:
    """(length, limit) when `text` is the guard's marker for an oversize question."""
    m = _MARKER_RE.match(text)
    return (int(m[1]), int(m[2])) if m else None


def _text(message: types.Content) -> str:
    return "".join(p.text or "" for p in (message.parts or []) if not p.thought)


class InputGuard(BasePlugin):
    def __init__(self, max_chars: int):
        super().__init__(name="input_guard")
        self.max_chars = max_chars

    async def on_user_message_callback(self, *, invocation_context: InvocationContext,
                                       user_message: types.Content) -> types.Content | None:
        parts = user_message.parts or []
        text = _text(user_message)
        if len(text) > self.max_chars:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
            text = MARKER.format(n=len(text), limit=self.max_chars, digest=digest)
        elif parts and all(p.text is not None and not p.thought for p in parts):
            return None  # an ordinary text message: stored as sent
        return types.Content(role="user", parts=[types.Part(text=text)])
