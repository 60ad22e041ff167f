// unit_probes_backfill: give every stored unit its `probe` (subject id, U+001F, argument-0 node
// id), the key live_fact_units looks duplicates up by. Units written before that property
// existed lack it; run by Neo4jStore.apply_schema while the KgSchema marker is absent, in
// bounded transactions (an auto-commit query), then the marker is set (second statement).
// Idempotent: a crash half-way leaves the marker absent and the next connect goes on.
// parameters: none. returns: nothing.
MATCH (u:Unit) WHERE u.probe IS NULL
CALL (u) {
  MATCH (u)-[:SUBJECT]->(s:Node)
  MATCH (u)-[:ARG {pos: 0}]->(a:Node)
  SET u.probe = s.id + '\u001f' + a.id
} IN TRANSACTIONS OF 10000 ROWS;
MERGE (:KgSchema {id: 'unit_probe'})
