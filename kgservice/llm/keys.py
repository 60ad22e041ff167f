"""The key of an LLM request: shared by the client (recordings), the offline provider
(its scripted table) and the decision cache, in a module of its own so neither of the
first two has to import the other for it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any


def request_key(messages: Sequence[dict[str, Any]]) -> str:
    """Hash of a request's content (roles and texts, not the model): the key of recordings
    and of the offline provider's scripted table.

    >>> request_key([{"role": "user", "content": "hi"}]) == request_key([{"role": "user", "content": "hi", "name": "x"}])
    True
    >>> len(request_key([])), request_key([{"role": "user", "content": "a"}]) != request_key([{"role": "user", "content": "b"}])
    (32, True)
    """
    canon = json.dumps([[m.get("role", ""), m.get("content", "")] for m in messages],
                       ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:32]
