// retire_superseded: retire the node-to-node edges of stored units that a batch supersedes
// (live = false), so closures and spreading skip them.
// Runs in the batch's write transaction BEFORE its units and relations are created: a unit's
// node-to-node edges only ever join its subject and one of its ARG nodes, so they are found
// between those two (expand-into), and with none of the batch's edges in the transaction yet
// that expansion reads the store alone. Run after them, every expansion would also walk
// the batch's new edges of hub nodes held in transaction state, which is several times slower.
// The retired ends go into the batch's change log (changes_record $touched): their rows
// changed although the superseding unit may not mention them.
// parameters: $olds (distinct ids of stored units the batch supersedes)
// returns: retired (per unit, the node ids at the ends of its retired edges)
// replan=skip: a plan of id / element-id lookups that statistics cannot improve; a bulk
// ingest changes them so fast that Neo4j would re-plan it every few seconds otherwise
CYPHER replan=skip
UNWIND $olds AS old
MATCH (o:Unit {ws: $ws, id: old})
CALL (o, old) {
  MATCH (o)-[:SUBJECT]->(s:Node {ws: $ws}), (o)-[:ARG]->(a:Node {ws: $ws})
  MATCH (s)-[r]-(a)
  WHERE r.unit = old
  SET r.live = false
  RETURN collect(s.id) + collect(a.id) AS ends
}
RETURN collect(ends) AS retired
