"""The one place that makes the process offline: nothing may download at run time.

Imported first by `config` (every entry point imports it), so the variables are set before LiteLLM,
sentence-transformers or huggingface_hub read them. `setdefault` keeps a deployment's explicit choice.
"""
from __future__ import annotations

import os

OFFLINE_ENV = {
    # LiteLLM downloads its price map at import unless told not to.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # sentence-transformers / transformers / huggingface_hub: local files only.
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def apply() -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


apply()
