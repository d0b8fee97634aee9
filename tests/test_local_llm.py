"""The embedded default LLM (`LocalLlamaLlm`): the real 0.5B GGUF through ADK's model interface.

Why the real model and not a mock: the risky parts are llama.cpp's chat template, its JSON grammar, streaming and
thread-safety, which a mock would not exercise. The 0.5B model keeps this file fast; outputs stay short.
"""
from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types

from agentic_rag.config import PROJECT_ROOT, Settings, get_settings
from agentic_rag.llm.local import (
    LocalLlamaLlm,
    fit_to_context,
    local_model_path,
    register_local_llm,
    request_to_messages,
)
from agentic_rag.weights import ModelNotAvailableError
from tests import hermetic
from tests.conftest import MISSING_MODELS

SMALL_GGUF = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL = f"local/{SMALL_GGUF}"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _request(user: str, system: str | None = None, *, max_tokens: int = 32, json_mode: bool = False,
             history: list[types.Content] | None = None) -> LlmRequest:
    config = types.GenerateContentConfig(system_instruction=system, temperature=0.0, max_output_tokens=max_tokens,
                                         response_mime_type="application/json" if json_mode else None)
    contents = [*(history or []), types.Content(role="user", parts=[types.Part(text=user)])]
    return LlmRequest(model=MODEL, contents=contents, config=config)


