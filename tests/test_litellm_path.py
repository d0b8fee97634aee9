"""The real LiteLLM path of ADK (``LiteLlm`` → litellm → HTTP) against a local fake OpenAI server.

Why: production talks to DeepSeek through exactly this stack; these tests pin the parts we rely on (api_base
routing, JSON mode override, temperature and system instruction in the wire body, streaming) without network.
"""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported anywhere

import asyncio
import json

import pytest
from google.adk.models.lite_llm import LiteLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

try:
    from tests.fakes.openai_server import Delay, FakeError, FakeOpenAIServer
except ImportError:  # pytest run without the repo root on sys.path (rootdir-relative import of tests/)
    from fakes.openai_server import Delay, FakeError, FakeOpenAIServer

SYSTEM = "你是中国法律助手。只用 JSON 回答。"
QUESTION = "公司可以出售我的手机号吗？"
ANSWER = json.dumps({"answer": "不可以，需要单独同意。", "articles": ["第二十三条"]}, ensure_ascii=False)


def _request(temperature: float = 0.3) -> LlmRequest:
    return LlmRequest(
        model="deepseek/deepseek-chat",
        contents=[types.Content(role="user", parts=[types.Part(text=QUESTION)])],
        config=types.GenerateContentConfig(system_instruction=SYSTEM, temperature=temperature,
                                           max_output_tokens=200),
    )


def _collect(llm: LiteLlm, req: LlmRequest, stream: bool) -> list[LlmResponse]:
    async def run() -> list[LlmResponse]:
        return [r async for r in llm.generate_content_async(req, stream=stream)]
    return asyncio.run(run())


def _text(resp: LlmResponse) -> str:
    assert resp.content is not None and resp.content.parts
    return "".join(p.text or "" for p in resp.content.parts)


def _llm(base_url: str | None, **kw: object) -> LiteLlm:
    args: dict[str, object] = {"api_key": "x", "response_format": {"type": "json_object"}, **kw}
    if base_url is not None:
        args["api_base"] = base_url
    return LiteLlm(model="deepseek/deepseek-chat", **args)


def _assert_wire_body(body: dict, temperature: float) -> None:
    assert body["model"] == "deepseek-chat"  # the provider prefix is stripped on the wire
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == pytest.approx(temperature)
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": SYSTEM}
    assert messages[-1]["role"] == "user"
    assert QUESTION in json.dumps(messages[-1], ensure_ascii=False)


def test_non_streaming_text_and_request_body() -> None:
    with FakeOpenAIServer(lambda body: ANSWER) as srv:
        responses = _collect(_llm(srv.base_url), _request(0.3), stream=False)
    assert len(responses) == 1
    assert _text(responses[0]) == ANSWER
    assert json.loads(_text(responses[0]))["articles"] == ["第二十三条"]
    assert len(srv.requests) == 1
    body = srv.requests[0]
    assert not body.get("stream")
    _assert_wire_body(body, 0.3)
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 200
    assert srv.request_headers[0]["authorization"] == "Bearer x"
    usage = responses[0].usage_metadata
    assert usage is not None and usage.total_token_count and usage.total_token_count > 0


def test_streaming_partials_then_final() -> None:
    with FakeOpenAIServer(lambda body: ANSWER, stream_chunk_chars=3) as srv:
        responses = _collect(_llm(srv.base_url), _request(0.7), stream=True)
    partials = [r for r in responses if r.partial]
    finals = [r for r in responses if not r.partial]
    assert len(partials) >= 2
    assert "".join(_text(r) for r in partials) == ANSWER
    assert finals and _text(finals[-1]) == ANSWER
    body = srv.requests[0]
    assert body["stream"] is True
    _assert_wire_body(body, 0.7)


def test_response_schema_is_overridden_by_constructor_json_object() -> None:
    """An agent with output_schema makes ADK send json_schema, which DeepSeek rejects; the constructor wins."""
    req = _request(0.0)
    req.config.response_schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    with FakeOpenAIServer(lambda body: ANSWER) as srv:
        responses = _collect(_llm(srv.base_url), req, stream=False)
    assert _text(responses[0]) == ANSWER
    assert srv.requests[0]["response_format"] == {"type": "json_object"}


def test_deepseek_api_base_env_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an explicit api_base, litellm's deepseek provider reads DEEPSEEK_API_BASE (and appends /chat/completions)."""
    with FakeOpenAIServer(lambda body: "来自环境变量") as srv:
        monkeypatch.setenv("DEEPSEEK_API_BASE", srv.base_url)
        responses = _collect(_llm(None), _request(), stream=False)
    assert _text(responses[0]) == "来自环境变量"
    assert len(srv.requests) == 1


def test_http_error_surfaces_as_exception() -> None:
    import litellm

    with FakeOpenAIServer(lambda body: FakeError(400, "bad response_format", "invalid_request_error")) as srv:
        with pytest.raises(litellm.BadRequestError, match="bad response_format"):
            _collect(_llm(srv.base_url), _request(), stream=False)
    assert len(srv.requests) == 1  # a 400 is not retried


def test_slow_provider_times_out() -> None:
    import litellm

    with FakeOpenAIServer(lambda body: Delay(3.0, "too late")) as srv, pytest.raises(litellm.Timeout):
        _collect(_llm(srv.base_url, timeout=0.5, max_retries=0), _request(), stream=False)


def test_provider_variables_in_the_env_file_reach_litellm_outside_the_adk_cli(monkeypatch, tmp_path) -> None:
    """`python -m agentic_rag.demo` has no ADK CLI to load `.env`: a DEEPSEEK_API_BASE written there is still used,
    and a variable the environment already sets wins over the file."""
    from agentic_rag.config import Settings
    from agentic_rag.llm import models

    with FakeOpenAIServer(lambda body: "来自.env") as srv:
        env = tmp_path / ".env"
        env.write_text(f"DEEPSEEK_API_BASE={srv.base_url}\nOPENAI_API_BASE=http://from-file\n",
                       encoding="utf-8")
        monkeypatch.setattr(models, "ENV_FILE", str(env))
        for name, value in (("DEEPSEEK_API_BASE", None), ("OPENAI_API_BASE", "http://from-shell")):
            monkeypatch.setenv(name, "placeholder")  # recorded, so that the test leaves the environment as it was
            if value is None:
                monkeypatch.delenv(name)
            else:
                monkeypatch.setenv(name, value)
        model = models.make_model("answer", Settings(_env_file=None, deepseek_api_key="sk-test-000000"))
        responses = _collect(model, _request(), stream=False)
    assert _text(responses[0]) == "来自.env" and os.environ["OPENAI_API_BASE"] == "http://from-shell"
