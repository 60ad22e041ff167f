// vectors_delete: remove these node ids' vectors (unknown ids are ignored).
// parameters: ids (list of node ids)
// returns: nothing
UNWIND $ids AS id
MATCH (v:KgVector {ws: $ws, node_id: id})
DETACH DELETE v
