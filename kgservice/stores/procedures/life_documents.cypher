// life_documents: document records by id, or all of them (sorted by id).
// parameters: $ids (list of document ids, or null for all), $text (bool: return the text),
// $original (bool: return the original file); a listing or a citation asks for neither or the
// text only, so the converted file (up to KG_DOC_TEXT_MAX_BYTES) never crosses the wire for them
// returns: id, json (the record but its text and original), text_z (the compressed text, or null),
// original_z (the compressed file a converted document came from, or null)
MATCH (d:Document {ws: $ws})
WHERE $ids IS NULL OR d.id IN $ids
RETURN d.id AS id, d.json AS json,
       CASE WHEN $text THEN d.text_z END AS text_z,
       CASE WHEN $original THEN d.original_z END AS original_z
ORDER BY d.id
