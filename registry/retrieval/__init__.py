"""Ranked retrieval: text analysis, embeddings, the in-process vector index, scoring."""
