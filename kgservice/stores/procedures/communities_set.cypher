// communities_set: store the graphify community map of a graph, replacing any other graph's.
// parameters: $graph (the graph's digest), $map (node id -> community, as JSON)
// returns: nothing
MERGE (c:KgCommunities {ws: $ws, id: 'current'})
SET c.graph = $graph, c.map = $map
