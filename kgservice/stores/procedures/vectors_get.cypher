// vectors_get: the stored vectors (and payloads) of these node ids that are present.
// parameters: ids (list of node ids)
// returns: node_id, pid, payload (JSON text), vector
UNWIND $ids AS id
MATCH (v:KgVector {ws: $ws, node_id: id})
RETURN v.node_id AS node_id, v.pid AS pid, v.payload AS payload, v.embedding AS vector
