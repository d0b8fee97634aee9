"""Only checked text is shown: a model-written answer streams sentence by sentence, each sentence checked first.

The model's tokens are buffered until a sentence ends (。！？；or a line break, never inside an open `**…**`);
each finished sentence has its citations verified (`citations.check`) and its support checked against what the
model was given (`support.judge_sentence`: numbers, wording); an unsupported one is dropped, not shown. The final
answer is exactly what the stream showed, so streaming and non-streaming users read the same text.
"""
from __future__ import annotations

import re

from .citations import Evidence, check
from .support import judge_sentence

_BOUNDARY = re.compile(r"[。！？；!?;\n]")
_SENTENCE = re.compile(r"[^。！？；!?;\n]*(?:[。！？；!?;]|\n|$)")
_CLAIM_CHARS = 4  # shorter pieces (a heading, a list marker) make no claim to check
# "**适用条件：**正文" does not render as bold in CommonMark (a closing ** after punctuation must be followed by
# whitespace or punctuation); moving the colon out of the markers does: "**适用条件**：正文".
_BOLD_COLON = re.compile(r"\*\*([^*\n]{1,30}?)\s*([：:])\s*\*\*")
# An earlier answer form's heading; a model that writes it anyway is not shown.
_HEADING = re.compile(r"^\s*#\s*法律咨询意见[ \t]*(\n|$)")


def tidy(text: str) -> str:
    return _BOLD_COLON.sub(r"**\1**\2", text)


def drop_heading(text: str) -> str:
    return _HEADING.sub("", text, count=1).lstrip("\n")


class VerifiedStream:
    def __init__(self, evidence: Evidence, sources: str = ""):
        self.evidence = evidence
        self.sources = sources or "".join(a.text for a in evidence.articles) + evidence.web_text
        self.dropped: list[str] = []
        self.kept: list[str] = []  # the claims that were checked and shown
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
        return tidy("".join(self._checked(s) for s in _SENTENCE.findall(check(ready, self.evidence)[0]) if s))

    def _checked(self, sentence: str) -> str:
        if len(re.sub(r"[^\u4e00-\u9fff]", "", sentence)) < _CLAIM_CHARS:
            return sentence
        if judge_sentence(sentence, self.sources, None).kept:
            self.kept.append(sentence.strip())
            return sentence
        self.dropped.append(sentence.strip())
        return "\n" if sentence.endswith("\n") else ""

    def _last_boundary(self) -> int:
        for m in reversed(list(_BOUNDARY.finditer(self._buffer))):
            if self._buffer[: m.end()].count("**") % 2 == 0:
                return m.start()
        return -1
