// vectors_scan: the exact nearest node vectors of each query vector, by reading every stored
// vector (no index): what a search does while the vector index is absent or still populating
// (a bulk load or a rebuild, kgservice/stores/neo4j/vectors.py). Slow on big collections,
// never wrong. The score is on the index's scale, (1 + cosine) / 2.
// parameters: queries (list of vectors), top (hits per query)
// returns: q (index of the query), node_id, score (one row per hit)
UNWIND range(0, size($queries) - 1) AS q
CALL (q) {
  MATCH (v:KgVector {ws: $ws})
  WITH v, vector.similarity.cosine(v.embedding, $queries[q]) AS score
  ORDER BY score DESC, v.node_id
  LIMIT $top
  RETURN v.node_id AS node_id, score
}
RETURN q, node_id, score
