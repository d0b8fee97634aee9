"""Secrets never reach a log line, at any level, from any library.

A log record factory (not a handler filter: handlers are installed later by `adk web`, uvicorn or a test, and
filters on loggers do not see records propagated from children) replaces every known secret in each record's
message, in those of its arguments that contain one (the others keep their type: uvicorn's access formatter
unpacks them), in its exception text and in its stack text. Known secrets are the configured keys plus
the values of the provider key variables in the environment. Only records that a logger lets through are
created, so disabled levels cost nothing.
"""
from __future__ import annotations

import logging
import os
import re
import threading

MASK = "***"
# Environment variables that hold provider keys even when Settings does not know the provider (LiteLLM reads them).
KEY_VARIABLE = re.compile(r"(API_KEY|_TOKEN|_SECRET)$")
MIN_SECRET_CHARS = 6  # shorter values would redact ordinary words

_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False


def _env_secrets() -> set[str]:
    return {v.strip() for k, v in os.environ.items() if KEY_VARIABLE.search(k.upper()) and v and v.strip()}


def redact(text: str) -> str:
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _clean(value):
    """The value, or its redacted text when its text holds a secret."""
    text = value if isinstance(value, str) else None
    if text is None:
        try:
            text = str(value)
        except Exception:  # noqa: BLE001 - an unprintable argument cannot hold a printable secret
            return value
    cleaned = redact(text)
    return value if cleaned == text else cleaned


def _redacted_record(factory):
    def make(*args, **kwargs) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        if not _secrets:
            return record
        record.msg = _clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_clean(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _clean(v) for k, v in record.args.items()}
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    return make


def install(secrets: list[str] | tuple[str, ...] = ()) -> None:
    """Redact these secrets (and the provider keys in the environment) from every log record from now on."""
    global _installed
    with _lock:
        _secrets.update(s for s in (*secrets, *_env_secrets()) if len(s) >= MIN_SECRET_CHARS)
        if not _installed:
            logging.setLogRecordFactory(_redacted_record(logging.getLogRecordFactory()))
            _installed = True
