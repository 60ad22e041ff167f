// admin_supersessions: every unit-to-unit SUPERSEDED_BY link (kg doctor).
// parameters: none
// returns: old, new
MATCH (o:Unit {ws: $ws})-[:SUPERSEDED_BY]->(n:Unit {ws: $ws})
RETURN o.id AS old, n.id AS new
