"""Only checked text is shown: the answer streams sentence by sentence, each sentence's citations verified.

The model's tokens are buffered until a sentence ends (。！？；or a line break, never inside an open `**…**`);
the finished sentences are checked (`citations.check`) and only then shown. The final answer is the check of the
whole text, so what was streamed is always a prefix of what is kept.
"""
from __future__ import annotations

import re

from .citations import Evidence, check

_BOUNDARY = re.compile(r"[。！？；!?;\n]")
# "**适用条件：**正文" does not render as bold in CommonMark (a closing ** after punctuation must be followed by
# whitespace or punctuation); moving the colon out of the markers does: "**适用条件**：正文".
_BOLD_COLON = re.compile(r"\*\*([^*\n]{1,30}?)\s*([：:])\s*\*\*")


# The answer's heading is written in code; a model that repeats it anyway is not shown twice.
_HEADING = re.compile(r"^\s*#\s*法律咨询意见[ \t]*(\n|$)")


def tidy(text: str) -> str:
    return _BOLD_COLON.sub(r"**\1**\2", text)


def drop_heading(text: str) -> str:
    return _HEADING.sub("", text, count=1).lstrip("\n")


class VerifiedStream:
    def __init__(self, evidence: Evidence):
        self.evidence = evidence
        self._buffer = ""
        self._started = False  # until the first text is shown, a repeated heading is dropped

    def feed(self, piece: str) -> str:
        """Verified text that is ready to show after `piece` arrived ('' while a sentence is still open)."""
        self._buffer += piece
        cut = self._last_boundary()
        if cut < 0:
            return ""
        ready, self._buffer = self._buffer[: cut + 1], self._buffer[cut + 1:]
        return self._show(ready)

    def flush(self) -> str:
        ready, self._buffer = self._buffer, ""
        return self._show(ready)

    def _show(self, ready: str) -> str:
        if not self._started:
            ready = drop_heading(ready)
            self._started = bool(ready.strip())
        return tidy(check(ready, self.evidence)[0]) if ready else ""

    def _last_boundary(self) -> int:
        for m in reversed(list(_BOUNDARY.finditer(self._buffer))):
            if self._buffer[: m.end()].count("**") % 2 == 0:
                return m.start()
        return -1
