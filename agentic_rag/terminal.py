"""Streaming in `adk run`: ADK 2.13's CLI has no streaming switch (it runs with the default RunConfig, streaming
off) and prints every event whole, on its own line. In the `adk run` process, and only there, the answer stage
streams as it does for `/run_sse`, and the CLI's event printer shows the answer's checked pieces as they arrive
on one line, then only what the final event adds (disclaimer, citation note) instead of repeating the whole text.

`adk web`, `adk api_server` and `adk run --jsonl` are untouched: there the client chooses streaming per request.
"""
from __future__ import annotations

import sys
from pathlib import Path

_streaming = False


def streaming() -> bool:
    """True in an `adk run` process whose printer was replaced by `install`."""
    return _streaming


def is_adk_run(argv: list[str]) -> bool:
    return bool(argv) and Path(argv[0]).name == "adk" and argv[1:2] == ["run"] and "--jsonl" not in argv


def resume_at(final: str, streamed: str) -> int | None:
    """Where `final` continues after what was `streamed` (whitespace may differ between the two); None when the
    streamed text is not a prefix of the final one."""
    i = 0
    for ch in streamed:
        if ch.isspace():
            continue
        while i < len(final) and final[i].isspace():
            i += 1
        if i >= len(final) or final[i] != ch:
            return None
        i += 1
    return i


class StreamPrinter:
    """Wraps the CLI's `_print_event`: partial text is printed as it comes, the final event only completes it."""

    def __init__(self, original, echo):
        self.original, self.echo = original, echo
        self.shown: dict[str, str] = {}  # author → what its partial events printed so far

    def __call__(self, event, jsonl: bool = False, session_id: str | None = None) -> None:
        parts = event.content.parts if event.content and event.content.parts else []
        text, author = "".join(p.text for p in parts if p.text), event.author or "unknown"
        if event.partial and text:
            if author not in self.shown:
                self.echo(f"[{author}]: ", nl=False)
                self.shown[author] = ""
            self.echo(text, nl=False)
            self.shown[author] += text
        elif author in self.shown and not event.partial:
            streamed = self.shown.pop(author)
            cut = resume_at(text, streamed)
            self.echo(text[cut:] if cut is not None else "\n" + text)
        else:
            self.original(event, jsonl=jsonl, session_id=session_id)


def install(argv: list[str] | None = None) -> bool:
    """Stream the answer in this process if it is `adk run` (idempotent); returns whether it did."""
    global _streaming
    if _streaming or not is_adk_run(sys.argv if argv is None else argv):
        return _streaming
    import click
    from google.adk.cli import cli

    cli._print_event = StreamPrinter(cli._print_event, click.echo)
    _streaming = True
    return True
