"""Where the settings file is, with no side effects: `config` reads it, and so does `download_models.py`, which must
not import `config` (importing it makes the process offline, and `--source hub` downloads)."""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def env_file() -> str:
    """AGENTIC_RAG_ENV_FILE, else the project's `.env`. Tests point it at /dev/null so that a developer's .env (a real
    SerpAPI key …) never leaks into them."""
    return os.environ.get("AGENTIC_RAG_ENV_FILE", str(PROJECT_ROOT / ".env"))
