"""The web provider protocol. A provider never raises: every outcome, good or bad, is a `WebOutcome` whose
`status` the workflow branches on and whose `message` is a short Chinese sentence for the user."""
from __future__ import annotations

from typing import Protocol

from ..state import WebOutcome


class WebProvider(Protocol):
    name: str

    def configured(self) -> bool:
        """True when the provider has a key (the `auto` choice takes the first configured one)."""

    def search(self, query: str, timeout: float | None = None) -> WebOutcome:
        """Search; blocking (the web stage runs it in a worker thread); never raises."""
