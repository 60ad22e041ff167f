// admin_fix_nodes: whole-graph fixes after kg doctor --repair re-derived some units, in one
// transaction: edge liveness (an edge is live unless its unit is superseded), node kinds
// (literal by id prefix, derived if it is the subject of a narrows unit, else entry), and
// removal of nodes that no unit mentions. parameters: none.
// Statement 3 returns: id (each removed node)
MATCH (:Node {ws: $ws})-[r:SYNONYM|BELONGS_TO|OF|RELATED_TO|CONTENT|SUPERSEDED|NARROWED_BY]->(:Node {ws: $ws})
WITH r, EXISTS { MATCH (:Unit {ws: $ws, id: r.unit})-[:SUPERSEDED_BY]->(:Unit {ws: $ws}) } AS superseded
WHERE r.live IS NULL OR r.live = superseded
SET r.live = NOT superseded;
MATCH (n:Node {ws: $ws})
WITH n, CASE
  WHEN n.id STARTS WITH 'lit:' THEN 'literal'
  WHEN EXISTS { MATCH (n)<-[:SUBJECT]-(:Unit {ws: $ws, kind: 'narrows'}) } THEN 'derived'
  ELSE 'entry' END AS kind
WHERE n.kind IS NULL OR n.kind <> kind
SET n.kind = kind;
MATCH (n:Node {ws: $ws})
WHERE NOT EXISTS { MATCH (n)<-[:SUBJECT|ARG|MOD]-(:Unit {ws: $ws}) }
WITH n, n.id AS id
DETACH DELETE n
RETURN id;
