"""A local fake of SerpApi's search endpoint for offline tests.

``serpapi.Client.search`` sends ``GET {BASE_DOMAIN}/search?engine=...&q=...&api_key=...``; the documented REST
path is ``/search.json``. Both are served. Use it as a context manager::

    with FakeSerpApi(mode="ok") as fake:
        SerpApiSearch(settings, base_url=fake.base_url).search("...")
        fake.requests  # [RecordedRequest(path="/search", params={"engine": "google_light", ...})]

``mode`` can be changed while the server runs. Modes:

* ``ok`` — realistic google_light JSON with 3 Chinese organic results (or ``payload`` if set)
* ``error`` — HTTP 500, plain-text body
* ``unauthorized`` — HTTP 401 + ``{"error": "Invalid API key..."}``
* ``quota`` — HTTP 429 + ``{"error": "Your account has run out of searches."}``
* ``slow`` — waits ``slow_seconds`` (or until the server stops) before answering like ``ok``
* ``empty`` — HTTP 200, a successful search without ``organic_results``
* ``malformed`` — HTTP 200, ``Content-Type: application/json`` but a truncated, non-JSON body
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

Mode = Literal["ok", "error", "unauthorized", "quota", "slow", "empty", "malformed"]
MODES: tuple[str, ...] = ("ok", "error", "unauthorized", "quota", "slow", "empty", "malformed")
SEARCH_PATHS = ("/search", "/search.json")

ORGANIC_RESULTS: list[dict[str, Any]] = [
    {
        "position": 1,
        "title": "中华人民共和国个人信息保护法_中国人大网",
        "link": "http://www.npc.gov.cn/npc/c30834/202108/a8c4e3672c74491a80b53a172bb753fe.shtml",
        "displayed_link": "www.npc.gov.cn › npc › c30834",
        "snippet": "为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，根据宪法，制定本法。"
                   "自然人的个人信息受法律保护，任何组织、个人不得侵害自然人的个人信息权益。",
        "source": "中国人大网",
    },
    {
        "position": 2,
        "title": "个人信息保护法第二十三条：向其他个人信息处理者提供个人信息",
        "link": "https://www.gov.cn/xinwen/2021-08/20/content_5632486.htm",
        "displayed_link": "www.gov.cn › xinwen › 2021-08",
        "snippet": "个人信息处理者向其他个人信息处理者提供其处理的个人信息的，应当向个人告知接收方的名称或者姓名、"
                   "联系方式、处理目的、处理方式和个人信息的种类，并取得个人的单独同意。",
        "source": "中国政府网",
    },
    {
        "position": 3,
        "title": "出售公民个人信息违法吗？个人信息保护法解读",
        "link": "https://www.chinacourt.org/article/detail/2021/11/id/6380000.shtml",
        "displayed_link": "www.chinacourt.org › article › detail",
        "snippet": "违反个人信息保护法规定处理个人信息的，由履行个人信息保护职责的部门责令改正，给予警告，"
                   "没收违法所得；拒不改正的，并处一百万元以下罚款。",
        "source": "中国法院网",
    },
]


@dataclass
class RecordedRequest:
    path: str
    params: dict[str, str]


def _metadata(params: dict[str, str]) -> dict[str, Any]:
    return {
        "search_metadata": {
            "id": "6650f0c2a8e5d1b7c3f4e210",
            "status": "Success",
            "json_endpoint": "https://serpapi.com/searches/0b1c2d3e4f/6650f0c2a8e5d1b7c3f4e210.json",
            "created_at": "2025-11-29 10:00:00 UTC",
            "processed_at": "2025-11-29 10:00:00 UTC",
            "google_light_url": "https://www.google.com/search?q=...&hl=zh-cn&gl=cn",
            "raw_html_file": "https://serpapi.com/searches/0b1c2d3e4f/6650f0c2a8e5d1b7c3f4e210.html",
            "total_time_taken": 1.23,
        },
        "search_parameters": {
            "engine": params.get("engine", "google_light"),
            "q": params.get("q", ""),
            "location_requested": params.get("location", "China"),
            "location_used": "China",
            "google_domain": params.get("google_domain", "google.com"),
            "hl": params.get("hl", "zh-cn"),
            "gl": params.get("gl", "cn"),
            "num": params.get("num", "10"),
            "device": "desktop",
        },
    }


def ok_payload(params: dict[str, str]) -> dict[str, Any]:
    body = _metadata(params)
    body["search_information"] = {"query_displayed": params.get("q", ""), "total_results": 1230000,
                                  "time_taken_displayed": 0.41,
                                  "organic_results_state": "Results for exact spelling"}
    body["organic_results"] = [dict(r) for r in ORGANIC_RESULTS]
    return body


def empty_payload(params: dict[str, str]) -> dict[str, Any]:
    body = _metadata(params)
    body["search_information"] = {"query_displayed": params.get("q", ""), "organic_results_state": "Fully empty"}
    return body


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, code: int, body: bytes | str | dict[str, Any], content_type: str = "application/json") -> None:
        if isinstance(body, dict):
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

    def do_GET(self) -> None:
        fake = self.server.fake
        split = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        fake._record(RecordedRequest(path=split.path, params=params))
        if split.path not in SEARCH_PATHS:
            self._send(404, {"error": f"Unknown path {split.path}"})
            return
        mode = fake.mode
        if mode == "slow":
            fake._stop.wait(fake.slow_seconds)
            mode = "ok"
        if mode == "ok":
            self._send(200, fake.payload if fake.payload is not None else ok_payload(params))
        elif mode == "empty":
            self._send(200, empty_payload(params))
        elif mode == "error":
            self._send(500, "Internal Server Error", content_type="text/plain")
        elif mode == "unauthorized":
            self._send(401, {"error": "Invalid API key. Your API key should be here: "
                                      "https://serpapi.com/manage-api-key"})
        elif mode == "quota":
            self._send(429, {"error": "Your account has run out of searches."})
        elif mode == "malformed":
            self._send(200, '{"search_metadata": {"id": "6650f0c2", "status": "Succ')
        else:
            self._send(500, {"error": f"fake server: unknown mode {mode!r}"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeSerpApi


class FakeSerpApi:
    """Fake SerpApi on 127.0.0.1 with a free port; see the module docstring."""

    def __init__(self, mode: Mode = "ok", *, slow_seconds: float = 5.0,
                 payload: dict[str, Any] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        self.mode: str = mode
        self.slow_seconds = slow_seconds
        self.payload = payload  # overrides the "ok" body when set
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeSerpApi is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def start(self) -> FakeSerpApi:
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-serpapi", daemon=True)
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

    def __enter__(self) -> FakeSerpApi:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
