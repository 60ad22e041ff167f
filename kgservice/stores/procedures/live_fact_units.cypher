// live_fact_units: the stored units that no unit supersedes and that could state the same fact
// as a unit being ingested (ingest's duplicate check, kgservice/stores/validate.py prepare_batch):
// same subject node and same node at argument 0, as fact_key requires of a duplicate. The
// client compares the full fact keys of what comes back.
// parameters: $pairs (list of {subject, arg}: node ids)
// returns: id, json (one row per unit)
// Each pair walks the smaller side: the subject's SUBJECT edges or the argument's ARG edges
// (hubs have tens of thousands of either). Reading every live unit about each subject instead
// shipped ~25% of a 1M store per 10k batch.
UNWIND $pairs AS p
MATCH (s:Node {id: p.subject})
MATCH (a:Node {id: p.arg})
WITH s, a, COUNT { (s)<-[:SUBJECT]-() } AS ds, COUNT { (a)<-[:ARG]-() } AS da
CALL (s, a, ds, da) {
  WITH s, a WHERE ds <= da
  MATCH (s)<-[:SUBJECT]-(u:Unit)
  WHERE EXISTS { (u)-[:ARG {pos: 0}]->(a) } AND NOT (u)-[:SUPERSEDED_BY]->()
  RETURN u
  UNION
  WITH s, a WHERE ds > da
  MATCH (a)<-[:ARG {pos: 0}]-(u:Unit)
  WHERE EXISTS { (u)-[:SUBJECT]->(s) } AND NOT (u)-[:SUPERSEDED_BY]->()
  RETURN u
}
WITH DISTINCT u
RETURN u.id AS id, u.json AS json
