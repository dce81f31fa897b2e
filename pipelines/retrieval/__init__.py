"""Retrieval: token counting, BM25 and dense scoring over document texts."""
