"""A bounded memo: values by key, the least recently used dropped past a size.

The retrievers keep what they compute of a chunk (its vector, its bag of words) by the hash of
its text, so a chunk met again in another record, level or variant costs a lookup; the bound
keeps memory flat however many records a run scores.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


def text_digest(text: str) -> bytes:
    """The memo key of a text: its SHA-256 (32 bytes, whatever the text's length)."""
    return hashlib.sha256(text.encode()).digest()


class Memo(Generic[V]):
    """At most ``size`` values by key, the least recently used first out."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"a memo holds at least one value, not {size}")
        self.size = size
        self._items: OrderedDict[bytes, V] = OrderedDict()

    def get(self, key: bytes) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: bytes, value: V) -> None:
        """Keep ``value``; drop the least recently used past ``size``."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
