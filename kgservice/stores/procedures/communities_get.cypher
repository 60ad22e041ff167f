// communities_get: the graphify community map stored for a graph (see kgservice/stores/shared.py).
// parameters: none
// returns: graph (the graph's digest), map (node id -> community, as JSON); no row when none is stored
MATCH (c:KgCommunities {ws: $ws, id: 'current'})
RETURN c.graph AS graph, c.map AS map
