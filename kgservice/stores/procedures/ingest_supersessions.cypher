// ingest_supersessions: old -[:SUPERSEDED_BY]-> new between units, and retire the old
// unit's node-to-node edges (live = false) so closures and spreading skip them.
// A unit's node-to-node edges only ever join its subject and one of its ARG nodes, so the
// edges are found between those two (expand-into), never by walking a hub subject's edges.
// The ends of the retired edges go into the batch's change log (changes_record $touched): their
// rows changed although the new unit may not mention them (caches, the plugin's resident graph).
// parameters: $pairs (list of {old, new})
// returns: linked (pairs written), retired (per pair, the node ids at the ends of retired edges)
UNWIND $pairs AS p
MATCH (o:Unit {id: p.old}), (n:Unit {id: p.new})
MERGE (o)-[:SUPERSEDED_BY]->(n)
WITH o, p
CALL (o, p) {
  MATCH (o)-[:SUBJECT]->(s:Node), (o)-[:ARG]->(a:Node)
  MATCH (s)-[r]-(a)
  WHERE r.unit = p.old
  SET r.live = false
  RETURN collect(s.id) + collect(a.id) AS ends
}
RETURN count(p) AS linked, collect(ends) AS retired
