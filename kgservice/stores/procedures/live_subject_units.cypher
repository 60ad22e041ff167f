// live_subject_units: the stored units about the given subject nodes that no unit supersedes
// (ingest's duplicate check, kgservice/stores/validate.py prepare_batch).
// parameters: $ids (subject node ids)
// returns: id, json (one row per unit)
UNWIND $ids AS id
MATCH (:Node {id: id})<-[:SUBJECT]-(u:Unit)
WHERE NOT (u)-[:SUPERSEDED_BY]->()
RETURN u.id AS id, u.json AS json
