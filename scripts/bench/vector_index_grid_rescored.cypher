// vector_index_grid_rescored (scripts/bench/vector_index_grid.py): the nearest node vectors of
// each query vector, through the vector index, re-scored with the stored float32 vector: what a search runs when the index is
// quantized (its own scores are int8 approximations; the caller's threshold is on the true
// cosine). The best $top of the index's $candidates by the exact score are returned.
// The score is on the index's scale, (1 + cosine) / 2, like kgservice's vectors_search.
// parameters: index (index name), queries (list of vectors), candidates (neighbours asked of
//             the index), top (hits kept per query)
// returns: q (index of the query), node_id, score (one row per hit)
UNWIND range(0, size($queries) - 1) AS q
CALL (q) {
  CALL db.index.vector.queryNodes($index, $candidates, $queries[q]) YIELD node
  WITH node, vector.similarity.cosine(node.embedding, $queries[q]) AS score
  ORDER BY score DESC, node.node_id
  LIMIT $top
  RETURN node.node_id AS node_id, score
}
RETURN q, node_id, score
