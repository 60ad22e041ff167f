// vectors_meta_set: record what the node vectors are embedded with.
// parameters: collection, model_name, dim
// returns: nothing
MERGE (m:KgVectorSet {ws: $ws, id: 'vectors'})
SET m.collection = $collection, m.model_name = $model_name, m.dim = $dim, m.schema = 1
