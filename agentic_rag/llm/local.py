"""The embedded default LLM: a GGUF model run in this process by llama-cpp-python, exposed to ADK as a `BaseLlm`.

Why in process and not a ``llama_cpp.server`` behind LiteLLM: the demo and the tests must work on a machine with no
API key and no extra server to start or to leave behind. Model strings are ``local/<gguf file under models_dir>``
or ``local/<absolute path>``; `register_local_llm()` makes ADK resolve them (``LlmAgent(model="local/...")``).

llama.cpp contexts are not thread-safe and generation is CPU-bound, so every call runs in a worker thread (never
on the event loop) under one lock per loaded model; a model is loaded once per process per path.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types
from pydantic import ConfigDict, Field

try:  # the capability API exists in the pinned ADK; keep the module importable if it moves
    from google.adk.models._capabilities import LlmCapabilities
except ImportError:  # pragma: no cover
    LlmCapabilities = None  # type: ignore[assignment,misc]

from ..config import Settings, get_settings
from ..weights import ModelNotAvailableError
from .models import LOCAL_PREFIX
from .scoring import TailScores, common_prefix, yes_no_diffs

if TYPE_CHECKING:
    from llama_cpp import Llama

log = logging.getLogger(__name__)

DEFAULT_TEMPERATURE = 0.1
DEFAULT_MAX_OUTPUT_TOKENS = 1024
# Qwen2.5's own generation_config value. llama.cpp's default (1.0, no penalty) lets the small quantised models loop
# on long Chinese lists ("26. 处理敏感个人信息应当取得个人的单独同意…" until max_tokens), seen with the 0.5B model.
DEFAULT_REPEAT_PENALTY = 1.05
N_BATCH = 256
# Chat-template tokens around each message (Qwen: "<|im_start|>role\n" … "<|im_end|>\n") plus the generation
# prompt; over-estimated on purpose so that the real prompt always fits.
_PER_MESSAGE_OVERHEAD = 8
_PROMPT_MARGIN = 32
_ELISION = "\n……（中间内容超出模型上下文长度，已省略）……\n"


# --------------------------------------------------------------------------- model files and the process cache
def local_model_path(name: str, settings: Settings | None = None) -> Path:
    """Resolve ``name`` (a GGUF file name under ``models_dir`` or a path) to an existing file.

    Raises ModelNotAvailableError with the command that fetches it, so a fresh checkout fails with a fix, not a
    llama.cpp stack trace.
    """
    settings = settings or get_settings()
    name = name.removeprefix(LOCAL_PREFIX)
    given = Path(name).expanduser()
    path = given if given.is_absolute() else Path(settings.models_dir) / given
    if not path.is_file():
        raise ModelNotAvailableError(
            f"local LLM {str(path)!r} not found. Run: python download_models.py --only {given.name} "
            "(or set LOCAL_LLM / the agent model to an existing GGUF file).")
    return path


@dataclass
class _LoadedModel:
    """A loaded llama.cpp model and the lock that serialises every use of its (single) context."""

    llama: Llama
    lock: threading.Lock
    path: Path
    n_ctx: int


_MODELS: dict[str, _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()  # also serialises loading: two concurrent first calls load the file once


class _LeaveStreamsAlone:
    """Stands in for llama-cpp-python's `suppress_stdout_stderr`, which with ``verbose=False`` points the
    process's stdout and stderr (file descriptors 1 and 2, and sys.stdout/sys.stderr) at /dev/null while a model
    loads. The app loads the model in a warm-up thread, so whatever any other thread printed meanwhile was lost:
    `adk run` never showed the first answer when it came without the model (an article lookup, a refusal), and a
    process that ended during the load kept its stdout closed (upstream abetlen/llama-cpp-python#1874). llama.cpp's
    own log lines are routed to the logger instead (`_route_llama_logs`)."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _LeaveStreamsAlone:
        return self

    def __exit__(self, *_: object) -> None:
        return None


_LLAMA_LOG_CALLBACK: Any = None  # kept referenced: llama.cpp calls it for as long as the process lives


def _route_llama_logs() -> None:
    """llama.cpp's log lines go to this module's logger at DEBUG, never to the terminal, and loading a model no
    longer redirects the process's streams (`_LeaveStreamsAlone`). Idempotent."""
    global _LLAMA_LOG_CALLBACK
    if _LLAMA_LOG_CALLBACK is not None:
        return
    import ctypes

    import llama_cpp
    import llama_cpp._internals
    import llama_cpp.llama

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        log.debug("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

    _LLAMA_LOG_CALLBACK = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    for module in (llama_cpp.llama, llama_cpp._internals):
        module.suppress_stdout_stderr = _LeaveStreamsAlone


def load_model(path: Path, settings: Settings) -> _LoadedModel:
    """Load ``path`` once per process (blocking; call from a worker thread)."""
    key = str(path.resolve())
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is not None:
            return loaded
        try:
            from llama_cpp import Llama
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ModelNotAvailableError(
                "llama-cpp-python is not installed; it runs the local LLM. Run: pip install -r requirements.txt "
                "(or `make setup`, which builds it for this CPU).") from e
        _route_llama_logs()
        started = time.perf_counter()
        llama = Llama(model_path=key, n_ctx=settings.local_llm_ctx, n_threads=settings.local_llm_threads,
                      n_batch=N_BATCH, verbose=False)
        loaded = _LoadedModel(llama=llama, lock=threading.Lock(), path=path, n_ctx=int(llama.n_ctx()))
        _MODELS[key] = loaded
        log.info("loaded local LLM %s (n_ctx=%d, threads=%d) in %.1f s", path.name, loaded.n_ctx,
                 settings.local_llm_threads, time.perf_counter() - started)
        return loaded


def forget_prompts() -> None:
    """Drop what every loaded model's context holds, so the next call reuses no prefix (benchmarks comparing two
    configurations on the same question use it; the agent never does)."""
    for loaded in list(_MODELS.values()):
        with loaded.lock:
            loaded.llama.reset()


# --------------------------------------------------------------------------- request → chat messages
def _content_text(content: Any) -> str:
    """Text of a system instruction or a Content: str, Part, Content or a list of those; non-text parts dropped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, types.Content):
        return _content_text(content.parts or [])
    if isinstance(content, types.Part):
        if content.thought or not content.text:
            if content.function_call or content.function_response or content.inline_data:
                log.debug("local LLM: dropping a non-text part (text parts only)")
            return ""
        return content.text
    if isinstance(content, (list, tuple)):
        return "\n".join(t for t in (_content_text(c) for c in content) if t)
    return str(content)


def request_to_messages(llm_request: LlmRequest) -> list[dict[str, str]]:
    """OpenAI-style chat messages for llama.cpp's chat template: system instruction, then user/assistant turns.

    Consecutive turns of the same role are merged, since chat templates expect alternation.
    """
    messages: list[dict[str, str]] = []
    config = llm_request.config
    system = _content_text(config.system_instruction if config else None).strip()
    if system:
        messages.append({"role": "system", "content": system})
    for content in llm_request.contents or []:
        text = _content_text(content)
        if not text.strip():
            continue
        role = "assistant" if content.role == "model" else "user"
        if messages and messages[-1]["role"] == role and role != "system":
            messages[-1]["content"] += "\n\n" + text
        else:
            messages.append({"role": role, "content": text})
    if not any(m["role"] == "user" for m in messages):
        messages.append({"role": "user", "content": "Handle the requests as specified in the System Instruction."})
    return messages


def _wants_json(config: types.GenerateContentConfig | None) -> bool:
    if config is None:
        return False
    return (config.response_mime_type == "application/json" or config.response_schema is not None
            or config.response_json_schema is not None)


def _generation_params(config: types.GenerateContentConfig | None) -> dict[str, Any]:
    """llama.cpp sampling arguments from the ADK config (low temperature by default: answers must be grounded)."""
    params: dict[str, Any] = {"temperature": DEFAULT_TEMPERATURE, "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS,
                              "repeat_penalty": DEFAULT_REPEAT_PENALTY}
    if config is None:
        return params
    if config.temperature is not None:
        params["temperature"] = float(config.temperature)
    if config.max_output_tokens:
        params["max_tokens"] = int(config.max_output_tokens)
    if config.top_p is not None:
        params["top_p"] = float(config.top_p)
    if config.top_k is not None:
        params["top_k"] = int(config.top_k)
    if config.seed is not None:
        params["seed"] = int(config.seed)
    if config.frequency_penalty is not None:
        params["frequency_penalty"] = float(config.frequency_penalty)
    if config.presence_penalty is not None:
        params["presence_penalty"] = float(config.presence_penalty)
    if config.stop_sequences:
        params["stop"] = list(config.stop_sequences)
    if _wants_json(config):
        params["response_format"] = {"type": "json_object"}
    return params


# --------------------------------------------------------------------------- fitting the prompt into n_ctx
def _count(llama: Llama, text: str) -> int:
    return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def _prompt_tokens(llama: Llama, messages: list[dict[str, str]]) -> int:
    return _PROMPT_MARGIN + sum(_count(llama, m["content"]) + _PER_MESSAGE_OVERHEAD for m in messages)


def _elide_middle(llama: Llama, text: str, keep_tokens: int) -> str:
    """Keep the head (instructions, first passages) and the tail (usually the question) of ``text``."""
    tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    keep_tokens = max(0, keep_tokens - _count(llama, _ELISION))
    if len(tokens) <= keep_tokens:
        return text
    head_n = keep_tokens * 2 // 3
    tail_n = keep_tokens - head_n
    head = llama.detokenize(tokens[:head_n]).decode("utf-8", errors="ignore")
    tail = llama.detokenize(tokens[len(tokens) - tail_n:]).decode("utf-8", errors="ignore") if tail_n else ""
    return head + _ELISION + tail


def fit_to_context(llama: Llama, messages: list[dict[str, str]], max_tokens: int,
                   n_ctx: int) -> tuple[list[dict[str, str]], int, int]:
    """Shrink the prompt to fit ``n_ctx`` instead of letting llama.cpp fail with "exceed context window".

    Order: drop the oldest history turns; then cut the middle of the longest kept message (system instruction
    or latest user turn). The answer keeps at least a quarter of the context. Returns
    (messages, max_tokens, estimated prompt tokens).
    """
    reserve = max(16, min(max_tokens, n_ctx // 4))
    budget = n_ctx - reserve
    total = _prompt_tokens(llama, messages)
    if total + max_tokens <= n_ctx:
        return messages, max_tokens, total
    if total <= budget:  # the prompt fits; only the answer length must shrink
        log.debug("local LLM: max_tokens %d -> %d to fit n_ctx=%d", max_tokens, n_ctx - total, n_ctx)
        return messages, n_ctx - total, total

    original = total
    messages = [dict(m) for m in messages]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    # 1. drop history between the system instruction and the latest user turn, oldest first
    while total > budget:
        droppable = [i for i, m in enumerate(messages) if m["role"] != "system" and i < last_user]
        if not droppable:
            break
        messages.pop(droppable[0])
        last_user -= 1
        total = _prompt_tokens(llama, messages)
    # 2. cut the middle of the longest remaining message until it fits
    while total > budget:
        longest = max(range(len(messages)), key=lambda i: _count(llama, messages[i]["content"]))
        size = _count(llama, messages[longest]["content"])
        target = size - (total - budget)
        if target < 16:  # nothing sensible left to cut
            break
        messages[longest]["content"] = _elide_middle(llama, messages[longest]["content"], target)
        total = _prompt_tokens(llama, messages)
    log.warning("local LLM prompt of ~%d tokens exceeds the context (n_ctx=%d, answer budget %d): truncated to "
                "~%d tokens (kept the system instruction and the latest user turn). Raise LOCAL_LLM_CTX or "
                "send less context.", original, n_ctx, reserve, total)
    return messages, max(16, min(max_tokens, n_ctx - total)), total


# --------------------------------------------------------------------------- the ADK model
@dataclass
class _Done:
    """End of a generation, with approximate usage (streamed llama.cpp chunks carry none)."""

    finish_reason: str | None
    prompt_tokens: int  # estimate from the chat-template overhead, see fit_to_context
    completion_tokens: int  # the answer re-tokenised
    cached_tokens: int = 0  # prompt tokens llama.cpp reused from the previous call (prefix match)


def _generate(loaded: _LoadedModel, messages: list[dict[str, str]], params: dict[str, Any], put,
              stop: threading.Event) -> _Done:
    """One streamed generation under the model's lock: deltas go to `put`; returns the usage."""
    llama = loaded.llama
    before = list(llama.input_ids[: llama.n_tokens])
    msgs, max_tokens, prompt_tokens = fit_to_context(llama, messages, params["max_tokens"], loaded.n_ctx)
    finish: str | None = None
    text: list[str] = []
    chunks = llama.create_chat_completion(messages=msgs, stream=True, **{**params, "max_tokens": max_tokens})
    try:
        for chunk in chunks:
            if stop.is_set():
                log.info("local LLM generation stopped early (caller went away or timed out)")
                break
            choice = chunk["choices"][0]
            delta = (choice.get("delta") or {}).get("content")
            if delta:
                text.append(delta)
                put(delta)
            finish = choice.get("finish_reason") or finish
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    completion_tokens = _count(llama, "".join(text))
    after = llama.input_ids[: llama.n_tokens]
    cached = min(common_prefix(before, after), max(0, len(after) - completion_tokens))
    return _Done(finish, prompt_tokens, completion_tokens, cached)


class LocalLlamaLlm(BaseLlm):
    """ADK model for ``local/<gguf>``: in-process llama.cpp, text in and text out (no function calling).

    Small local models do not call tools reliably, so retrieval and routing stay in code; this model rewrites,
    grades and answers, optionally in JSON mode (grammar-constrained by llama.cpp).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str = f"{LOCAL_PREFIX}{Settings.model_fields['local_llm'].default}"
    settings: Settings | None = Field(default=None, exclude=True, repr=False,
                                      description="defaults to get_settings() at call time")

    @classmethod
    def supported_models(cls) -> list[str]:
        return [rf"{LOCAL_PREFIX}.*"]

    @property
    def capabilities(self) -> Any:
        """Declared explicitly: no output schema together with tools (and no ADK name-based fallback warning)."""
        if LlmCapabilities is None:  # pragma: no cover
            return super().capabilities
        return LlmCapabilities(output_schema_and_tools=False)

    def _settings(self) -> Settings:
        return self.settings or get_settings()

    @property
    def model_path(self) -> Path:
        """The GGUF file this instance runs (raises ModelNotAvailableError when it is missing)."""
        return local_model_path(self.model, self._settings())

    async def score_tails(self, system: str, prefix: str, tails: list[str]) -> TailScores:
        """logit(是) − logit(否) after each tail appended to one shared prefix (see `llm.scoring`)."""
        settings = self._settings()
        loaded = await asyncio.to_thread(load_model, local_model_path(self.model, settings), settings)

        stop = threading.Event()

        def work() -> TailScores:
            with loaded.lock:
                scored = yes_no_diffs(loaded.llama, system, prefix, tails, stop)
                if len(scored.diffs) < len(tails):
                    log.info("scoring stopped early (%d of %d tails): its caller gave up", len(scored.diffs),
                             len(tails))
                return scored

        try:
            return await asyncio.to_thread(work)
        finally:  # a caller that gave up (timeout, cancellation) frees the model at the next tail, as generation does
            stop.set()

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        """One model turn: partial chunks then a final response when ``stream``, else a single response."""
        settings = self._settings()
        path = local_model_path(self.model, settings)
        loaded = await asyncio.to_thread(load_model, path, settings)
        messages = request_to_messages(llm_request)
        params = _generation_params(llm_request.config)

        parts: list[str] = []
        done: _Done | None = None
        # aclosing: a caller that stops iterating early stops the worker now, not when the generator is collected
        async with aclosing(self._run_worker(loaded, messages, params, settings.llm_timeout_s)) as items:
            async for item in items:
                if isinstance(item, _Done):
                    done = item
                    continue
                parts.append(item)
                if stream:
                    yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=item)]),
                                      partial=True, model_version=self.model)
        if done is None:  # pragma: no cover - the worker always ends with _Done or an exception
            raise RuntimeError("local LLM worker ended without a result")
        text = "".join(parts)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            partial=False,
            turn_complete=True,
            finish_reason=types.FinishReason.MAX_TOKENS if done.finish_reason == "length"
            else types.FinishReason.STOP,
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=done.prompt_tokens, candidates_token_count=done.completion_tokens,
                cached_content_token_count=done.cached_tokens,
                total_token_count=done.prompt_tokens + done.completion_tokens),
            model_version=self.model,
        )

    @staticmethod
    async def _run_worker(loaded: _LoadedModel, messages: list[dict[str, str]], params: dict[str, Any],
                          timeout_s: float | None) -> AsyncGenerator[str | _Done, None]:
        """Stream text deltas from a worker thread through an asyncio.Queue; end with a `_Done`.

        A stop event lets a cancelled or timed-out caller free the model lock at the next token instead of
        holding it until the whole answer is generated.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | _Done | BaseException] = asyncio.Queue()
        stop = threading.Event()

        def put(item: str | _Done | BaseException) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone: nobody is listening any more
                stop.set()

        def work() -> None:
            try:
                with loaded.lock:
                    if not stop.is_set():
                        put(_generate(loaded, messages, params, put, stop))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller's task
                put(e)

        thread = threading.Thread(target=work, name="local-llm", daemon=True)
        thread.start()
        deadline = loop.time() + timeout_s if timeout_s else None
        try:
            while True:
                remaining = None if deadline is None else max(0.0, deadline - loop.time())
                try:
                    item = await asyncio.wait_for(queue.get(), remaining)
                except TimeoutError:
                    raise TimeoutError(f"local LLM {loaded.path.name} did not finish within {timeout_s:.0f} s "
                                       "(LLM_TIMEOUT_S); a shorter prompt or max_output_tokens helps") from None
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, _Done):
                    return
        finally:
            stop.set()  # no-op after a normal finish; frees the lock early on cancel / timeout / error


# --------------------------------------------------------------------------- registration
_registered = False
_register_lock = threading.Lock()


def register_local_llm() -> None:
    """Make ADK resolve ``local/...`` model strings to `LocalLlamaLlm` (idempotent; call before building agents)."""
    global _registered
    with _register_lock:
        if _registered:
            return
        LLMRegistry.register(LocalLlamaLlm)
        _registered = True
        log.debug("registered %s for %s", LocalLlamaLlm.__name__, LocalLlamaLlm.supported_models())


__all__ = [
    "LocalLlamaLlm",
    "fit_to_context",
    "forget_prompts",
    "local_model_path",
    "register_local_llm",
    "request_to_messages",
]
