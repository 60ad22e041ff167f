// servers_serving: how many live `kg serve` processes serve workspace $ws (their heartbeat
// records it, servers_beat.cypher): a workspace is not renamed or deleted under them. A server
// serving every workspace ('*') serves this one too; a heartbeat from before `serves` was
// recorded names its workspace in ws.
// parameters: ws. returns: live
MATCH (s:KgServer)
WHERE s.lease_until >= timestamp() AND coalesce(s.serves, s.ws) IN [$ws, '*']
RETURN count(s) AS live
