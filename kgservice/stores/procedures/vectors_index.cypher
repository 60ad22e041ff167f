// vectors_index: the HNSW vector index over :KgVector.embedding (cosine), created if absent.
// parameters: index (index name), options ({indexConfig: {`vector.dimensions`, `vector.similarity_function`, ...}})
// returns: nothing
CREATE VECTOR INDEX $index IF NOT EXISTS FOR (v:KgVector) ON v.embedding OPTIONS $options
