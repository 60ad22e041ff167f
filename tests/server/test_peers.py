"""The rate limits are the deployment's: each server enforces 1/N of them, N being the servers
with a live heartbeat in the store (kgservice.server.peers). Worked out by hand: a burst of 6
shared by 3 servers is 2 requests per server; a refill of 0.001/s adds under one token in the
life of a test, so no count here depends on how fast the machine is."""

from __future__ import annotations

import pytest

from kgservice.server.middleware import TokenBuckets
from kgservice.server.peers import Peers


def admitted(buckets: TokenBuckets, who: str, tries: int) -> int:
    return sum(buckets.take(who) == 0 for _ in range(tries))


def test_a_server_admits_its_share_of_the_deployment_limit():
    servers = 3
    shared = TokenBuckets(0.001, 6, share=lambda: servers)
    assert admitted(shared, "key-a", 10) == 2  # 6 / 3
    assert shared.take("key-a") > 0 and admitted(shared, "key-b", 10) == 2  # per key
    assert "6 across 3 servers" in shared.described().replace("burst ", "")
    alone = TokenBuckets(0.001, 6)
    assert admitted(alone, "key-a", 10) == 6
    tiny = TokenBuckets(0.001, 2, share=lambda: 3)  # 2/3 of a token would admit nobody: at least one
    assert admitted(tiny, "key-a", 5) == 1


def test_a_share_that_grows_does_not_refill_a_bucket():
    """A server that joins shrinks the others' buckets at their next request; one that leaves
    raises the ceiling but adds no tokens at once."""
    n = [1]
    buckets = TokenBuckets(0.001, 6, share=lambda: n[0])
    assert admitted(buckets, "k", 3) == 3  # 3 of 6 left
    n[0] = 3
    assert admitted(buckets, "k", 5) == 2  # the bucket is cut to 2
    n[0] = 1
    assert admitted(buckets, "k", 5) == 0  # still empty: refilled at the rate only


@pytest.mark.neo4j
def test_servers_count_each_other_through_the_store(neo4j_connection):
    from tests.neo4j_helpers import wipe_all

    wipe_all(neo4j_connection)
    registry = neo4j_connection.server_registry()
    a, b, c = Peers(registry), Peers(registry), Peers(registry, read_only=True)
    a.beat()
    assert a.share() == 1
    b.beat()
    a.beat()
    assert (a.share(), b.share()) == (2, 2)
    c.beat()  # a read-only server writes no heartbeat: it counts the others and itself
    assert c.share() == 3
    registry.leave(a.id)  # what a's stop() does: the others' share grows at their next beat
    b.beat()
    assert b.share() == 1
    with neo4j_connection.driver.session() as s:
        names = s.run("MATCH (s:KgServer) RETURN s.name AS name").value()
    assert names == [b.name]
