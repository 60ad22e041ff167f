// vectors_upsert: insert or replace node vectors (one row per node id, no duplicates in a batch).
// The vector goes in through db.create.setNodeVectorProperty (stored as a float32 array).
// parameters: rows (list of {id, pid, payload, vector}): node id, its point id (uuid5), the
//             payload as JSON text, the normalised vector
// returns: nothing
UNWIND $rows AS r
MERGE (v:KgVector {ws: $ws, node_id: r.id})
SET v.pid = r.pid, v.payload = r.payload
WITH v, r
CALL db.create.setNodeVectorProperty(v, 'embedding', r.vector)
