// schema_version_set: record the schema version a step brought the store to (never lowering either number).
// parameters: $version, $compat, $by (the kgservice release that wrote it)
// returns: nothing
MERGE (m:KgSchema {id: 'version'})
SET m.version = CASE WHEN coalesce(m.version, 0) < $version THEN $version ELSE m.version END,
    m.compat = CASE WHEN coalesce(m.compat, 0) < $compat THEN $compat ELSE m.compat END,
    m.updated = toString(datetime()), m.by = $by
