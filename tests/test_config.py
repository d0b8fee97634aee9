"""Settings: every knob is documented, keys stay secret, the suite is hermetic."""
from __future__ import annotations

import os

from agentic_rag.config import PROJECT_ROOT, Settings, reveal


def test_every_setting_is_in_env_example():
    text = (PROJECT_ROOT / ".env.example").read_text(encoding="utf-8")
    assert [f.upper() for f in Settings.model_fields if f.upper() not in text] == []


def test_keys_are_secret_in_repr_and_dumps():
    s = Settings(_env_file=None, deepseek_api_key="sk-abcdef123456", bocha_api_key="bc-000000111")
    assert "sk-abcdef123456" not in repr(s) and "sk-abcdef123456" not in s.model_dump_json()
    assert reveal(s.deepseek_api_key) == "sk-abcdef123456" and sorted(s.secrets()) == ["bc-000000111", "sk-abcdef123456"]
    assert reveal(Settings(_env_file=None, serpapi_api_key="  ").serpapi_api_key) is None


def test_the_suite_reads_no_developer_environment():
    assert os.environ.get("AGENTIC_RAG_ENV_FILE") == os.devnull
    assert not any(k.upper().endswith("_API_KEY") for k in os.environ)
    assert Settings().deepseek_api_key is None


def test_attempts_follow_the_loop_switch_and_the_grader():
    from agentic_rag.retry_policy import attempt_budget
    assert attempt_budget(Settings(_env_file=None)) == 1  # the embedded grader: its retries measurably did not help
    assert attempt_budget(Settings(_env_file=None, agentic_rag_model="deepseek/deepseek-chat")) == 3
    assert attempt_budget(Settings(_env_file=None, agentic_max_retries=2)) == 3  # set explicitly: kept
    assert attempt_budget(Settings(_env_file=None, agentic_rag_model="x/y", agentic_enabled=False)) == 1
