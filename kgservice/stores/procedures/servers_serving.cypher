// servers_serving: how many live `kg serve` processes serve workspace $ws (their heartbeat
// records it, servers_beat.cypher): a workspace is not renamed or deleted under them.
// parameters: ws. returns: live
MATCH (s:KgServer)
WHERE s.lease_until >= timestamp() AND s.ws = $ws
RETURN count(s) AS live
