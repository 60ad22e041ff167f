// admin_relabel_nodes: set display labels of existing nodes (kg restore keeps the dumped labels).
// parameters: $nodes (list of {id, label})
// returns: changed (how many labels differed)
UNWIND $nodes AS x
MATCH (n:Node {ws: $ws, id: x.id})
WHERE n.label IS NULL OR n.label <> x.label
SET n.label = x.label
RETURN count(n) AS changed
