"""The process's bookmark manager for the Neo4j driver (:mod:`kgservice.stores.causal` says how
read-your-writes works): here because only the Neo4j store talks to the driver."""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j.api import BookmarkManager

from kgservice.stores import causal


class ProcessBookmarks(BookmarkManager):
    """The driver's bookmark manager (the process's causal chain) plus the bookmarks of the
    current request (:func:`kgservice.stores.causal.reading_after`), which are presented but
    never kept: a bad or far-ahead token from one client cannot hold up the process's other
    requests."""

    def __init__(self) -> None:
        self._own = neo4j.GraphDatabase.bookmark_manager()

    def update_bookmarks(self, previous_bookmarks: Any, new_bookmarks: Any) -> None:
        self._own.update_bookmarks(previous_bookmarks, new_bookmarks)

    def get_bookmarks(self) -> Any:
        own = self._own.get_bookmarks()
        extra = causal.after()
        return {*own, *extra} if extra else own
