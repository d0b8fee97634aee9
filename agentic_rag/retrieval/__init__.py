"""Hybrid retrieval: query analysis, channels (dense, BM25, 2-gram) behind one protocol, fusion, rerank."""
