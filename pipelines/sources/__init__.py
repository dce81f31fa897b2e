"""Readers of the outside world: wiki dumps and APIs, the web fetcher, search, extraction."""
