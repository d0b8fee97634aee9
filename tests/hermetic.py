"""The one way the tests start a subprocess: with an environment that cannot reach the developer's `.env` or keys.

A child process reads its configuration twice over: `agentic_rag.config` reads the file `AGENTIC_RAG_ENV_FILE`
names (default: the project's `.env`), and `adk web` / `api_server` / `run` load the `.env` found above the agent's
folder into the environment unless `ADK_DISABLE_LOAD_DOTENV` is set. So every child gets both switches, and none of
the parent's provider keys, API bases or settings-named variables: what a child sees is what its test set
(`env_extra`), never what happens to be in a shell or a `.env`. tests/test_hermetic.py checks that a planted `.env`
is ignored and that no test starts a process any other way.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from functools import lru_cache

from pydantic import AliasChoices

from agentic_rag.config import Settings

# Set in every child whatever the parent has (a test may still override them through env_extra).
FIXED: dict[str, str] = {
    "AGENTIC_RAG_ENV_FILE": os.devnull,  # agentic_rag.config reads no .env
    "ADK_DISABLE_LOAD_DOTENV": "1",  # adk reads no .env either
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # offline, as the Makefile runs everything
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "NO_PROXY": "127.0.0.1,localhost",  # the fakes are local; a proxy from the shell must not intercept them
    "no_proxy": "127.0.0.1,localhost",
}
# Provider keys and endpoints by their conventional names (LiteLLM, OpenAI, the web providers …).
DROPPED_SUFFIXES = ("_API_KEY", "_API_BASE", "_BASE_URL", "_API_TOKEN")
DROPPED_PREFIXES = ("AGENTIC",)  # AGENTIC_RAG_MODEL, AGENTIC_ENABLED, AGENTIC_MAX_RETRIES, AGENTIC_RAG_ENV_FILE …


@lru_cache(maxsize=1)
def setting_names() -> frozenset[str]:
    """Every environment name `Settings` reads (field names and their aliases), upper-case."""
    names = set()
    for field_name, info in Settings.model_fields.items():
        names.add(field_name.upper())
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if isinstance(alias, str) else []
        names.update(c.upper() for c in choices if isinstance(c, str))
    return frozenset(names)


def is_dropped(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(DROPPED_PREFIXES) or upper.endswith(DROPPED_SUFFIXES) or upper in setting_names()


def child_env(env_extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment without keys, endpoints and settings, plus FIXED, plus what the test sets."""
    env = {k: v for k, v in os.environ.items() if not is_dropped(k)}
    env.update(FIXED)
    env.update({k: str(v) for k, v in (env_extra or {}).items()})
    return env


def run(args: Sequence[str], *, env_extra: Mapping[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run` with `child_env(env_extra)` (passing `env=` is an error: there is no other environment)."""
    return subprocess.run(args, env=child_env(env_extra), **kwargs)


def popen(args: Sequence[str], *, env_extra: Mapping[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """`subprocess.Popen` with `child_env(env_extra)`."""
    return subprocess.Popen(args, env=child_env(env_extra), **kwargs)
