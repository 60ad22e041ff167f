// life_purge: delete archived units for good (kg purge), and rewrite the history records whose
// document texts are purged. Two statements.
// parameters: $units (ids of :RetractedUnit to delete), $changes (list of {id, json}: the
//             rewritten record of each change that loses texts)
UNWIND $units AS id
MATCH (r:RetractedUnit {ws: $ws, id: id})
DETACH DELETE r
RETURN count(*) AS purged;
UNWIND $changes AS ch
MATCH (c:Change {ws: $ws, id: ch.id})
SET c.json = ch.json
RETURN count(c) AS rewritten
