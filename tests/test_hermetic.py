"""Every process a test starts is hermetic (tests/hermetic.py): a developer's `.env`, keys and settings never reach
it, and no test starts a process any other way."""
from __future__ import annotations

import ast
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from agentic_rag.config import PROJECT_ROOT
from tests import hermetic

TESTS = Path(__file__).resolve().parent
PLANTED = {"SERPAPI_API_KEY": "serp-PLANTED-5b1e", "DEEPSEEK_API_KEY": "sk-PLANTED-77c0", "WEB_SEARCH_PROVIDER": "tavily"}


def test_child_env_drops_the_parents_keys_endpoints_and_settings(monkeypatch):
    parent = {"SERPAPI_API_KEY": "k1", "OPENAI_API_KEY": "k2", "deepseek_api_key": "k3", "DEEPSEEK_API_BASE": "http://x",
              "OPENAI_BASE_URL": "http://y", "TAVILY_BASE_URL": "http://z", "WEB_SEARCH_PROVIDER": "bocha",
              "SERPAPI_TIMEOUT_S": "1", "DATA_DIR": "/elsewhere", "top_k": "9", "AGENTIC_RAG_MODEL": "deepseek/x",
              "AGENTIC_ENABLED": "false", "AGENTIC_RAG_ENV_FILE": "/home/dev/.env", "ADK_DISABLE_LOAD_DOTENV": "0",
              "HF_HUB_OFFLINE": "0", "UNRELATED_VARIABLE": "kept"}
    for name, value in parent.items():
        monkeypatch.setenv(name, value)
    env = hermetic.child_env({"TAVILY_API_KEY": "set-by-the-test", "DATA_DIR": "/the/test/index"})
    left = {k: env[k] for k in env if k.upper() in {p.upper() for p in parent}}
    assert left == {"DATA_DIR": "/the/test/index", "AGENTIC_RAG_ENV_FILE": os.devnull, "ADK_DISABLE_LOAD_DOTENV": "1",
                    "HF_HUB_OFFLINE": "1", "UNRELATED_VARIABLE": "kept"}
    assert env["TAVILY_API_KEY"] == "set-by-the-test" and env["PATH"] == os.environ["PATH"]
    # every setting is covered, not only the ones listed above
    assert {f.upper() for f in hermetic.Settings.model_fields} <= hermetic.setting_names()


CHILD = """
import json, os, sys
root = sys.argv[1]
for name in sys.argv[2:]:  # what a looser environment would not have set
    os.environ.pop(name, None)
sys.path.insert(0, root)
from google.adk.cli.utils.envs import load_dotenv_for_agent
load_dotenv_for_agent("agentic_rag", root)  # what adk web / api_server / run do before importing the app
from agentic_rag.config import PROJECT_ROOT, Settings, reveal
s = Settings()
print(json.dumps({"root": str(PROJECT_ROOT), "provider": s.web_search_provider, "serpapi": reveal(s.serpapi_api_key),
                  "deepseek": reveal(s.deepseek_api_key), "environ": os.environ.get("SERPAPI_API_KEY")}))
"""


@pytest.fixture
def planted(tmp_path) -> Path:
    """A copy of the settings module rooted in tmp_path, with a `.env` where it and ADK look for one (the project
    root, above the agent's folder): the real project's `.env` is never touched."""
    package = tmp_path / "agentic_rag"
    package.mkdir()
    for name in ("__init__.py", "config.py", "env_file.py", "offline.py"):
        shutil.copy(PROJECT_ROOT / "agentic_rag" / name, package / name)
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in PLANTED.items()), encoding="utf-8")
    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    return tmp_path


