// life_unarchive: units of a lifecycle change that are live again (an undo) leave the archive:
// the :RetractedUnit copy's FROM edges move to the live :Unit and the copy is deleted.
// Runs in the change's transaction after its new units were created.
// parameters: $ids (unit ids the change made live)
// returns: unarchived (how many)
UNWIND $ids AS id
MATCH (r:RetractedUnit {id: id})
MATCH (u:Unit {id: id})
CALL (r, u) {
  MATCH (r)-[f:FROM]->(d:Document)
  CREATE (u)-[:FROM {lines: f.lines}]->(d)
}
DETACH DELETE r
RETURN count(*) AS unarchived
