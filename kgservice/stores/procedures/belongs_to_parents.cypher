// belongs_to_parents: direct live belongs-to targets of any of the nodes.
// parameters: $ids (list of node ids)
// returns: node (parent id), ordered, distinct
MATCH (n:Node {ws: $ws})-[r:BELONGS_TO]->(p:Node {ws: $ws})
WHERE n.id IN $ids AND r.live
RETURN DISTINCT p.id AS node
ORDER BY node
