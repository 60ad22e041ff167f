// servers_live: how many kg serve processes hold a live heartbeat (a read-only server counts the others).
// parameters: none
// returns: live
MATCH (s:KgServer) WHERE s.lease_until >= timestamp()
RETURN count(s) AS live
