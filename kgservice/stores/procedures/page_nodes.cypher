// page_nodes: all nodes in id order, one page at a time.
// parameters: $after ('' for the first page), $limit
// returns: id, label, kind
MATCH (n:Node {ws: $ws})
WHERE n.id > $after
RETURN n.id AS id, n.label AS label, n.kind AS kind
ORDER BY n.id
LIMIT $limit
