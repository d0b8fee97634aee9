"""Secrets never reach a log line, at any level, from any library.

A log record factory (not a handler filter: handlers are installed later by `adk web`, uvicorn or a test, and
filters on loggers do not see records propagated from children) formats each record's message once and replaces
every known secret in it, in its exception text and in its stack text. Known secrets are the configured keys plus
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


def _redacted_record(factory):
    def make(*args, **kwargs) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        if not _secrets:
            return record
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string is the caller's bug; do not hide the record
            return record
        record.msg, record.args = redact(message), None
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
