// vectors_index_info: the state and configuration of the vector index, if it exists.
// parameters: index (index name)
// returns: name, state, labels, properties, options (one row, or none)
SHOW VECTOR INDEXES YIELD name, state, labelsOrTypes, properties, options
WHERE name = $index
RETURN name, state, labelsOrTypes AS labels, properties, options
