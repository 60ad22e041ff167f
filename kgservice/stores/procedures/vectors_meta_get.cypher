// vectors_meta_get: what the node vectors were embedded with.
// parameters: none
// returns: collection, model_name, dim (one row, or none before the first open)
MATCH (m:KgVectorSet {ws: $ws, id: 'vectors'})
RETURN m.collection AS collection, m.model_name AS model_name, m.dim AS dim
