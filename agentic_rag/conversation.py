"""The conversation a session remembers: rebuilt from the workflow's own stored events, recorded once per turn.

Why events and not session state: `adk api_server` clients can write any state key (a session created with
`state`, a `/run` with `stateDelta`, a PATCH of the session), and so can a `--replay` file of `adk run`. Every one
of those writes is stored on an event authored by ``user`` (or on no event at all), and a session created with
`events` may not carry any `actions` (ADK refuses them with 400). So the history is read only from events that

* were authored by the workflow (the root agent) itself, in an earlier invocation, and not restored from outside;
* carry the `conversation` record in their `state_delta` — the workflow writes it at the end of every turn;

and the latest such record is validated through its typed model (`state.Conversation`: at most 3 turns, questions
of at most 200 characters, at most 8 cited articles per turn). Whatever a client puts under the `conversation` key
of the state is overwritten at the end of the turn and never read. The text of the record (earlier standalone
questions) is the user's own words, treated as data: it reaches a prompt only fenced (`safety.fence.history_block`).

What a turn keeps: the standalone question, the route, the law and the cited (law, article) ids — never the
answer's text (a small model would copy it, and it may quote web pages).
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from google.adk.events import Event
from pydantic import ValidationError

from .retrieval.types import Article
from .stages.evidence import label
from .state import (
    CITATIONS,
    CLARIFY,
    CONTEXT,
    CONVERSATION,
    KB_LAW,
    MAX_CITED,
    MAX_OPTION_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TURNS,
    PATH,
    QUESTION,
    RETRIEVAL,
    ROUTE,
    USER_QUERY,
    Conversation,
    Pending,
    Turn,
)

log = logging.getLogger(__name__)

NEAREST_OPTIONS = 4  # the nearest articles a refusal lists, numbered, for the user to pick the one that is the case
# (4, not 3: on the lay dev half a governing article is among the first three for 14 of 25 refused questions, the
# first four 16, the first five 16; docs/evaluation.md)
LEGAL_ROUTES = ("kb", "multi", "out_of_kb")  # the turns a follow-up can refer to (not greetings)
ANSWERED_PATHS = ("pass", "hedged", "web", "degraded", "none", "out_of_kb")
_RESTORED = "__adk_internal_restored_event"  # ADK marks events a client restored into a session (create + events)


def clip(text: str, limit: int = MAX_QUESTION_CHARS) -> str:
    """At most `limit` characters: the start (what was asked first) and the end (the latest follow-up) are kept."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    head = limit * 2 // 5
    return text[:head] + "…" + text[len(text) - (limit - head - 1):]


def is_record(event: Event, author: str, current_invocation: str) -> bool:
    """An event that may carry history: the workflow's own, from an earlier turn, with the record in its delta."""
    if event.author != author or event.invocation_id == current_invocation or event.partial:
        return False
    if _RESTORED in (event.custom_metadata or {}):
        return False
    delta = event.actions.state_delta if event.actions else None
    return bool(delta) and CONVERSATION.key in delta


def history(events: Iterable[Event], author: str, current_invocation: str) -> Conversation:
    """The conversation as the workflow last recorded it (empty on a first turn, or when the record is invalid)."""
    for event in reversed(list(events)):
        if not is_record(event, author, current_invocation):
            continue
        try:
            return CONVERSATION.get(event.actions.state_delta) or Conversation()
        except ValidationError as e:  # our own writes always fit: a broken record starts the conversation clean
            log.warning("conversation record of event %s is invalid, starting clean: %s", event.id, e)
            return Conversation()
    return Conversation()


def cited(state: Any) -> list[tuple[str, int]]:
    """The (law, article) ids the turn's answer put forward: listed verbatim, then cited and verified."""
    citations = CITATIONS.get(state)
    if citations is None:
        return []
    keys = [(str(law), int(n)) for law, n in citations.listed + citations.valid_keys
            if law and isinstance(n, int)]
    return list(dict.fromkeys(keys))[:MAX_CITED]


def turn_law(state: Any, ids: list[tuple[str, int]]) -> str | None:
    """The law the turn was about: the most cited one, else the law the retrieval focused on."""
    if ids:
        return Counter(law for law, _ in ids).most_common(1)[0][0]
    retrieval = RETRIEVAL.get(state)
    return retrieval.focus_laws[0] if retrieval and retrieval.focus_laws else None


def offered_articles(state: Any) -> list[Article]:
    """The nearest articles a refusal ("not found in this knowledge base") lists as numbered options, best first."""
    retrieval = RETRIEVAL.get(state)
    return retrieval.evidence[:NEAREST_OPTIONS] if retrieval else []


def refusal_pending(state: Any) -> Pending | None:
    """After a refusal: the refused question waits for the user to pick one of the listed articles by its number."""
    offered = [a for a in offered_articles(state) if a.article is not None] if PATH.get(state) == "none" else []
    if not offered:
        return None
    one_law = KB_LAW.get(state) is not None
    return Pending(question=clip(QUESTION.get(state, "")),
                   options=[clip(label(a, one_law), MAX_OPTION_CHARS) for a in offered],
                   articles=[(a.law, a.article) for a in offered])


def next_conversation(previous: Conversation, state: Any) -> Conversation:
    """What the session remembers after this turn (the workflow records it at the end of every turn).

    * a clarifying question: the vague question waits (pending) for the user's reply, nothing else is kept;
    * a refusal that listed the nearest articles: recorded like an answered question, and it waits (pending) for
      the user to pick one of them by its number;
    * an answered legal question: appended to the history when it was understood with it (a follow-up), else it
      starts the history again (a first turn, a new self-contained question: a topic switch starts clean);
    * a greeting, a refused message or a failure: the history stays as it was, a pending question is dropped
      once the contextualise stage has seen the message (it decided to merge it or not).
    """
    context = CONTEXT.get(state)
    if context is None:  # refused before the contextualise stage: nothing was read or consumed
        return previous
    path, route = PATH.get(state), ROUTE.get(state)
    clarification = CLARIFY.get(state)
    if path == "clarify" and clarification is not None:
        options = [clip(o, MAX_OPTION_CHARS) for o in clarification.options]
        return Conversation(pending=Pending(question=clip(USER_QUERY.get(state, "")), options=options))
    if route is None or route.kind not in LEGAL_ROUTES or path not in ANSWERED_PATHS:
        return Conversation(turns=previous.turns)
    ids = cited(state)
    turn = Turn(question=clip(context.understood or QUESTION.get(state) or context.question), route=route.kind,
                law=turn_law(state, ids), cited=ids)
    earlier = previous.turns if context.kind == "follow_up" else []
    return Conversation(turns=(earlier + [turn])[-MAX_TURNS:], pending=refusal_pending(state))
