// servers_beat: one kg serve says it is alive (kgservice/server/peers.py) until $lease_ms from now,
// forgets servers whose lease ended over $forget_ms ago, and counts the live ones (itself included).
// Times are the database's clock, so servers on different machines agree.
// parameters: $id, $server_name, $lease_ms, $forget_ms, $serves (the one workspace it serves, or '*'
// for every workspace of the deployment; recorded for `kg workspaces rename/delete`:
// servers_serving.cypher), $ws (its own workspace, added by the connection)
// returns: live
MERGE (s:KgServer {id: $id})
ON CREATE SET s.started_ms = timestamp(), s.name = $server_name
SET s.seen_ms = timestamp(), s.lease_until = timestamp() + $lease_ms, s.ws = $ws, s.serves = $serves
WITH s
CALL {
  MATCH (old:KgServer) WHERE old.lease_until < timestamp() - $forget_ms
  WITH old LIMIT 100
  DELETE old
}
MATCH (live:KgServer) WHERE live.lease_until >= timestamp()
RETURN count(live) AS live
