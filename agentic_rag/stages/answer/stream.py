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


def tidy(text: str) -> str:
    return _BOLD_COLON.sub(r"**\1**\2", text)


class VerifiedStream:
    def __init__(self, evidence: Evidence):
        self.evidence = evidence
        self._buffer = ""

    def feed(self, piece: str) -> str:
        """Verified text that is ready to show after `piece` arrived ('' while a sentence is still open)."""
        self._buffer += piece
        cut = self._last_boundary()
        if cut < 0:
            return ""
        ready, self._buffer = self._buffer[: cut + 1], self._buffer[cut + 1:]
        return tidy(check(ready, self.evidence)[0])

    def flush(self) -> str:
        ready, self._buffer = self._buffer, ""
        return tidy(check(ready, self.evidence)[0]) if ready else ""

    def _last_boundary(self) -> int:
        for m in reversed(list(_BOUNDARY.finditer(self._buffer))):
            if self._buffer[: m.end()].count("**") % 2 == 0:
                return m.start()
        return -1
