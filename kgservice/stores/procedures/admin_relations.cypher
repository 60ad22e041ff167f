// admin_relations: every node-to-node edge a unit asserted (kg doctor).
// parameters: none
// returns: src, dst, type (relationship type), kind, unit, live
MATCH (a:Node {ws: $ws})-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT|SUPERSEDED|NARROWED_BY]->(b:Node {ws: $ws})
RETURN a.id AS src, b.id AS dst, type(r) AS type, r.kind AS kind, r.unit AS unit, r.live AS live
