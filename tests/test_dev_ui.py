"""The ADK Dev UI (`adk web`) in a real headless Chromium: a user types a question and reads the answer.

What the API tests cannot see: how the Dev UI *renders* our events (stage progress lines, scores, Markdown).
The LLM is the fake OpenAI-compatible server (as in test_api_server); the index and the embedder are real.
Browser: Debian's /usr/bin/chromium driven by the `playwright` package (never `playwright install`: no downloads);
`.ci/run` installs it. The page is saved in the test's temporary folder; the tracked docs/adk-web.png is left alone
(docs/screenshot.sh remakes it on purpose).
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentic_rag.config import PROJECT_ROOT
from tests import hermetic
from tests.fakes.openai_server import FakeOpenAIServer
from tests.test_api_server import QUESTION, Script, free_port, stop

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                       reason="playwright missing: pip install -r requirements-dev.txt"),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: apt-get install chromium fonts-noto-cjk"),
]
# The model's one sentence; the rest of the answer (**结论**, **依据** …) is written by code, in Markdown the page
# must render as bold, never as literal asterisks.
ANSWER = "需要，孩子不满十四周岁，收集他的个人信息应当取得您作为父母的同意。"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]
FIRST_ANSWER_MS = 120_000  # the first question also loads the embedder


def reply() -> Script:
    script = Script()
    script.answer = ANSWER
    return script


def start_web(port: int, env: dict, tmp: Path) -> subprocess.Popen:
    """`adk web` with the hermetic environment plus `env` (tests/hermetic.py)."""
    adk = str(Path(sys.executable).with_name("adk"))
    # A throw-away HOME whose ADK config says "telemetry off": the Dev UI then shows no consent dialog.
    hermetic.run([adk, "telemetry", "disable"], env_extra=env, check=True, capture_output=True, timeout=60)
    log = tmp / "web.log"
    proc = hermetic.popen([adk, "web", "--host", "127.0.0.1", "--port", str(port), "--session_service_uri",
                           f"sqlite:///{tmp / 's.db'}", "."], cwd=PROJECT_ROOT, env_extra=env,
                          stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/list-apps", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.5)
    stop(proc)
    raise RuntimeError(f"adk web did not start: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def web(pipl_data_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("web")
    (tmp / "home").mkdir()
    with FakeOpenAIServer(reply()) as llm:
        env = {"AGENTIC_RAG_MODEL": "deepseek/deepseek-chat", "DEEPSEEK_API_KEY": "test-key",
               "DEEPSEEK_API_BASE": llm.base_url, "DATA_DIR": str(pipl_data_dir), "RERANKER": "none",
               "LLM_MAX_RETRIES": "0", "HOME": str(tmp / "home")}
        port = free_port()
        proc = start_web(port, env, tmp)
        yield f"http://127.0.0.1:{port}"
        stop(proc)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # A fresh profile per run; tall enough that the whole conversation fits the screenshot (the chat list
        # scrolls inside the page, so a full-page screenshot is only as tall as the viewport).
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chrome")), executable_path=str(CHROMIUM), headless=True,
            args=BROWSER_ARGS, viewport={"width": 1400, "height": 1900}, env=hermetic.child_env())
        yield ctx.new_page()
        ctx.close()


def ask(page, base: str, question: str) -> None:
    """Type the question into the chat box like a user, send it, and wait for the whole answer to render."""
    from playwright.sync_api import expect

    page.goto(f"{base}/dev-ui/?app=agentic_rag", timeout=60_000)
    box = page.locator("textarea.chat-input-box")
    box.wait_for(state="visible", timeout=60_000)
    box.fill(question)
    box.press("Enter")
    final = page.locator(".content-bubble").filter(has=page.locator("strong", has_text="结论"))
    # The answer streams in; its footer on screen means the final (non-partial) text is there.
    expect(final).to_contain_text("必要时请咨询专业律师", timeout=FIRST_ANSWER_MS)


def settle(page, quiet_s: float = 2.0, limit_s: float = 30.0) -> None:
    """Wait until no new event row has appeared for `quiet_s`: the run's last events follow the answer."""
    rows, quiet_since, deadline = -1, time.time(), time.time() + limit_s
    while time.time() < deadline and time.time() - quiet_since < quiet_s:
        n = page.locator("app-event-row").count()
        rows, quiet_since = n, (quiet_since if n == rows else time.time())
        page.wait_for_timeout(250)


def chat_text(page) -> str:
    """The conversation's visible text, not the side panels (they show the selected event's internals)."""
    return "\n".join(page.locator("app-event-row").all_inner_texts())


def test_dev_ui_shows_progress_scores_and_rendered_answer(web, page, tmp_path):
    doc_image = PROJECT_ROOT / "docs" / "adk-web.png"
    doc_before = doc_image.read_bytes()
    ask(page, web, QUESTION)
    settle(page)
    shot = page.screenshot(full_page=True)
    (tmp_path / "adk-web.png").write_bytes(shot)  # kept for debugging when an assertion below fails
    text = chat_text(page)
    for stage in ("问题路由", "本地检索", "质量评估"):
        assert stage in text, f"stage line {stage!r} not visible in the chat:\n{text}"
    for score in ("相关性 9", "完整性 8", "准确性 9", "覆盖面 8"):
        assert score in text, f"score {score!r} not visible in the chat:\n{text}"
    assert "第三十一条" in text, text
    assert '"main_query"' not in text and '{"relevance"' not in text, f"raw JSON shown in the chat:\n{text}"
    assert "**" not in text, f"literal ** in the chat (Markdown bold not rendered):\n{text}"
    assert page.locator(".content-bubble strong", has_text="依据").count() >= 1, text
    assert "监护人的同意" in text and "需要" in text, text
    assert doc_image.read_bytes() == doc_before  # a test run never rewrites the tracked image
