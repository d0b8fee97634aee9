"""Agentic RAG for Chinese legal questions, as a Google ADK app (`root_agent`).

`root_agent` is imported lazily so that `import agentic_rag.retriever` (index building, evaluation, benchmarks)
does not pay for loading ADK and LiteLLM.
"""


def __getattr__(name: str):
    if name == "root_agent":
        from .agent import root_agent

        return root_agent
    raise AttributeError(f"module 'agentic_rag' has no attribute {name!r}")
