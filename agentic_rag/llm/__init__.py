"""The LLMs: which model each stage uses, the embedded llama.cpp model, and the one bounded way to call them."""
