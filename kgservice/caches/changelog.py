"""Moved to :mod:`kgservice.stores.changelog`: the change log is written by the stores, in the
same write as their data, so it belongs to them (stores never import caches). This name is
kept only so code written against the old place still imports; new code imports the stores
module."""

from kgservice.stores.changelog import (  # noqa: F401
    CHANGES_FILE,
    MAX_TOUCHED,
    Change,
    ChangeFeed,
    Neo4jChangeFeed,
    SqliteChangeFeed,
    VersionClock,
    attributed,
    bump_version,
    carry_version,
    change_feed,
    current_user,
    neo4j_change_step,
    record_change,
    record_embedded_change,
    request_arrived,
)
