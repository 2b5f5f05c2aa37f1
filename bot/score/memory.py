"""What the bot remembers about its recent /score messages, bounded so memory cannot grow.

Kept in ``bot_data`` (not in storage): a score message can be rebuilt from its own caption
after a restart, and a photo being corrected is short-lived by nature.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import MutableMapping
from typing import Any, Generic, TypeVar

Value = TypeVar("Value")
MessageKey = tuple[int, int]  # (chat id, message id)


class MessageMemory(Generic[Value]):
    """A least-recently-used map from (chat id, message id) to one value per message."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._items: OrderedDict[MessageKey, Value] = OrderedDict()

    def get(self, key: MessageKey) -> Value | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: MessageKey, value: Value) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def pop(self, key: MessageKey) -> Value | None:
        return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


def memory(bot_data: MutableMapping[str, Any], name: str, limit: int) -> MessageMemory[Any]:
    """The application's memory called ``name``, created on first use."""
    found = bot_data.get(name)
    if found is None:
        found = bot_data[name] = MessageMemory(limit)
    return found
