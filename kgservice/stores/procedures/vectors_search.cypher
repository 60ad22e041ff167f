// vectors_search: the nearest node vectors of each query vector, through the vector index.
// The index's cosine score is (1 + cosine) / 2; the caller turns it back into the cosine.
// parameters: index (index name), queries (list of vectors), candidates (neighbours asked of the index)
// returns: q (index of the query), node_id, score (one row per hit)
UNWIND range(0, size($queries) - 1) AS q
CALL db.index.vector.queryNodes($index, $candidates, $queries[q]) YIELD node, score
RETURN q, node.node_id AS node_id, score
