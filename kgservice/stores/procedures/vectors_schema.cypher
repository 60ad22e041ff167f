// vectors_schema: the node vectors of the `neo4j` vector backend (kgservice/stores/neo4j/vectors.py),
// applied idempotently when that store opens. One :KgVector per (workspace, node id) (its vector in
// `embedding`, searched through one vector index, vectors_index.cypher) and one :KgVectorSet
// recording the collection name, embedding model and dimension (vectors_meta_*.cypher).
// parameters: none. returns: nothing.
// Statements are separated by ';' at line end; each is IF NOT EXISTS.
CREATE CONSTRAINT kgvector_ws_node_id IF NOT EXISTS FOR (v:KgVector) REQUIRE (v.ws, v.node_id) IS UNIQUE;
CREATE CONSTRAINT kgvectorset_ws_id IF NOT EXISTS FOR (m:KgVectorSet) REQUIRE (m.ws, m.id) IS UNIQUE
