// vectors_index_await: wait until the vector index is online (it is populating right after it is created).
// parameters: index (index name), seconds (longest wait)
// returns: nothing
CALL db.awaitIndex($index, $seconds)
