"""Chunking and embedding: chunks of documents, encoders by name, local and Ray executors."""
