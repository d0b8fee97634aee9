"""A local fake of Tavily's search endpoint for offline tests, and the small JSON-over-POST fake it is built on
(`FakeJsonPostApi`, shared with ``bocha_server.py``).

Tavily's documented request is ``POST /search`` with ``Authorization: Bearer <key>`` and a JSON body; errors
are HTTP statuses with ``{"detail": {"error": "..."}}`` (401 invalid key, 429 rate limit, 432 plan limit,
433 pay-as-you-go limit, 500). Use it as a context manager::

    with FakeTavily(mode="ok") as fake:
        TavilySearch(settings, base_url=fake.base_url).search("...")
        fake.requests  # [RecordedRequest(method="POST", path="/search", headers={...}, json={...}, ...)]

``mode`` can be changed while the server runs. Modes:

* ``ok`` — realistic search JSON, ``max_results`` of the 6 Chinese results (or ``payload`` with ``status``)
* ``empty`` — HTTP 200, ``"results": []``
* ``unauthorized`` — HTTP 401 + the documented "missing or invalid API key" detail
* ``quota`` — HTTP 432, plan usage limit exceeded
* ``rate_limited`` — HTTP 429, too many requests
* ``error`` — HTTP 500, plain-text body
* ``slow`` — waits ``slow_seconds`` (or until the server stops) before answering like ``ok``
* ``malformed`` — HTTP 200, ``Content-Type: application/json`` but a truncated, non-JSON body
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

Body = bytes | str | dict[str, Any] | list[Any]
Reply = tuple[int, Body]

RESULTS: list[dict[str, Any]] = [
    {"title": "中华人民共和国个人信息保护法_中国人大网",
     "url": "http://www.npc.gov.cn/npc/c30834/202108/a8c4e3672c74491a80b53a172bb753fe.shtml",
     "content": "为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，根据宪法，制定本法。",
     "score": 0.91, "raw_content": None},
    {"title": "个人信息保护法第二十三条：向其他个人信息处理者提供个人信息",
     "url": "https://www.gov.cn/xinwen/2021-08/20/content_5632486.htm",
     "content": "个人信息处理者向其他个人信息处理者提供其处理的个人信息的，应当向个人告知接收方的名称或者姓名、"
                "联系方式、处理目的、处理方式和个人信息的种类，并取得个人的单独同意。",
     "score": 0.88, "raw_content": None},
    {"title": "出售公民个人信息违法吗？个人信息保护法解读",
     "url": "https://www.chinacourt.org/article/detail/2021/11/id/6380000.shtml",
     "content": "违反个人信息保护法规定处理个人信息的，由履行个人信息保护职责的部门责令改正，给予警告，没收违法所得。",
     "score": 0.84, "raw_content": None},
    {"title": "侵犯公民个人信息罪的认定标准",
     "url": "https://www.spp.gov.cn/spp/zdgz/202105/t20210520_519000.shtml",
     "content": "违反国家有关规定，向他人出售或者提供公民个人信息，情节严重的，处三年以下有期徒刑或者拘役。",
     "score": 0.79, "raw_content": None},
    {"title": "个人信息保护法十问十答",
     "url": "https://www.cac.gov.cn/2021-08/20/c_1631050028355286.htm",
     "content": "处理敏感个人信息应当取得个人的单独同意；法律、行政法规规定应当取得书面同意的，从其规定。",
     "score": 0.75, "raw_content": None},
    {"title": "手机号被卖怎么办？律师解答",
     "url": "https://www.findlaw.cn/wenda/q_0000000.html",
     "content": "可以向网信部门投诉举报，也可以向人民法院提起诉讼，要求停止侵害、赔偿损失。",
     "score": 0.70, "raw_content": None},
]

ERRORS: dict[str, Reply] = {
    "unauthorized": (401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}),
    "quota": (432, {"detail": {"error": "This request exceeds your plan's set usage limit. Please upgrade your "
                                        "plan or contact support@tavily.com"}}),
    "rate_limited": (429, {"detail": {"error": "Your request has been blocked due to excessive requests. "
                                               "Please reduce rate of requests."}}),
    "error": (500, "Internal Server Error"),
    "malformed": (200, '{"query": "个人信息", "results": [{"title": "中华人民共和国个人信'),
}


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str  # the raw query string, "" when there is none
    headers: dict[str, str]  # names lower-cased
    raw_body: str
    json: Any = field(default=None)  # the parsed body, None when it is not JSON


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, code: int, body: Body) -> None:
        content_type = "text/plain" if isinstance(body, str) and code >= 500 else "application/json"
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False)
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            self.send_response(code)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (slow mode)
            pass

    def _record(self) -> RecordedRequest:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
        try:
            parsed = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            parsed = None
        split = urlsplit(self.path)
        req = RecordedRequest(method=self.command, path=split.path, query=split.query,
                              headers={k.lower(): v for k, v in self.headers.items()}, raw_body=raw, json=parsed)
        self.server.fake._record(req)
        return req

    def do_POST(self) -> None:
        self._send(*self.server.fake._reply(self._record()))

    def do_GET(self) -> None:
        self._record()
        self._send(405, {"detail": {"error": "Method Not Allowed"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeJsonPostApi


class FakeJsonPostApi:
    """A JSON-over-POST search API on 127.0.0.1 with a free port. Subclasses set ``SEARCH_PATH`` and ``MODES``
    and answer through :meth:`respond`; ``payload`` (with ``status``) overrides the ``ok`` answer."""

    SEARCH_PATH: ClassVar[str] = "/search"
    MODES: ClassVar[tuple[str, ...]] = ("ok",)

    def __init__(self, mode: str = "ok", *, slow_seconds: float = 5.0, payload: Body | None = None,
                 status: int = 200) -> None:
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {self.MODES}")
        self.mode = mode
        self.slow_seconds = slow_seconds
        self.payload = payload
        self.status = status
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def respond(self, mode: str, body: Any) -> Reply:
        raise NotImplementedError

    def _reply(self, req: RecordedRequest) -> Reply:
        if req.path != self.SEARCH_PATH:
            return 404, {"detail": {"error": f"Unknown path {req.path}"}}
        mode = self.mode
        if mode == "slow":
            self._stop.wait(self.slow_seconds)
            mode = "ok"
        if mode == "ok" and self.payload is not None:
            return self.status, self.payload
        return self.respond(mode, req.json if isinstance(req.json, dict) else {})

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def start(self) -> Self:
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-{type(self).__name__}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases handlers sleeping in slow mode
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ok_payload(body: dict[str, Any], results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What Tavily answers to ``body``: at most ``max_results`` results, no answer, no images."""
    limit = body.get("max_results") if isinstance(body.get("max_results"), int) else 5
    return {"query": body.get("query", ""), "follow_up_questions": None, "answer": None, "images": [],
            "results": [dict(r) for r in (RESULTS if results is None else results)][:limit],
            "response_time": "0.87", "request_id": "3f1c2e7a-0000-4000-8000-000000000000"}


class FakeTavily(FakeJsonPostApi):
    """Fake Tavily; see the module docstring."""

    SEARCH_PATH = "/search"
    MODES = ("ok", "empty", "unauthorized", "quota", "rate_limited", "error", "slow", "malformed")

    def respond(self, mode: str, body: Any) -> Reply:
        if mode == "ok":
            return 200, ok_payload(body)
        if mode == "empty":
            return 200, ok_payload(body, results=[])
        return ERRORS.get(mode, (500, {"detail": {"error": f"fake server: unknown mode {mode!r}"}}))