def _child(root: Path, *unset: str) -> dict:
    out = hermetic.run([sys.executable, str(root / "child.py"), str(root), *unset], cwd=root, capture_output=True,
                       text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_planted_env_file_does_not_reach_a_child(planted):
    seen = _child(planted)
    assert seen == {"root": str(planted), "provider": "auto", "serpapi": None, "deepseek": None, "environ": None}


@pytest.mark.parametrize("unset", ["AGENTIC_RAG_ENV_FILE", "ADK_DISABLE_LOAD_DOTENV"])
def test_each_switch_of_the_helper_is_needed(planted, unset):
    """The control: without either switch the same child reads the planted file (AGENTIC_RAG_ENV_FILE is what the
    servers' old environment, every AGENTIC* variable dropped, lost), so the test above can fail."""
    seen = _child(planted, unset)
    assert seen["root"] == str(planted)
    assert (seen["provider"], seen["serpapi"], seen["deepseek"]) == ("tavily", "serp-PLANTED-5b1e", "sk-PLANTED-77c0")
    assert seen["environ"] == ("serp-PLANTED-5b1e" if unset == "ADK_DISABLE_LOAD_DOTENV" else None)


# ---------------------------------------------------------------------------- no process starts another way
# Calls that start a process. The check follows imports (`import subprocess as sp`, `from os import system`).
LAUNCHERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
           "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "posix_spawn",
           "posix_spawnp", "fork", "forkpty"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"spawn", "fork"},
    "multiprocessing": {"Process", "Pool", "get_context"},
    "concurrent.futures": {"ProcessPoolExecutor"},
}
BROWSER_LAUNCHES = {"launch", "launch_persistent_context"}  # Playwright: must pass env=hermetic.child_env(...)


def unhermetic_launches(source: str) -> list[str]:
    """`line: call` for every process start in `source` that does not go through tests/hermetic.py."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> module
    functions: dict[str, str] = {}  # local name -> "module.function"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if node.module in LAUNCHERS and a.name in LAUNCHERS[node.module]:
                    functions[a.asname or a.name] = f"{node.module}.{a.name}"
                else:
                    modules[a.asname or a.name] = f"{node.module}.{a.name}"

    def dotted(expr) -> str | None:
        if isinstance(expr, ast.Name):
            return functions.get(expr.id) or modules.get(expr.id, expr.id)
        if isinstance(expr, ast.Attribute):
            base = dotted(expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func) or ""
        module, _, attr = name.rpartition(".")
        if attr in LAUNCHERS.get(module, ()):
            found.append(f"{node.lineno}: {name}")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in BROWSER_LAUNCHES:
            env = next((k.value for k in node.keywords if k.arg == "env"), None)
            if not (isinstance(env, ast.Call) and (dotted(env.func) or "").endswith("hermetic.child_env")):
                found.append(f"{node.lineno}: {node.func.attr} without env=hermetic.child_env(...)")
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def test_the_check_finds_every_way_of_starting_a_process():
    source = """
import subprocess, os
import subprocess as sp
from subprocess import Popen as P, PIPE
from asyncio import create_subprocess_exec
import multiprocessing
subprocess.run(["x"])
sp.check_output(["x"], env={**os.environ})
P(["x"], stdout=PIPE)
os.system("x")
create_subprocess_exec("x")
multiprocessing.Process(target=print)
ctx = pw.chromium.launch_persistent_context("dir", env=os.environ)
pw.chromium.launch()
hermetic.run(["x"])
hermetic.popen(["x"], stdout=subprocess.PIPE)
pw.chromium.launch(env=hermetic.child_env())
"""
    assert [int(f.split(":")[0]) for f in unhermetic_launches(source)] == list(range(7, 15))


def test_every_process_the_tests_start_goes_through_the_helper():
    files = sorted(p for p in TESTS.rglob("*.py") if p.resolve() != Path(hermetic.__file__).resolve())
    assert len(files) > 30 and TESTS / "test_api_server.py" in files
    offenders = {str(p.relative_to(TESTS)): found for p in files
                 if (found := unhermetic_launches(p.read_text(encoding="utf-8")))}
    assert offenders == {}
