"""The suite's skip rule (tests/conftest.py), run on a small suite in a child pytest: every skip is counted by its
reason in the closing banner, whatever skipped it, and the run fails unless AGENTIC_RAG_ALLOW_SKIPS=1."""
from __future__ import annotations

import sys
import textwrap

from agentic_rag.config import PROJECT_ROOT
from tests import hermetic
from tests.conftest import MISSING_MODELS

CONFTEST = """
from tests.conftest import pytest_collectreport, pytest_runtest_logreport, pytest_sessionfinish, \\
    pytest_terminal_summary  # the suite's own hooks
"""
TESTS = f"""
import pytest

MISSING_MODELS = {MISSING_MODELS!r}


def test_runs():
    pass


def test_needs_models():
    pytest.skip(MISSING_MODELS)


def test_needs_models_too():
    pytest.skip(MISSING_MODELS)


@pytest.mark.skipif(True, reason="no /usr/bin/chromium: apt-get install chromium fonts-noto-cjk")
def test_needs_a_browser():
    pass


@pytest.fixture
def shared_data():
    pytest.skip("../shared/data missing")


def test_needs_shared_data(shared_data):
    pass


@pytest.mark.xfail(reason="a known failure, not a skip")
def test_known_failure():
    assert False
"""
OPTIONAL = """
import pytest

pytest.importorskip("no_such_package_4f1c")


def test_never_collected():
    pass
"""


def run_suite(tmp_path, allow: bool):
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_some.py").write_text(textwrap.dedent(TESTS), encoding="utf-8")
    (tmp_path / "test_optional.py").write_text(OPTIONAL, encoding="utf-8")
    extra = {"PYTHONPATH": str(PROJECT_ROOT)} | ({"AGENTIC_RAG_ALLOW_SKIPS": "1"} if allow else {})
    return hermetic.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                        cwd=tmp_path, env_extra=extra, capture_output=True, text=True, timeout=300)


def banner(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "SKIPPED: " in line and "did not run" in line)
    return [line.strip() for line in lines[start:start + 7]]


def test_every_skip_is_counted_by_reason_and_fails_the_run(tmp_path):
    out = run_suite(tmp_path, allow=False)
    assert out.returncode == 1, out.stdout[-3000:]
    assert "1 passed, 5 skipped, 1 xfailed" in out.stdout
    lines = banner(out.stdout)
    assert "SKIPPED: 5 tests did not run" in lines[0]
    assert lines[1:6] == [f"2 × {MISSING_MODELS}",
                          "1 × ../shared/data missing",
                          "1 × could not import 'no_such_package_4f1c': No module named 'no_such_package_4f1c'",
                          "1 × no /usr/bin/chromium: apt-get install chromium fonts-noto-cjk",
                          "Set AGENTIC_RAG_ALLOW_SKIPS=1 to accept this; otherwise the run fails."]


def test_allow_skips_accepts_them_and_still_counts_them(tmp_path):
    out = run_suite(tmp_path, allow=True)
    assert out.returncode == 0, out.stdout[-3000:]
    lines = banner(out.stdout)
    assert "SKIPPED: 5 tests did not run" in lines[0] and lines[1] == f"2 × {MISSING_MODELS}"
    assert "Accepted: AGENTIC_RAG_ALLOW_SKIPS=1." in lines


def test_a_run_without_skips_has_no_banner(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_fine.py").write_text("def test_fine():\n    pass\n", encoding="utf-8")
    out = hermetic.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                       cwd=tmp_path, env_extra={"PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True, text=True,
                       timeout=300)
    assert out.returncode == 0 and "did not run" not in out.stdout
