"""Shared fixtures and the suite's rules.

Hermetic: the developer's `.env` and environment never reach a test (a real key there would make tests call the
service), nor a process a test starts (tests/hermetic.py). Honest about skips: a test whose offline models,
browser or shared data are missing is skipped, and the run then FAILS with a banner counting the skips by reason
(each reason says how to fix it: `make models`, `apt-get install chromium …`), unless AGENTIC_RAG_ALLOW_SKIPS=1.
No skip is expected on the normal path (`.ci/run` → `make test`): there the run has none. Tests that load a real
model are marked `slow` automatically (by the fixtures they use), so `pytest -m "not slow"` is the fast run.
"""
from __future__ import annotations

import os

# Before anything imports agentic_rag.config: no .env, no provider keys, no deployment settings.
os.environ["AGENTIC_RAG_ENV_FILE"] = os.devnull
os.environ["ADK_DISABLE_LOAD_DOTENV"] = "1"  # for the adk subprocesses the tests start
os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")

from agentic_rag.config import Settings

for _name in list(os.environ):
    if _name.lower() in Settings.model_fields or _name.upper().endswith(("_API_KEY", "_API_BASE")):
        os.environ.pop(_name)

from pathlib import Path

import pytest

from agentic_rag.config import PROJECT_ROOT

MODELS_DIR = PROJECT_ROOT / "models"
EMBEDDER = MODELS_DIR / "embeddinggemma-300m"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
MISSING_MODELS = "offline models missing: run `make models` (python download_models.py)"
REAL_MODEL_FIXTURES = {"pipl_data_dir", "pipl_settings", "retriever", "llm"}  # llm: test_local_llm
ALLOW_SKIPS = "AGENTIC_RAG_ALLOW_SKIPS"
_skipped: dict[str, list[str]] = {}  # reason -> node ids (tests, or modules skipped at collection)


def require_embedder() -> None:
    if not (EMBEDDER / ".complete.json").exists():
        pytest.skip(MISSING_MODELS)


def pytest_collection_modifyitems(items):
    for item in items:
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ").strip()


def _record_skip(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):  # an xfail is reported as skipped too: not a skip
        _skipped.setdefault(skip_reason(report), []).append(report.nodeid)


def pytest_runtest_logreport(report):
    _record_skip(report)


def pytest_collectreport(report):  # a whole module skipped (pytest.importorskip / allow_module_level)
    _record_skip(report)


def skips_allowed() -> bool:
    return os.environ.get(ALLOW_SKIPS) == "1"


def pytest_terminal_summary(terminalreporter):
    if not _skipped:
        return
    total = sum(map(len, _skipped.values()))
    allowed = skips_allowed()
    terminalreporter.section(f"SKIPPED: {total} tests did not run", sep="!", red=not allowed, bold=True)
    for reason, nodes in sorted(_skipped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        terminalreporter.write_line(f"{len(nodes):4d} × {reason}", red=not allowed)
    if allowed:
        terminalreporter.write_line(f"Accepted: {ALLOW_SKIPS}=1.")
    else:
        terminalreporter.write_line(f"Set {ALLOW_SKIPS}=1 to accept this; otherwise the run fails.")


def pytest_sessionfinish(session, exitstatus):
    if _skipped and not skips_allowed() and exitstatus == 0:
        session.exitstatus = 1


@pytest.fixture(scope="session")
def fake_data_dir(tmp_path_factory) -> Path:
    """The PIPL index built with the fast fake embedder (no model)."""
    from tests.fakes.retriever import build_fake_index

    return build_fake_index(tmp_path_factory.mktemp("fake_index"))


@pytest.fixture(scope="session")
def fake_settings(fake_data_dir) -> Settings:
    return Settings(_env_file=None, data_dir=fake_data_dir, models_dir=MODELS_DIR, reranker="none",
                    min_vector_score=0.0, agentic_rag_model="fake/script", llm_max_retries=0,
                    router_law_margin=None)  # the fake embedder's law map means nothing


@pytest.fixture(scope="session")
def fake_retriever(fake_data_dir):
    from tests.fakes.retriever import fake_retriever as make

    return make(fake_data_dir)


LAWREFBOOK = SHARED_DATA / "lawrefbook" / "lawrefbook_articles.jsonl.gz"
MULTILAW_KB = [line for line in (PROJECT_ROOT / "eval" / "multilaw_laws.txt").read_text(encoding="utf-8").split("\n")
               if line]


@pytest.fixture(scope="session")
def fake_multilaw_retriever(tmp_path_factory):
    """The six laws of eval/multilaw_laws.txt from the real LawRefBook text, indexed with the fast fake embedder."""
    import gzip
    import json

    if not LAWREFBOOK.exists():
        pytest.skip(f"{LAWREFBOOK} missing (the shared data folder)")
    from tests.fakes.retriever import build_fake_index, fake_retriever

    corpus = tmp_path_factory.mktemp("ml") / "six_laws.jsonl.gz"
    with gzip.open(LAWREFBOOK, "rt", encoding="utf-8") as src, gzip.open(corpus, "wt", encoding="utf-8") as dst:
        for line in src:
            row = json.loads(line)
            if row["law"] in MULTILAW_KB and not row["category"].startswith("DLC/"):
                dst.write(line)
    data_dir = build_fake_index(tmp_path_factory.mktemp("ml_index"), corpus, laws=MULTILAW_KB)
    return fake_retriever(data_dir)


@pytest.fixture(scope="session")
def pipl_data_dir(tmp_path_factory) -> Path:
    """A real index of chinese_law.txt built once per test session with EmbeddingGemma."""
    require_embedder()
    from agentic_rag.knowledge.corpus import file_sha256, load_corpus
    from agentic_rag.knowledge.index import build_index
    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.retrieval.tokenizer import LegalTokenizer
    from agentic_rag.weights import resolve_embedder

    data_dir = tmp_path_factory.mktemp("pipl_index")
    settings = Settings(_env_file=None)
    docs = load_corpus(settings.corpus_path, structure=settings.corpus_structure)
    embedder = load_embedder(resolve_embedder(None, MODELS_DIR))
    build_index(docs, embedder, LegalTokenizer(), data_dir, corpus_source=str(settings.corpus_path),
                corpus_file_sha256=file_sha256(settings.corpus_path))
    return data_dir


@pytest.fixture(scope="session")
def pipl_settings(pipl_data_dir) -> Settings:
    return Settings(data_dir=pipl_data_dir, models_dir=MODELS_DIR, reranker="none", _env_file=None)


@pytest.fixture(scope="session")
def retriever(pipl_settings):
    from agentic_rag.retrieval.retriever import LocalRetriever

    return LocalRetriever.from_settings(pipl_settings)
