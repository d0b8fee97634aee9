"""Agentic RAG for Chinese legal questions, as a Google ADK app (`root_agent`, `app`).

Both are imported lazily so that `import agentic_rag.retrieval…` (index building, evaluation, benchmarks) does not
pay for loading ADK and LiteLLM.
"""
import warnings

# jieba imports pkg_resources, whose deprecation notice users can do nothing about.
warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)


def __getattr__(name: str):
    if name in ("root_agent", "app"):
        from . import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'agentic_rag' has no attribute {name!r}")
