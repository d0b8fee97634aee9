"""Evaluation: `python -m agentic_rag.eval retrieval|e2e --dataset FILE`."""
