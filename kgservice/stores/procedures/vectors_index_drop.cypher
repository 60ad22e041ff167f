// vectors_index_drop: drop the vector index (re-created with another dimension by a recreate).
// parameters: index (index name)
// returns: nothing
DROP INDEX $index IF EXISTS
