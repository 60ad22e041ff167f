// vectors_search: the nearest node vectors of each query vector, through the vector index.
// The index's cosine score is (1 + cosine) / 2; the caller turns it back into the cosine.
// parameters: index (index name), queries (list of vectors), candidates (neighbours asked of the index)
// The index holds every workspace's vectors: hits of another workspace are dropped here, so a
// workspace gets fewer than `candidates` hits when others crowd its neighbourhood.
// returns: q (index of the query), node_id, score (one row per hit)
UNWIND range(0, size($queries) - 1) AS q
CALL db.index.vector.queryNodes($index, $candidates, $queries[q]) YIELD node, score
WHERE node.ws = $ws
RETURN q, node.node_id AS node_id, score
