// life_documents: document records by id, or all of them (sorted by id).
// parameters: $ids (list of document ids, or null for all)
// returns: id, json (the record but its text and original), text_z (the compressed text, or null),
// original_z (the compressed file a converted document came from, or null)
MATCH (d:Document {ws: $ws})
WHERE $ids IS NULL OR d.id IN $ids
RETURN d.id AS id, d.json AS json, d.text_z AS text_z, d.original_z AS original_z
ORDER BY d.id
