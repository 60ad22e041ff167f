// admin_supersessions: every unit-to-unit SUPERSEDED_BY link (kg doctor).
// parameters: none
// returns: old, new
MATCH (o:Unit)-[:SUPERSEDED_BY]->(n:Unit)
RETURN o.id AS old, n.id AS new
