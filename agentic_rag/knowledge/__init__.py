"""The knowledge base: statute corpora, the on-disk index and its manifest, and the stores behind it."""
