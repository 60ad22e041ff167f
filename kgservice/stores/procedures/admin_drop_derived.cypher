// admin_drop_derived: remove everything derived from the given units, so kg doctor --repair can
// re-derive it from their stored JSON: their SUBJECT/ARG/MOD edges, the node-to-node edges
// carrying their id, and the SUPERSEDED_BY links they own (old -> this unit).
// Three statements, run in one transaction. parameters: $ids (list of unit ids)
MATCH (u:Unit {ws: $ws})-[e:SUBJECT|ARG|MOD]->()
WHERE u.id IN $ids
DELETE e;
MATCH (:Node {ws: $ws})-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT|SUPERSEDED|NARROWED_BY]->(:Node {ws: $ws})
WHERE r.unit IN $ids
DELETE r;
MATCH (:Unit {ws: $ws})-[s:SUPERSEDED_BY]->(n:Unit {ws: $ws})
WHERE n.id IN $ids
DELETE s;