async def _collect(llm: LocalLlamaLlm, req: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [r async for r in llm.generate_content_async(req, stream=stream)]


def _text(resp: LlmResponse) -> str:
    assert resp.content is not None and resp.content.parts is not None
    return "".join(p.text or "" for p in resp.content.parts)


@pytest.fixture(scope="module")
def llm() -> LocalLlamaLlm:
    try:
        local_model_path(SMALL_GGUF, get_settings())
    except ModelNotAvailableError:
        pytest.skip(MISSING_MODELS)
    # One thread: llama.cpp's worker threads spin-wait, so with n_threads == cores and any other CPU-bound job
    # on the machine a 32-token answer goes from ~1 s to ~30 s. One thread keeps this file fast everywhere.
    return LocalLlamaLlm(model=MODEL, settings=Settings(local_llm_threads=1))


# --------------------------------------------------------------------------- with the real model
def test_chinese_prompt_returns_text(llm: LocalLlamaLlm) -> None:
    responses = run(_collect(llm, _request("用一句话说明什么是个人信息。", "你是中国法律助手，用中文简短回答。")))
    assert len(responses) == 1
    final = responses[0]
    assert final.partial is False and final.turn_complete is True
    assert _text(final).strip()
    usage = final.usage_metadata
    assert usage is not None and usage.prompt_token_count and usage.candidates_token_count


def test_json_mode_returns_a_json_object(llm: LocalLlamaLlm) -> None:
    req = _request('个人信息处理者可以出售手机号吗？只输出 JSON，例如 {"answer": "否"}',
                   "你只输出一个 JSON 对象，键为 answer。", max_tokens=48, json_mode=True)
    text = _text(run(_collect(llm, req))[0])
    assert isinstance(json.loads(text), dict), text


def test_response_schema_also_turns_on_json_mode(llm: LocalLlamaLlm) -> None:
    req = _request('用 JSON 回答：1+1 等于几？例如 {"answer": 0}', max_tokens=24)
    req.config.response_schema = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    assert isinstance(json.loads(_text(run(_collect(llm, req))[0])), dict)


def test_stream_yields_partials_then_the_same_final_text(llm: LocalLlamaLlm) -> None:
    responses = run(_collect(llm, _request("请列举三种个人信息。", max_tokens=24), stream=True))
    partials, final = responses[:-1], responses[-1]
    assert len(partials) >= 2 and all(r.partial is True for r in partials)
    assert final.partial is False and final.turn_complete is True
    assert "".join(_text(r) for r in partials) == _text(final)
    assert _text(final).strip()


def test_history_with_model_turns_is_accepted(llm: LocalLlamaLlm) -> None:
    history = [types.Content(role="user", parts=[types.Part(text="你好")]),
               types.Content(role="model", parts=[types.Part(text="你好！请问有什么法律问题？")])]
    responses = run(_collect(llm, _request("什么是敏感个人信息？", history=history, max_tokens=16)))
    assert _text(responses[0]).strip()


def test_concurrent_calls_both_complete(llm: LocalLlamaLlm) -> None:
    async def both() -> list[list[LlmResponse]]:
        return await asyncio.gather(_collect(llm, _request("你好", max_tokens=12)),
                                    _collect(llm, _request("谢谢", max_tokens=12), stream=True))

    first, second = run(both())
    assert _text(first[-1]).strip() and _text(second[-1]).strip()
    assert first[-1].turn_complete and second[-1].turn_complete


def test_timeout_stops_generation_and_frees_the_model(llm: LocalLlamaLlm,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    impatient = LocalLlamaLlm(model=MODEL, settings=Settings(llm_timeout_s=0.05, local_llm_threads=1))
    with caplog.at_level("INFO", logger="agentic_rag.llm.local"):
        with pytest.raises(TimeoutError, match="LLM_TIMEOUT_S"):
            run(_collect(impatient, _request("请详细解释个人信息保护法。", max_tokens=256)))
        # the next call gets the lock: the abandoned generation stopped at its next token instead of writing 256
        assert _text(run(_collect(llm, _request("你好", max_tokens=8)))[0]).strip()
    assert any("stopped early" in r.getMessage() for r in caplog.records)


def test_a_scoring_call_given_up_on_frees_the_model_at_its_next_tail(llm: LocalLlamaLlm,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    from agentic_rag.stages.base import SYSTEM

    tails = [f"【第{i}条】能否作为依据？" for i in range(1, 81)]

    async def impatient():
        await asyncio.wait_for(llm.score_tails(SYSTEM, "问题：公司能卖我的手机号吗？\n", tails), 0.2)

    with caplog.at_level("INFO", logger="agentic_rag.llm.local"):
        with pytest.raises(TimeoutError):
            run(impatient())
        # the next call gets the lock: the abandoned scoring stopped at its next tail instead of scoring all 80
        assert _text(run(_collect(llm, _request("你好", max_tokens=8)))[0]).strip()
    assert any("scoring stopped early" in r.getMessage() for r in caplog.records)


def test_loading_the_model_in_a_thread_loses_nothing_another_thread_prints() -> None:
    """The app loads the model in a warm-up thread while `adk run` may already be printing the first answer (an
    article lookup needs no model). llama-cpp-python's verbose=False pointed the process's stdout at /dev/null for
    the whole load, so that answer never reached the terminal; its log lines now go to the logger instead."""
    try:
        local_model_path(SMALL_GGUF, get_settings())
    except ModelNotAvailableError:
        pytest.skip(MISSING_MODELS)
    child = textwrap.dedent(f"""
        import logging, sys, threading, time
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s")
        from agentic_rag.config import Settings
        from agentic_rag.llm.local import load_model, local_model_path
        settings = Settings(local_llm_threads=1)
        loading = threading.Thread(target=load_model, args=(local_model_path({SMALL_GGUF!r}, settings), settings))
        printed = 0
        loading.start()
        while loading.is_alive():
            print("tick", printed, flush=True)
            printed += 1
            time.sleep(0.001)
        print("printed", printed, flush=True)
        """)
    done = hermetic.run([sys.executable, "-c", child], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    printed = int(lines[-1].split()[1])
    assert printed > 3  # the main thread printed while the model loaded
    assert sum(line.startswith("tick ") for line in lines) == printed
    assert "agentic_rag.llm.local llama.cpp: " in done.stderr  # llama.cpp's lines, through the logger
    assert not any(line.startswith(("load:", "llama_", "print_info:")) for line in done.stderr.splitlines())


# --------------------------------------------------------------------------- no model needed
def test_missing_model_says_how_to_download(tmp_path) -> None:
    llm = LocalLlamaLlm(model="local/not-there.gguf", settings=Settings(models_dir=tmp_path))
    with pytest.raises(ModelNotAvailableError, match=r"download_models\.py --only not-there\.gguf"):
        run(_collect(llm, _request("你好")))
    with pytest.raises(ModelNotAvailableError, match="download_models.py"):
        local_model_path(str(tmp_path / "absent.gguf"), Settings(models_dir=tmp_path))


def test_registry_resolves_local_models() -> None:
    register_local_llm()
    register_local_llm()  # idempotent
    assert LLMRegistry.resolve(MODEL) is LocalLlamaLlm
    llm = LLMRegistry.new_llm("local//abs/path/model.gguf")
    assert isinstance(llm, LocalLlamaLlm) and llm.model == "local//abs/path/model.gguf"


def test_request_to_messages_roles_and_text_only() -> None:
    req = LlmRequest(
        contents=[
            types.Content(role="user", parts=[types.Part(text="问题一")]),
            types.Content(role="model", parts=[types.Part(text="想一想", thought=True), types.Part(text="回答一")]),
            types.Content(role="user", parts=[types.Part(text="补充"),
                                              types.Part(function_call=types.FunctionCall(name="f", args={}))]),
            types.Content(role="user", parts=[types.Part(text="问题二")]),
        ],
        config=types.GenerateContentConfig(system_instruction="系统指令"),
    )
    assert request_to_messages(req) == [
        {"role": "system", "content": "系统指令"},
        {"role": "user", "content": "问题一"},
        {"role": "assistant", "content": "回答一"},
        {"role": "user", "content": "补充\n\n问题二"},
    ]


class _CharTokenizer:
    """One token per character: enough to test the truncation arithmetic without a model."""

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return [ord(c) for c in data.decode("utf-8")]

    def detokenize(self, tokens: list[int]) -> bytes:
        return "".join(chr(t) for t in tokens).encode("utf-8")


def test_fit_to_context_keeps_system_and_latest_user_turn(caplog: pytest.LogCaptureFixture) -> None:
    tok = _CharTokenizer()
    system = "指令开头" + "法" * 3000 + "指令结尾"
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": "旧问题" * 200},
                {"role": "assistant", "content": "旧回答" * 200},
                {"role": "user", "content": "最新的问题是什么？"}]
    with caplog.at_level("WARNING", logger="agentic_rag.llm.local"):
        fitted, max_tokens, prompt_tokens = fit_to_context(tok, messages, max_tokens=512, n_ctx=2048)
    assert [m["role"] for m in fitted] == ["system", "user"]
    assert fitted[-1]["content"] == "最新的问题是什么？"
    assert fitted[0]["content"].startswith("指令开头") and fitted[0]["content"].endswith("指令结尾")
    assert "已省略" in fitted[0]["content"]
    assert prompt_tokens + max_tokens <= 2048 and max_tokens >= 16
    assert any("exceeds the context" in r.getMessage() for r in caplog.records)
    assert messages[0]["content"] == system  # the caller's list is not modified


def test_fit_to_context_leaves_small_prompts_alone() -> None:
    messages = [{"role": "user", "content": "你好"}]
    assert fit_to_context(_CharTokenizer(), messages, max_tokens=100, n_ctx=2048)[:2] == (messages, 100)


def test_generation_params_map_the_adk_config_and_penalise_repetition_by_default() -> None:
    from agentic_rag.llm.local import DEFAULT_REPEAT_PENALTY, _generation_params

    assert _generation_params(None)["repeat_penalty"] == DEFAULT_REPEAT_PENALTY > 1.0
    config = types.GenerateContentConfig(temperature=0.3, max_output_tokens=64, frequency_penalty=0.2,
                                         stop_sequences=["##"], response_mime_type="application/json")
    params = _generation_params(config)
    assert params["temperature"] == 0.3 and params["max_tokens"] == 64 and params["stop"] == ["##"]
    assert params["frequency_penalty"] == 0.2 and "presence_penalty" not in params
    assert params["response_format"] == {"type": "json_object"}
