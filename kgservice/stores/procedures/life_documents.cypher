// life_documents: document records by id, or all of them (sorted by id).
// parameters: $ids (list of document ids, or null for all)
// returns: id, json (the record but its text), text_z (the compressed text, or null)
MATCH (d:Document)
WHERE $ids IS NULL OR d.id IN $ids
RETURN d.id AS id, d.json AS json, d.text_z AS text_z
ORDER BY d.id
