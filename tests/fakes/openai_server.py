"""A fake of the OpenAI chat-completions API on 127.0.0.1, for tests that must not touch the network.

Why a real HTTP server instead of mocking LiteLLM: the point of these tests is the genuine request that ADK's
``LiteLlm`` and LiteLLM build (URL, body, streaming parser). Only the far end is fake.

Usage::

    with FakeOpenAIServer(lambda body: "你好") as srv:
        LiteLlm(model="deepseek/deepseek-chat", api_base=srv.base_url, api_key="x")
        ...
        srv.requests[-1]["messages"]

The responder gets the parsed request body and returns the assistant text, or a `FakeError` (an HTTP error
status), or a `Delay` (sleep, then answer with its ``then``), or a `Held` stream (pauses until the test resumes
it). An exception raised by the responder becomes HTTP 500. Nothing is printed: the request log goes to the
``tests.fakes.openai_server`` logger at DEBUG.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FakeError:
    """Answer with an HTTP error status and an OpenAI-style error body."""

    status: int = 500
    message: str = "fake server error"
    type: str = "server_error"
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"Retry-After": "0"} for 429


@dataclass(frozen=True)
class Delay:
    """Sleep ``seconds`` before answering with ``then`` (text or a FakeError): simulates a slow provider."""

    seconds: float
    then: str | FakeError = ""


@dataclass(frozen=True)
class Held:
    """Streamed: ``first``, then nothing until ``resume`` is set (at most ``timeout`` s), then ``rest`` — lets a test
    look at what a client shows while the provider is still generating. Not streamed: the whole text at once."""

    first: str
    resume: threading.Event
    rest: str
    timeout: float = 60.0

    def __str__(self) -> str:
        return self.first + self.rest


@dataclass(frozen=True)
class Scored:
    """Text with OpenAI-style logprobs, one (token, logprob, {alternative: logprob}) per token; the logprobs are
    sent only when the request asked for them."""

    tokens: tuple[tuple[str, float, dict[str, float]], ...]

    def __str__(self) -> str:
        return "".join(t for t, _, _ in self.tokens)

    def logprobs(self) -> dict[str, Any]:
        return {"content": [{"token": t, "logprob": lp, "bytes": list(t.encode()),
                             "top_logprobs": [{"token": a, "logprob": x, "bytes": list(a.encode())}
                                              for a, x in alts.items()]} for t, lp, alts in self.tokens]}


Reply = Union[str, FakeError, Delay, Held, Scored]
Responder = Callable[[dict[str, Any]], Reply]


def _default_responder(body: dict[str, Any]) -> str:
    return "ok"


def _estimate_tokens(text: str) -> int:
    """A rough, deterministic token count so that `usage` looks plausible."""
    return max(1, len(text) // 2) if text else 0


class FakeOpenAIServer:
    """OpenAI-compatible ``POST /v1/chat/completions`` (JSON and SSE) served from a background thread.

    ``base_url`` is ``http://127.0.0.1:PORT/v1``; ``requests`` holds every request body in arrival order,
    ``request_headers`` the matching headers (lower-cased names).
    """

    def __init__(self, responder: Responder | None = None, *, model: str = "fake-model",
                 stream_chunk_chars: int = 2) -> None:
        self.responder: Responder = responder or _default_responder
        self.model = model
        self.stream_chunk_chars = max(1, stream_chunk_chars)
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)  # port 0: the OS picks a free port
        self._httpd.daemon_threads = True  # a Delay in flight must not block shutdown
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        log.debug("fake OpenAI server on %s", self.base_url)
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ helpers for tests
    @property
    def last_request(self) -> dict[str, Any]:
        with self._lock:
            if not self.requests:
                raise AssertionError("the fake server received no request")
            return self.requests[-1]

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer  # set on the per-server subclass
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    # ---------------------------------------------------------------- routes
    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model",
                                                              "owned_by": "fake"}]})
        else:
            self._send_error(FakeError(404, f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(FakeError(404, f"no route POST {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as e:
            self._send_error(FakeError(400, f"invalid JSON body: {e}", "invalid_request_error"))
            return
        self.fake._record(body, {k.lower(): v for k, v in self.headers.items()})
        try:
            reply: Reply = self.fake.responder(body)
            while isinstance(reply, Delay):
                time.sleep(reply.seconds)
                reply = reply.then
        except Exception as e:  # the responder simulates a crashing provider
            log.debug("responder raised %r", e)
            reply = FakeError(500, f"{type(e).__name__}: {e}")
        if isinstance(reply, FakeError):
            self._send_error(reply)
            return
        text = str(reply)
        try:
            if body.get("stream"):
                self._send_stream(body, text, reply if isinstance(reply, Held) else None)
            else:
                logprobs = reply.logprobs() if isinstance(reply, Scored) and body.get("logprobs") else None
                self._send_json(200, self._completion(body, text, logprobs))
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test): not an error here
            log.debug("client disconnected")

    # ---------------------------------------------------------------- bodies
    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
        p, c = _estimate_tokens(prompt), _estimate_tokens(text)
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    def _completion(self, body: dict[str, Any], text: str, logprobs: dict | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.fake.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "logprobs": logprobs, "finish_reason": "stop"}],
            "usage": self._usage(body, text),
        }

    def _pieces(self, text: str) -> list[str]:
        n = self.fake.stream_chunk_chars
        return [text[i:i + n] for i in range(0, len(text), n)]

    def _chunks(self, body: dict[str, Any], text: str, held: Held | None = None) -> Iterator[dict[str, Any]]:
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model") or self.fake.model}
        pieces = (self._pieces(held.first) + [held] + self._pieces(held.rest) if held else self._pieces(text)) or [""]
        for i, piece in enumerate(pieces):
            if isinstance(piece, Held):
                piece.resume.wait(piece.timeout)
                continue
            delta: dict[str, Any] = {"content": piece}
            if i == 0:
                delta["role"] = "assistant"
            yield {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
        yield {**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]}
        if (body.get("stream_options") or {}).get("include_usage"):
            yield {**base, "choices": [], "usage": self._usage(body, text)}

    def _send_stream(self, body: dict[str, Any], text: str, held: Held | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # no Content-Length: the body ends when the socket closes
        self.end_headers()
        for chunk in self._chunks(body, text, held):
            self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, err: FakeError) -> None:
        self._send_json(err.status, {"error": {"message": err.message, "type": err.type, "param": None,
                                               "code": str(err.status)}}, err.headers)


__all__ = ["Delay", "FakeError", "FakeOpenAIServer", "Reply", "Responder"]
