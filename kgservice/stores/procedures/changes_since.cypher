// changes_since: the logged changes after a process's last seen version, oldest first.
// parameters: $after (seen version), $upto (the version just read)
// returns: seq, touched (list of node ids), all (bool: clear everything), by, units (list of unit
// ids, or null when the change did not list them)
MATCH (c:KgChange {ws: $ws})
WHERE c.seq > $after AND c.seq <= $upto
RETURN c.seq AS seq, c.touched AS touched, coalesce(c.all, false) AS all, c.by AS by, c.units AS units
ORDER BY seq
